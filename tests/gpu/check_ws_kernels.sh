#!/usr/bin/env bash
# CPU-side checks of the warp-specialised sm_90a kernels (kernels/nvidia/attention_fwd_ws.cuh;
# label nvidia_build: needs nvcc, no GPU), compiled exactly as kernels/nvidia/CMakeLists.txt does:
#   1. ptxas keeps every wgmma asynchronous: no C7513/C7514 ("wgmma.mma_async instructions are
#      serialized ...", a 2-3x slowdown when it happens) and no C7508 (setmaxnreg ignored);
#   2. no spills to local memory in any of the four kernels (producer at 56 registers, consumers 224);
#   3. the FP8 kernels issue the e4m3 wgmma for both products (m64n64k32 for S, m64n128k32 for P.V)
#      and change their register budget (setmaxnreg down and up);
#   4. LEAN's P path has no exponential: its ex2 are the per-row alphas only (2 per compiled copy
#      of the softmax, at most 8 copies), while EXACT adds one per probability (32 per copy).
# Usage: check_ws_kernels.sh <nvcc> <repo root> <flags...>
set -euo pipefail
nvcc=$1; root=$2; shift 2
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
status=0
for family in 0 1; do
  common=(-arch=sm_90a "$@" -I"$root/kernels" -DZYFA_FAMILY_E4M3=$family -DZYFA_HEAD_DIM_QK=128
          -DZYFA_HEAD_DIM_V=128 -DZYFA_DIMS_SUFFIX=d128)
  "$nvcc" -ptx "${common[@]}" -o "$work/f$family.ptx" "$root/kernels/nvidia/attention_fwd_ws_variant.cu"
  "$nvcc" -cubin "${common[@]}" -Xptxas=-v -o "$work/f$family.cubin" \
      "$root/kernels/nvidia/attention_fwd_ws_variant.cu" 2> "$work/f$family.ptxas"
done
# 1. serialisation and setmaxnreg warnings
if grep -hE 'C7513|C7514|C7508' "$work"/f*.ptxas; then
  echo "FAIL: ptxas serialises the wgmmas or ignores setmaxnreg (lines above)"; status=1
fi
# 2. spills
while read -r fn regs spill; do
  echo "$fn: $regs registers at entry, $spill bytes spilled"
  if [ "$spill" -ne 0 ]; then echo "FAIL: $fn spills $spill bytes"; status=1; fi
done < <(cat "$work"/f*.ptxas | awk '
  /Compiling entry function/ {fn = $7; gsub(/[\x27]/, "", fn)}
  /spill stores/ {spill = $5}
  /Used [0-9]+ registers/ {for (i = 1; i <= NF; i++) if ($i == "Used") print fn, $(i + 1), spill}')
# 3. e4m3 wgmma for both products, setmaxnreg
count_in() { awk -v fn="$2" -v pat="$3" '/^\.visible \.entry/{inside = index($0, fn "(") > 0} inside && $0 ~ pat {n++} END{print n+0}' "$1"; }
for fn in zyfa_attn_fwd_ws_e4m3_lean_d128 zyfa_attn_fwd_ws_e4m3_exact_d128; do
  s=$(count_in "$work/f1.ptx" $fn 'wgmma\.mma_async.*m64n64k32\.f32\.e4m3\.e4m3')
  pv=$(count_in "$work/f1.ptx" $fn 'wgmma\.mma_async.*m64n128k32\.f32\.e4m3\.e4m3')
  regs=$(count_in "$work/f1.ptx" $fn 'setmaxnreg\.(inc|dec)')
  echo "$fn: e4m3 wgmma S $s, P.V $pv; setmaxnreg $regs"
  if [ "$s" -lt 1 ] || [ "$pv" -lt 1 ]; then echo "FAIL: $fn should use the e4m3 wgmma for both products"; status=1; fi
  if [ "$regs" -lt 2 ]; then echo "FAIL: $fn should reallocate registers (setmaxnreg dec and inc)"; status=1; fi
done
# 4. exponentials
lean=$(count_in "$work/f1.ptx" zyfa_attn_fwd_ws_e4m3_lean_d128 'ex2\.')
exact=$(count_in "$work/f1.ptx" zyfa_attn_fwd_ws_e4m3_exact_d128 'ex2\.')
echo "ex2 in PTX: ws e4m3 LEAN $lean, ws e4m3 EXACT $exact"
if [ "$lean" -lt 2 ] || [ "$lean" -gt 16 ] || [ $((lean % 2)) -ne 0 ]; then
  echo "FAIL: the LEAN kernel should hold only the alphas (2 per softmax copy, <= 8 copies), has $lean"; status=1
fi
if [ "$exact" -lt $((16 * lean)) ]; then
  echo "FAIL: the EXACT kernel should hold >= 32 ex2 per softmax copy ($((16 * lean))), has $exact"; status=1
fi
exit $status
