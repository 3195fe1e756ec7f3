#!/usr/bin/env bash
# On the device machine (the H200, through the device tool, carry [".device-deps"]), from the
# repository root: the loop of the warp-specialised kernels' work (kernels/nvidia/attention_fwd_ws.cuh).
# Builds what it needs (sm_90a cubins only, no AMD), then in order, each under a timeout:
#   1. a one-case sanity check of every mode through zyfa-bench (fp64 check, small causal shape);
#   2. the A/B timing tools/gpu/ws_ab_timing.py (the ws kernels of this build and of the --variant
#      builds, Triton FP8 and cuDNN anchors);
#   3. the gpu tier tests named by --tests (a ctest -R regex; default: the ws and accuracy tests).
# Logs under $OUT (build.log, ab.log, ctest.log).
# Usage: time-ws-kernel.sh [--budget SECONDS] [--seqlens "4096 16384"] [--tests REGEX] [--no-tests]
#                          [--variant LABEL NVCC_FLAG]... [--variant-lib LABEL LIBRARY]... [--defines "-DX=1 ..."]
# --defines builds the main build (the one the tests run on) with these defines for the host code and
# the kernels alike (switches both read).
# --variant builds libzyfa.so again in build-gpu-LABEL with NVCC_FLAG added to the kernels' nvcc
# flags (e.g. pp0 -DZYFA_WS_PINGPONG=0) and times it beside the default build; --variant-lib times
# a library built elsewhere (say, an earlier commit's tree) the same way.
set -uo pipefail
budget=400
seqlens="4096 16384"
tests='gpu_ws_kernel|gpu_attention_vs_cpu|gpu_p_code'
run_tests=1
variants=()
variant_libs=()
defines=""
while [[ $# -gt 0 ]]; do
  case $1 in
    --budget) budget=$2; shift ;;
    --seqlens) seqlens=$2; shift ;;
    --tests) tests=$2; shift ;;
    --no-tests) run_tests=0 ;;
    --variant) variants+=("$2" "$3"); shift 2 ;;
    --variant-lib) variant_libs+=("$2=$3"); shift 2 ;;
    --defines) defines=$2; shift ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
OUT=${OUT:-/tmp/zyfa-out}
mkdir -p "$OUT"
start=$(date +%s)
left() { echo $((start + budget - $(date +%s))); }
export PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
build=build-gpu
deps=/tmp/zyfa-device-deps
if ! { command -v pkg-config >/dev/null && pkg-config --exists cmocka; }; then
  rm -rf "$deps" && mkdir -p "$deps"
  for deb in .device-deps/*.deb; do dpkg -x "$deb" "$deps"; done
  pcdir=$deps/usr/lib/x86_64-linux-gnu/pkgconfig
  sed -i "s#/usr#$deps/usr#g" "$pcdir/cmocka.pc"
  export PKG_CONFIG_PATH=$pcdir LD_LIBRARY_PATH=$deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  command -v pkg-config >/dev/null || export PATH=$deps/usr/bin:$PATH
fi
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
nvcc_flags="-O3;-std=c++17;-fmad=false;-Xptxas=-warn-spills;-Xptxas=-warn-lmem-usage"
main_flags=()
if [[ -n $defines ]]; then
  main_flags=("-DCMAKE_CXX_FLAGS=$defines" "-DZYFA_NVCC_FLAGS=$nvcc_flags;${defines// /;}")
  echo "main build defines: $defines"
fi
cmake -S . -B $build -DCMAKE_BUILD_TYPE=Release -DZYFA_WERROR=ON -DZYFA_CUDA=ON -DZYFA_AMD=OFF -DZYFA_CUDA_ARCHS=sm_90a \
  "${main_flags[@]}" > "$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
cmake --build $build -j"$(nproc)" --target zyfa zyfa-bench gpu_ws_kernel gpu_attention_vs_cpu_and_reference \
  gpu_p_code_agreement gpu_determinism_and_graph gpu_sanitizer_case >> "$OUT/build.log" 2>&1 ||
  { grep -E "error|Error" "$OUT/build.log" | head -30; exit 1; }
echo "build: $(( $(date +%s) - start )) s"
grep -A3 "attn_fwd_ws" "$OUT/build.log" | grep -E "registers|spill" | head -16
variant_args=()
for ((i = 0; i < ${#variants[@]}; i += 2)); do
  label=${variants[i]} flag=${variants[i+1]}
  cmake -S . -B $build-$label -DCMAKE_BUILD_TYPE=Release -DZYFA_CUDA=ON -DZYFA_AMD=OFF -DZYFA_CUDA_ARCHS=sm_90a \
    -DZYFA_BUILD_TESTS=OFF -DZYFA_BUILD_TOOLS=OFF "-DZYFA_NVCC_FLAGS=$nvcc_flags;$flag" >> "$OUT/build.log" 2>&1 &&
    cmake --build $build-$label -j"$(nproc)" --target zyfa >> "$OUT/build.log" 2>&1 &&
    cp $build-$label/libzyfa.so /tmp/libzyfa_$label.so && variant_args+=(--variant "$label=/tmp/libzyfa_$label.so")
  echo "variant $label ($flag): built at $(( $(date +%s) - start )) s"
done
for lib in "${variant_libs[@]}"; do variant_args+=(--variant "$lib"); done
bench=$build/tools/zyfa-bench/zyfa-bench
[[ -x $bench ]] || bench=$(find $build -name zyfa-bench -type f -perm -u+x | head -1)
echo "== 1. sanity: causal b1 h4 s700 hd128 vs fp64 (every mode runs the ws kernels)"
for mode in "--dtype fp8 --softmax lean" "--dtype fp8 --softmax exact" "--dtype bf16" "--dtype fp16"; do
  ZYFA_LOG=info timeout 60 $bench --backend cuda $mode --batch 1 --heads 4 --seqlen 700 \
    --repeats 1 2>&1 | tail -3
done
echo "== 2. A/B timing ($(( $(date +%s) - start )) s)"
timeout $(( $(left) - 30 )) python3 tools/gpu/ws_ab_timing.py $build/libzyfa.so "${variant_args[@]}" $seqlens > "$OUT/ab.log" 2>&1
echo "ab rc $?"
grep -v Warning "$OUT/ab.log" | tail -40
if ((run_tests)) && (( $(left) > 60 )); then
  echo "== 3. tests '$tests' ($(( $(date +%s) - start )) s)"
  timeout $(( $(left) - 10 )) ctest --test-dir $build -L '^gpu$' -R "$tests" -V -j3 --timeout 200 > "$OUT/ctest.log" 2>&1
  echo "ctest rc $?"
  grep -E "tests passed|tests failed|\*\*\*Failed|FAILED  \]|Passed|Skipped" "$OUT/ctest.log" | sort -u | head -20
  grep -E "ws |ratio|P mismatches|LEAN P codes|_ws_" "$OUT/ctest.log" | grep -E "FAIL|ratio|mismatches|codes|default" |
    sed 's/^[0-9]*: //' | head -30
fi
echo "total $(( $(date +%s) - start )) s"
