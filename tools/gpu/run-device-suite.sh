#!/usr/bin/env bash
# Everything zyfa checks and measures on an NVIDIA GPU, in one call of the device machine:
#   0. the cudnn frontend wheel from .device-deps/wheels/ (when carried), installed under
#      /tmp/zyfa-pydeps for the benchmark's cuDNN FP8 row;
#   1. CMocka (and pkg-config if missing) from the Debian packages carried in .device-deps/,
#      unpacked under /tmp (never into /);
#   2. configure and build build-gpu/ with the NVIDIA backend (nvcc there), Release, -Werror;
#   3. ctest -L gpu, verbose (every case prints its figures), then the other labels;
#   4. bench/run_benchmark.py: zyfa vs cuDNN / flash SDPA (BF16), the Triton FP8 kernel and cuDNN
#      FP8 (e4m3 out; skipped, with one line, without the frontend), CSV;
#   5. bench/plot_results.py: the PNG, when matplotlib is there.
# Files land in $OUT (at most 8 come back, none deeper than 2 folders): suite.log (environment and
# summary), build.log, ctest-gpu.log, ctest-other.log, bench.log, bench.csv, bench.png.
#
# Usage (what the lead passes to the device tool's run, with carry [".device-deps"]; fill it with
# tools/gpu/fetch-device-deps.sh first):
#   tools/gpu/run-device-suite.sh [--quick] [--no-bench] [--no-other] [--gpu-tests REGEX] [--budget SECONDS]
#   --quick     correctness first: the gpu tier only, and a two-row benchmark
#   --gpu-tests the gpu tests whose names match REGEX only (ctest -R; a lease too short for the
#               whole tier: name what a change touches, and say which ran)
#   --no-bench  skip steps 4 and 5
#   --no-other  skip the other labels of step 3 (a short device lease: gpu tier and benchmark only)
#   --budget    wall-clock budget for the whole script (default 540 s: the tool's limit is 600)
# Exit status: 0 only when every step ran and passed and no gpu test was skipped (a skip on a
# GPU machine means the tier did not run, which is a failure here).
set -uo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo" || exit 1

quick=0
bench=1
other=1
budget=540
gpu_tests=
while [[ $# -gt 0 ]]; do
  case $1 in
    --quick) quick=1 ;;
    --no-bench) bench=0 ;;
    --no-other) other=0 ;;
    --budget) budget=$2; shift ;;
    --gpu-tests) gpu_tests=$2; shift ;;
    -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done

OUT=${OUT:-$repo/device-out}
mkdir -p "$OUT"
build=$repo/build-gpu
jobs=$(nproc 2>/dev/null || echo 16)
start=$(date +%s)
deadline=$((start + budget))
summary=()
failed=0
export PATH=$PATH:/usr/local/cuda/bin
export PYTHONUNBUFFERED=1

log() { echo "$*" | tee -a "$OUT/suite.log"; }
left() { echo $((deadline - $(date +%s))); }
# step NAME CAP_SECONDS LOGFILE COMMAND...: runs with a timeout of min(CAP, time left - 20 s).
step() {
  local name=$1 cap=$2 logfile=$3 t0 rc limit
  shift 3
  limit=$(left)
  limit=$((limit - 20))
  ((limit > cap)) && limit=$cap
  if ((limit < 10)); then
    summary+=("$(printf '%-34s %-8s' "$name" "no time")")
    failed=1
    return 1
  fi
  log "=== $name (limit ${limit}s) -> $(basename "$logfile")"
  t0=$(date +%s)
  timeout "$limit" "$@" >>"$logfile" 2>&1
  rc=$?
  local status=ok
  ((rc == 124)) && status=TIMEOUT
  ((rc != 0 && rc != 124)) && status="FAILED($rc)"
  [[ $status != ok ]] && failed=1
  summary+=("$(printf '%-34s %-10s %5ss' "$name" "$status" $(($(date +%s) - t0)))")
  return $rc
}

# --- environment ---------------------------------------------------------------------------------
{
  echo "zyfa device suite, $(date -u +%Y-%m-%dT%H:%M:%SZ), mode: $([[ $quick -eq 1 ]] && echo quick || echo full)"
  echo "git: $(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown) $(git -C "$repo" status --porcelain 2>/dev/null | wc -l) changed files"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,power.limit --format=csv 2>&1
  nvcc --version 2>&1 | tail -2
  cmake --version | head -1
  python3 -c 'import torch, triton; print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version(), "triton", triton.__version__)' 2>&1
  echo "cores: $jobs"
} >>"$OUT/suite.log" 2>&1

# --- 0. the cudnn frontend (Python module cudnn) from a carried wheel --------------------------------
# Installed under /tmp (the image's own site-packages stay as they are) and put on PYTHONPATH for
# the benchmark only. --no-deps: the image has torch and nvidia-cudnn-cu13 (the cuDNN library).
pydeps=/tmp/zyfa-pydeps
bench_env=()
cudnn_line="cudnn frontend: not installed"
# The frontend dlopens libcudnn, looking in LD_LIBRARY_PATH first, then python's purelib
# nvidia/cudnn/lib, then the system's: the folder of the copy torch loaded goes first, so that the
# process holds one cuDNN and both cuDNN rows run the same library.
find_cudnn_lib='
import glob, os
import torch
torch.backends.cudnn.version()  # loads libcudnn where importing torch did not
for line in open("/proc/self/maps"):
    path = line.split()[-1]
    if os.path.basename(path).startswith("libcudnn.so"):
        print(os.path.dirname(path))
        break
else:
    import nvidia.cudnn
    for p in nvidia.cudnn.__path__:
        if glob.glob(os.path.join(p, "lib", "libcudnn.so*")):
            print(os.path.join(p, "lib"))
            break
'
if compgen -G "$repo/.device-deps/wheels/nvidia_cudnn_frontend-*.whl" >/dev/null; then
  rm -rf "$pydeps"
  if python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$pydeps" \
       "$repo"/.device-deps/wheels/nvidia_cudnn_frontend-*.whl >>"$OUT/suite.log" 2>&1; then
    cudnn_lib=$(python3 -c "$find_cudnn_lib" 2>>"$OUT/suite.log")
    bench_env=(env "PYTHONPATH=$pydeps${PYTHONPATH:+:$PYTHONPATH}")
    [[ -n $cudnn_lib ]] && bench_env+=("LD_LIBRARY_PATH=$cudnn_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
    log "cudnn frontend installed under $pydeps; libcudnn folder: ${cudnn_lib:-not found (the frontend searches itself)}"
    cudnn_line=$("${bench_env[@]}" python3 -c 'import torch, cudnn; print("cudnn frontend", cudnn.__version__, "backend", cudnn.backend_version(), "(" + cudnn.backend_version_string() + "), torch cudnn", torch.backends.cudnn.version())' 2>&1 | tail -1)
    log "$cudnn_line"
  else
    log "cudnn frontend wheel did not install (pip's output in suite.log): the cudnn_fp8 row will be skipped"
  fi
else
  log "no .device-deps/wheels/nvidia_cudnn_frontend-*.whl carried (tools/gpu/fetch-device-deps.sh): the cudnn_fp8 row will be skipped"
fi

# --- 1. CMocka (and pkg-config) from carried Debian packages --------------------------------------
deps=/tmp/zyfa-device-deps
if ! { command -v pkg-config >/dev/null && pkg-config --exists cmocka; }; then
  if ! ls "$repo"/.device-deps/*.deb >/dev/null 2>&1; then
    log "no CMocka here and no .device-deps/*.deb carried: run 'apt-get download libcmocka0 libcmocka-dev pkgconf pkgconf-bin libpkgconf3' into .device-deps/ and carry it"
    exit 1
  fi
  rm -rf "$deps" && mkdir -p "$deps"
  for deb in "$repo"/.device-deps/*.deb; do dpkg -x "$deb" "$deps"; done
  pcdir=$deps/usr/lib/x86_64-linux-gnu/pkgconfig
  sed -i "s#/usr#$deps/usr#g" "$pcdir/cmocka.pc"
  export PKG_CONFIG_PATH=$pcdir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
  export LD_LIBRARY_PATH=$deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  if ! command -v pkg-config >/dev/null; then
    export PATH=$deps/usr/bin:$PATH  # pkgconf's pkg-config link
  fi
  log "CMocka from .device-deps: $(pkg-config --modversion cmocka 2>&1) via $(command -v pkg-config)"
fi

# --- 2. configure and build ----------------------------------------------------------------------
if step "configure build-gpu (CUDA, Werror)" 120 "$OUT/build.log" \
     cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=Release -DZYFA_WERROR=ON -DZYFA_CUDA=ON &&
   step "build build-gpu (-j$jobs)" 300 "$OUT/build.log" cmake --build "$build" -j "$jobs"; then
  built=1
  grep -E 'zyfa: (NVIDIA|embedded)' "$OUT/build.log" | tee -a "$OUT/suite.log"
else
  built=0
fi

# --- 3. smoke: one small causal case per kernel family, 30 s each; a kernel that hangs or fails
# here would only spend the tests' and the benchmark's time ------------------------------------------
if ((built)); then
  zbench=$build/tools/zyfa-bench/zyfa-bench
  [[ -x $zbench ]] || zbench=$(find "$build" -name zyfa-bench -type f -perm -u+x | head -1)
  for mode in "--dtype fp8 --softmax lean" "--dtype fp8 --softmax exact" "--dtype bf16"; do
    if ! step "smoke: zyfa-bench $mode" 30 "$OUT/smoke.log" "$zbench" --backend cuda $mode --batch 1 --heads 4 \
         --seqlen 700 --repeats 1; then
      built=0
      log "smoke failed ($mode): tests and benchmark skipped; smoke.log has the output"
      tail -5 "$OUT/smoke.log" | tee -a "$OUT/suite.log"
      break
    fi
  done
fi

# --- 4. tests --------------------------------------------------------------------------------------
if ((built)); then
  step "ctest -L gpu" 330 "$OUT/ctest-gpu.log" \
    ctest --test-dir "$build" -L '^gpu$' ${gpu_tests:+-R "$gpu_tests"} -V --no-tests=error --timeout 320 -j 3
  skipped=$(grep -c '\*\*\*Skipped' "$OUT/ctest-gpu.log")
  if ((skipped > 0)); then
    failed=1
    summary+=("$(printf '%-34s %s' "gpu tests skipped on a GPU machine" "$skipped (FAILED)")")
    grep '^[0-9]*: SKIP' "$OUT/ctest-gpu.log" | tee -a "$OUT/suite.log"
  fi
  if ((!quick && other)); then
    step "ctest other labels (not gpu, install)" 150 "$OUT/ctest-other.log" \
      ctest --test-dir "$build" -LE '^(gpu|install)$' --output-on-failure -j "$jobs" --timeout 140
  fi
fi

# --- 5. benchmark, 6. plot ---------------------------------------------------------------------------
if ((bench && built)); then
  bench_args=(--library "$build/libzyfa.so" --csv "$OUT/bench.csv")
  ((quick)) && bench_args+=(--quick)
  step "benchmark" 330 "$OUT/bench.log" ${bench_env[@]+"${bench_env[@]}"} python3 "$repo/bench/run_benchmark.py" "${bench_args[@]}"
  if [[ -s $OUT/bench.csv ]]; then
    if python3 -c 'import matplotlib' 2>/dev/null; then
      step "plot" 60 "$OUT/bench.log" python3 "$repo/bench/plot_results.py" "$OUT/bench.csv" "$OUT/bench.png"
    else
      summary+=("plot                               skipped (no matplotlib: render bench.csv elsewhere)")
    fi
  fi
fi

# --- summary (printed last: the tool returns the end of the output) --------------------------------
{
  echo
  echo "=== gpu tests"
  grep -E '^ *[0-9]+/[0-9]+ Test' "$OUT/ctest-gpu.log" 2>/dev/null
  grep -E 'tests passed|tests failed' "$OUT/ctest-gpu.log" 2>/dev/null
  grep -E 'P mismatches|LEAN P codes differing|launches:|graph replay|memcheck:|racecheck:' "$OUT/ctest-gpu.log" 2>/dev/null |
    sed 's/^[0-9]*: //' | head -40
  if [[ -s $OUT/ctest-other.log ]]; then
    echo "=== other labels"
    grep -E 'tests passed|tests failed|Failed|\*\*\*' "$OUT/ctest-other.log"
  fi
  if [[ -s $OUT/bench.log ]]; then
    echo "=== benchmark"
    echo "$cudnn_line"
    grep -E '^cuDNN FP8 \(e4m3 out\) via|^cudnn_fp8 skipped|^ +cudnn_fp8 +(rel RMS|unavailable|check on|failed|error)' "$OUT/bench.log" | head -12
    sed -n '/^== results/,$p' "$OUT/bench.log"
  fi
  echo "=== steps"
  printf '%s\n' "${summary[@]}"
  printf '%-34s %-10s %5ss\n' total "$([[ $failed -eq 0 ]] && echo ok || echo FAILED)" $(($(date +%s) - start))
} | tee -a "$OUT/suite.log"
exit $failed
