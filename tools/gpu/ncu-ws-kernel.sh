#!/usr/bin/env bash
# On the device machine (Firecracker runtime: ncu reads the hardware counters there), after a build
# in BUILD (default build-gpu): Nsight Compute on one launch of the warp-specialised kernel,
# FP8 LEAN and BF16, causal head dim 128 (or 256), batch 2, 16 heads, 4K tokens (zyfa-bench's inputs;
# --seqlen N for another length).
# Writes $OUT/ncu_<mode>.txt (speed of light, scheduler and warp-state statistics, instruction
# mix) and $OUT/ncu_<mode>_sass.csv (per-instruction issue and stall samples of the kernel's SASS).
# Clocks are left alone (--clock-control none: the device machine's clock settings stay as they are).
# Also $OUT/ncu_<mode>_balance.txt: instructions executed and issue-active cycles per SM
# sub-partition, min / avg / max over all of them (a sub-partition is warp id % 4, so a role that
# sits on some sub-partitions only shows as max above avg).
# Usage: ncu-ws-kernel.sh [--seqlen N] [BUILD [MODE...]]   MODE: lean, exact (FP8 EXACT), bf16, lean_256,
# bf16_256 (head dim 256), lean_p16, lean_p256 (FP8 LEAN with K and V in pages of 16 or 256 keys;
# default lean and bf16)
set -uo pipefail
seqlen=4096
if [[ ${1:-} == --seqlen ]]; then
  seqlen=$2
  shift 2
fi
build=${1:-build-gpu}
shift || true
wanted=${*:-lean bf16}
OUT=${OUT:-/tmp/zyfa-out}
mkdir -p "$OUT"
bench=$build/tools/zyfa-bench/zyfa-bench
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
[[ -n $ncu && -x $bench ]] || { echo "ncu ($ncu) or $bench missing"; exit 1; }
for mode in "lean:--dtype fp8 --softmax lean" "exact:--dtype fp8 --softmax exact" "bf16:--dtype bf16" "lean_256:--dtype fp8 --softmax lean --head-dim 256" \
            "bf16_256:--dtype bf16 --head-dim 256" "lean_p16:--dtype fp8 --softmax lean --page-size 16" \
            "lean_p256:--dtype fp8 --softmax lean --page-size 256"; do
  label=${mode%%:*} args=${mode#*:}
  [[ " $wanted " == *" $label "* ]] || continue
  common=(--clock-control none -k regex:attn_fwd_ws -c 1)
  # shellcheck disable=SC2086
  timeout 150 "$ncu" "${common[@]}" --section SpeedOfLight --section SchedulerStats --section WarpStateStats \
    --section ComputeWorkloadAnalysis --section InstructionStats --section MemoryWorkloadAnalysis \
    $bench --backend cuda $args --mask causal --batch 2 --heads 16 --seqlen "$seqlen" --repeats 1 --no-check \
    > "$OUT/ncu_$label.txt" 2>&1
  echo "ncu $label rc $?"
  # shellcheck disable=SC2086
  timeout 150 "$ncu" "${common[@]}" --section SourceCounters --page source --print-source sass --csv \
    $bench --backend cuda $args --mask causal --batch 2 --heads 16 --seqlen "$seqlen" --repeats 1 --no-check \
    > "$OUT/ncu_${label}_sass.csv" 2>&1
  echo "ncu $label sass rc $?"
  # shellcheck disable=SC2086
  timeout 150 "$ncu" "${common[@]}" \
    --metrics smsp__inst_executed.min,smsp__inst_executed.avg,smsp__inst_executed.max,smsp__issue_active.min,smsp__issue_active.avg,smsp__issue_active.max \
    $bench --backend cuda $args --mask causal --batch 2 --heads 16 --seqlen "$seqlen" --repeats 1 --no-check \
    > "$OUT/ncu_${label}_balance.txt" 2>&1
  echo "ncu $label balance rc $?"
  grep -E "smsp__" "$OUT/ncu_${label}_balance.txt" | head -6
  grep -E "Duration|Issue Slots Busy|Issued Warp|No Eligible|Active Warps|Eligible Warps|Warp Cycles Per Issued|Compute \(SM\) Throughput|Memory Throughput|Executed Ipc" "$OUT/ncu_$label.txt" | head -20
done
