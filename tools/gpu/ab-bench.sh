#!/usr/bin/env bash
# A/B timing of zyfa builds with zyfa-bench, one process per run, the builds alternating inside each
# round (the method of docs/hopper-kernel-notes.md since 2026-12-04: a same-process-state comparison
# at the boost clock that --repeats 10 measures; it ranks changes, its absolute figures are not the
# steady-state ones of bench/run_benchmark.py).
#
#   here:       tools/gpu/ab-bench.sh prepare NAME=GIT_REF [NAME=GIT_REF]...
#                 writes each ref's sources (what the library and zyfa-bench need) to .ab/NAME/
#                 (git-ignored); then call the device tool with carry [".ab"] (and ".device-deps"
#                 when the same call runs the gpu tier)
#   on the GPU: tools/gpu/ab-bench.sh run [--rounds N] [--repeats N] [--shape "ZYFA-BENCH ARGS"]...
#                 builds the working tree ("head") and every .ab/NAME for sm_90a (zyfa-bench only,
#                 in parallel), then runs every shape on every build, N rounds; prints and writes
#                 $OUT/ab.csv (round, shape, build, TFLOP/s) and $OUT/ab.log (default: ./ab-out/)
# Default shapes: FP8 LEAN 16K (batch 2) and 32K (batch 1), FP8 EXACT 16K, BF16 16K, causal hd128,
# 16 heads.
#   on the GPU: tools/gpu/ab-bench.sh steady [SEQLEN]...
#                 the same builds, then tools/gpu/ws_ab_timing.py in one process: FP8 LEAN, FP8 EXACT
#                 and BF16 of head and of every .ab/NAME, each after 1 s of back-to-back launches (the
#                 power-capped steady clock), beside the anchors (causal hd128, 32K tokens, 16 heads;
#                 default 1024 16384 32768); $OUT/ab-steady.log. Run it twice in a call: in one
#                 session's calls (docs/performance.md, 2026-12-05T16:28Z) it gave the same sign in
#                 both passes for every row, where `run` moved unchanged kernels by up to 5% a round.
set -uo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo" || exit 1
sources=(kernels src include bench tools cmake CMakeLists.txt zyfa.pc.in)

usage() { sed -n "2,23p" "$0"; exit 2; }
[[ $# -ge 1 ]] || usage
verb=$1
shift

if [[ $verb == prepare ]]; then
  [[ $# -ge 1 ]] || usage
  for pair in "$@"; do
    name=${pair%%=*}
    ref=${pair#*=}
    [[ $name =~ ^[A-Za-z0-9_-]+$ && $name != head && $ref != "$pair" ]] || { echo "bad NAME=REF: $pair" >&2; exit 2; }
    git rev-parse --verify -q "$ref^{commit}" >/dev/null || { echo "not a commit: $ref" >&2; exit 2; }
    rm -rf ".ab/$name"
    mkdir -p ".ab/$name"
    git archive "$ref" -- "${sources[@]}" | tar -x -C ".ab/$name" || exit 1
    # The AMD code objects (11 MB a copy) are never read by these sm_90a builds; dropping them keeps
    # several copies and .device-deps within the device tool's 64 MiB carry.
    rm -rf ".ab/$name"/kernels/amd/*/prebuilt
    echo "$name = $(git rev-parse --short "$ref") -> .ab/$name ($(du -sh ".ab/$name" | cut -f1))"
  done
  exit 0
fi
[[ $verb == run || $verb == steady ]] || usage

rounds=2
repeats=10
shapes=()
seqlens=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --rounds) [[ $verb == run ]] || usage; rounds=$2; shift ;;
    --repeats) [[ $verb == run ]] || usage; repeats=$2; shift ;;
    --shape) [[ $verb == run ]] || usage; shapes+=("$2"); shift ;;
    *) [[ $verb == steady && $1 =~ ^[0-9]+$ ]] || usage; seqlens+=("$1") ;;
  esac
  shift
done
((${#seqlens[@]} > 0)) || seqlens=(1024 16384 32768)
if ((${#shapes[@]} == 0)); then
  shapes=("--softmax lean --batch 2 --heads 16 --seqlen 16384"
          "--softmax lean --batch 1 --heads 16 --seqlen 32768"
          "--softmax exact --batch 2 --heads 16 --seqlen 16384"
          "--dtype bf16 --batch 2 --heads 16 --seqlen 16384")
fi
OUT=${OUT:-$repo/ab-out}
mkdir -p "$OUT"
export PATH=$PATH:/usr/local/cuda/bin
names=(head)
dirs=("$repo")
for d in .ab/*/; do
  [[ -d $d ]] || continue
  names+=("$(basename "$d")")
  dirs+=("$repo/$d")
done
jobs=$(( $(nproc 2>/dev/null || echo 16) / ${#names[@]} ))
((jobs < 1)) && jobs=1
start=$(date +%s)
for i in "${!names[@]}"; do
  (cmake -S "${dirs[$i]}" -B "/tmp/zyfa-ab-${names[$i]}" -DCMAKE_BUILD_TYPE=Release -DZYFA_CUDA_ARCHS=sm_90a \
         -DZYFA_BUILD_TESTS=OFF -DZYFA_AMD=OFF && \
   cmake --build "/tmp/zyfa-ab-${names[$i]}" -j "$jobs" --target zyfa-bench zyfa) > "$OUT/build-${names[$i]}.log" 2>&1 &
done
wait
for n in "${names[@]}"; do
  if [[ ! -x /tmp/zyfa-ab-$n/tools/zyfa-bench/zyfa-bench || ! -e /tmp/zyfa-ab-$n/libzyfa.so ]]; then
    echo "build $n failed: $OUT/build-$n.log" | tee -a "$OUT/ab.log"
    tail -5 "$OUT/build-$n.log"
    exit 1
  fi
done
echo "builds: ${names[*]} in $(( $(date +%s) - start )) s" | tee -a "$OUT/ab.log"
nvidia-smi --query-gpu=name,clocks.sm,power.limit --format=csv,noheader | tee -a "$OUT/ab.log"
if [[ $verb == steady ]]; then
  variants=()
  for n in "${names[@]:1}"; do variants+=(--variant "$n=/tmp/zyfa-ab-$n/libzyfa.so"); done
  python3 tools/gpu/ws_ab_timing.py /tmp/zyfa-ab-head/libzyfa.so "${variants[@]}" "${seqlens[@]}" 2>&1 |
    tee "$OUT/ab-steady.log"
  status=${PIPESTATUS[0]}
  echo "total $(( $(date +%s) - start )) s" | tee -a "$OUT/ab.log"
  exit "$status"
fi
echo "round,shape,build,tflops" > "$OUT/ab.csv"
for ((round = 1; round <= rounds; ++round)); do
  for shape in "${shapes[@]}"; do
    for n in "${names[@]}"; do
      # shellcheck disable=SC2086  # the shape is a list of zyfa-bench arguments
      row=$("/tmp/zyfa-ab-$n/tools/zyfa-bench/zyfa-bench" --backend cuda --mask causal --repeats "$repeats" \
            --no-check $shape 2>&1 | tail -1)
      tflops=$(awk '{print $(NF-2)}' <<< "$row")
      echo "$round | $shape | $n | $row" | tee -a "$OUT/ab.log"
      echo "$round,\"$shape\",$n,$tflops" >> "$OUT/ab.csv"
    done
  done
done
echo "total $(( $(date +%s) - start )) s" | tee -a "$OUT/ab.log"
