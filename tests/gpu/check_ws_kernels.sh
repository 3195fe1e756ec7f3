#!/usr/bin/env bash
# CPU-side checks of the warp-specialised sm_90a kernels (kernels/nvidia/attention_fwd_ws.cuh;
# label nvidia_build: needs nvcc, no GPU), compiled exactly as kernels/nvidia/CMakeLists.txt does,
# for head dims 128, 192/128, 64 and 256 (four kernels each):
#   1. ptxas keeps every wgmma asynchronous: no C7512/C7513/C7514 ("wgmma.mma_async instructions are
#      serialized ...", a 2-3x slowdown when it happens) and no C7508 (setmaxnreg ignored);
#   2. no spills to local memory in any kernel (producer at 56 registers, consumers 224; head dim
#      256: 40 and 232; 128-key blocks: 24 and 240);
#   3. the FP8 kernels issue the e4m3 wgmma for both products (S: the m64n64/m64n128 ones from the
#      kernel's "zyfa-ws-score-product" PTX comment to the next commit; P.V: the other m64nN ones)
#      and LEAN an e4m3 wgmma for its row sums (m64n8k32 against a ones tile, one per P.V k-step,
#      i.e. one per P.V wgmma and half as many at head dim 256, whose k-steps are two m64n128
#      products; issued with the next block's scores or the last P.V), EXACT none, and change their
#      register budget
#      (setmaxnreg down and up);
#   4. LEAN's P path has no exponential: its ex2 are the per-row alphas only (2 per compiled copy
#      of the softmax, at most 8 copies), while EXACT adds one per probability (32 per copy);
#   5. every score product takes head_dim_qk * bytes / 32 wgmma k-steps, so 192/128 issues 1.5x
#      128's k-steps (a k-step count left at 128's would fail here);
#   6. the INT8 Q/K kernels (family 2, head dims 128 and 64; checks 1 and 2 include them): every
#      score product is head_dim_qk / 32 s8 wgmmas (m64nNk32.s32.s8.s8), P.V the e4m3 wgmma, LEAN's
#      row sums one m64n8k32 e4m3 wgmma per P.V wgmma and EXACT none, LEAN's exponentials the alphas only;
#   7. the paged kernels (ws_paged, families 0 and 1, head dim 128): check 1, and their spills within
#      kPagedSpillBound bytes (the paged producer's copy loops at 24 registers spill 12-32 bytes with
#      nvcc 13, docs/hopper-kernel-notes.md; more is a regression to look at);
#   8. the key-bias kernels (ws_bias, family 1, head dims 128 and 64): check 1, the e4m3 wgmma for
#      both products, and their spills within kBiasSpillBound bytes (FP8 EXACT at head dim 64 spills
#      40 bytes with nvcc 13, in the set-up, the producer and the epilogue; none in the consumer's
#      loop: docs/hopper-kernel-notes.md).
# Usage: check_ws_kernels.sh <nvcc> <repo root> <flags...>
set -euo pipefail
nvcc=$1; root=$2; shift 2
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
status=0
# dims suffix | head_dim_qk | head_dim_v
dims_list=("d128 128 128" "d192_128 192 128" "d64 64 64" "d256 256 256")
for dims in "${dims_list[@]}"; do
  read -r suffix dqk dv <<< "$dims"
  for family in 0 1; do
    common=(-arch=sm_90a "$@" -I"$root/kernels" -DZYFA_FAMILY_E4M3=$family -DZYFA_HEAD_DIM_QK=$dqk
            -DZYFA_HEAD_DIM_V=$dv -DZYFA_DIMS_SUFFIX=$suffix)
    "$nvcc" -ptx "${common[@]}" -o "$work/f${family}_$suffix.ptx" "$root/kernels/nvidia/attention_fwd_ws_variant.cu"
    "$nvcc" -cubin "${common[@]}" -Xptxas=-v -o "$work/f${family}_$suffix.cubin" \
        "$root/kernels/nvidia/attention_fwd_ws_variant.cu" 2> "$work/f${family}_$suffix.ptxas"
  done
done
# The INT8 Q/K kernels (attention_kernel_variants.def: i8e4m3, d128 and d64).
int8_dims=("d128 128 128" "d64 64 64")
for dims in "${int8_dims[@]}"; do
  read -r suffix dqk dv <<< "$dims"
  common=(-arch=sm_90a "$@" -I"$root/kernels" -DZYFA_FAMILY_E4M3=2 -DZYFA_HEAD_DIM_QK=$dqk
          -DZYFA_HEAD_DIM_V=$dv -DZYFA_DIMS_SUFFIX=$suffix)
  "$nvcc" -ptx "${common[@]}" -o "$work/f2_$suffix.ptx" "$root/kernels/nvidia/attention_fwd_ws_variant.cu"
  "$nvcc" -cubin "${common[@]}" -Xptxas=-v -o "$work/f2_$suffix.cubin" \
      "$root/kernels/nvidia/attention_fwd_ws_variant.cu" 2> "$work/f2_$suffix.ptxas"
done
# The paged kernels (attention_kernel_variants.def: ws_paged, head dim 128).
kPagedSpillBound=32
for family in 0 1; do
  "$nvcc" -cubin -arch=sm_90a "$@" -I"$root/kernels" -DZYFA_FAMILY_E4M3=$family -DZYFA_WS_PAGED=1 \
      -DZYFA_HEAD_DIM_QK=128 -DZYFA_HEAD_DIM_V=128 -DZYFA_DIMS_SUFFIX=d128 -Xptxas=-v \
      -o "$work/p${family}_d128.cubin" "$root/kernels/nvidia/attention_fwd_ws_variant.cu" 2> "$work/p${family}_d128.ptxas"
done
# The key-bias kernels (attention_kernel_variants.def: ws_bias, e4m3, head dims 128 and 64).
kBiasSpillBound=48
for dims in "d128 128 128" "d64 64 64"; do
  read -r suffix dqk dv <<< "$dims"
  common=(-arch=sm_90a "$@" -I"$root/kernels" -DZYFA_FAMILY_E4M3=1 -DZYFA_WS_KEY_BIAS=1 -DZYFA_HEAD_DIM_QK=$dqk
          -DZYFA_HEAD_DIM_V=$dv -DZYFA_DIMS_SUFFIX=$suffix)
  "$nvcc" -ptx "${common[@]}" -o "$work/b1_$suffix.ptx" "$root/kernels/nvidia/attention_fwd_ws_variant.cu"
  "$nvcc" -cubin "${common[@]}" -Xptxas=-v -o "$work/b1_$suffix.cubin" \
      "$root/kernels/nvidia/attention_fwd_ws_variant.cu" 2> "$work/b1_$suffix.ptxas"
done
# 1. serialisation and setmaxnreg warnings
if grep -hE 'C7512|C7513|C7514|C7508' "$work"/f*.ptxas "$work"/p*.ptxas "$work"/b*.ptxas; then
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
# 7. the paged kernels' spills, bounded
while read -r fn regs spill; do
  echo "$fn: $regs registers at entry, $spill bytes spilled (bound $kPagedSpillBound)"
  if [ "$spill" -gt "$kPagedSpillBound" ]; then echo "FAIL: $fn spills $spill bytes"; status=1; fi
done < <(cat "$work"/p*.ptxas | awk '
  /Compiling entry function/ {fn = $7; gsub(/[\x27]/, "", fn)}
  /spill stores/ {spill = $5}
  /Used [0-9]+ registers/ {for (i = 1; i <= NF; i++) if ($i == "Used") print fn, $(i + 1), spill}')
# 8. the key-bias kernels' spills, bounded
while read -r fn regs spill; do
  echo "$fn: $regs registers at entry, $spill bytes spilled (bound $kBiasSpillBound)"
  if [ "$spill" -gt "$kBiasSpillBound" ]; then echo "FAIL: $fn spills $spill bytes"; status=1; fi
done < <(cat "$work"/b*.ptxas | awk '
  /Compiling entry function/ {fn = $7; gsub(/[\x27]/, "", fn)}
  /spill stores/ {spill = $5}
  /Used [0-9]+ registers/ {for (i = 1; i <= NF; i++) if ($i == "Used") print fn, $(i + 1), spill}')
# Per kernel: the wgmmas of each score product (from the kernel's "zyfa-ws-score-product" PTX
# comment to the next commit_group), and the other wgmmas by pattern.
count_in() { awk -v fn="$2" -v pat="$3" '/^\.visible \.entry/{inside = index($0, fn "(") > 0} inside && $0 ~ pat {n++} END{print n+0}' "$1"; }
# the score products' wgmma counts matching pattern $3, one line per issue site
score_issues() {
  awk -v fn="$2" -v pat="$3" '/^\.visible \.entry/{inside = index($0, fn "(") > 0}
    inside && /zyfa-ws-score-product/ {open = 1; n = 0}
    inside && open && /wgmma\.mma_async/ && $0 ~ pat {n++}
    inside && open && /wgmma\.commit_group/ {print n; open = 0}' "$1"
}
sum_lines() { awk '{n += $1} END{print n+0}'; }
# 3. e4m3 wgmma for both products, setmaxnreg
for suffix in d128 d192_128 d64 d256; do
  for fn in zyfa_attn_fwd_ws_e4m3_lean_$suffix zyfa_attn_fwd_ws_e4m3_exact_$suffix; do
    e4m3='wgmma\.mma_async.*m64n(64|128)k32\.f32\.e4m3\.e4m3'
    s=$(score_issues "$work/f1_$suffix.ptx" $fn "$e4m3" | sum_lines)
    pv=$(( $(count_in "$work/f1_$suffix.ptx" $fn "$e4m3") - s ))
    sums=$(count_in "$work/f1_$suffix.ptx" $fn 'wgmma\.mma_async.*m64n8k32\.f32\.e4m3\.e4m3')
    regs=$(count_in "$work/f1_$suffix.ptx" $fn 'setmaxnreg\.(inc|dec)')
    echo "$fn: e4m3 wgmma S $s, P.V $pv, row sums $sums; setmaxnreg $regs"
    if [ "$s" -lt 1 ] || [ "$pv" -lt 1 ]; then echo "FAIL: $fn should use the e4m3 wgmma for both products"; status=1; fi
    lean_sums=$pv; [[ $suffix == d256 ]] && lean_sums=$((pv / 2))
    if [[ $fn == *lean* && $sums -ne $lean_sums ]] || [[ $fn == *exact* && $sums -ne 0 ]]; then
      echo "FAIL: $fn: row-sum wgmmas $sums (LEAN: one per P.V k-step, $lean_sums; EXACT: none)"; status=1
    fi
    if [ "$regs" -lt 2 ]; then echo "FAIL: $fn should reallocate registers (setmaxnreg dec and inc)"; status=1; fi
  done
done
# 8. the key-bias kernels: the e4m3 wgmma for both products, LEAN's row sums by wgmma, and LEAN's
#    exponentials the alphas only (the bias changes the softmax's arithmetic, not its structure)
for suffix in d128 d64; do
  for fn in zyfa_attn_fwd_ws_bias_e4m3_lean_$suffix zyfa_attn_fwd_ws_bias_e4m3_exact_$suffix; do
    e4m3='wgmma\.mma_async.*m64n(64|128)k32\.f32\.e4m3\.e4m3'
    s=$(score_issues "$work/b1_$suffix.ptx" $fn "$e4m3" | sum_lines)
    pv=$(( $(count_in "$work/b1_$suffix.ptx" $fn "$e4m3") - s ))
    sums=$(count_in "$work/b1_$suffix.ptx" $fn 'wgmma\.mma_async.*m64n8k32\.f32\.e4m3\.e4m3')
    ex2=$(count_in "$work/b1_$suffix.ptx" $fn 'ex2\.')
    echo "$fn: e4m3 wgmma S $s, P.V $pv, row sums $sums; ex2 $ex2"
    if [ "$s" -lt 1 ] || [ "$pv" -lt 1 ]; then echo "FAIL: $fn should use the e4m3 wgmma for both products"; status=1; fi
    if [[ $fn == *lean* ]] && { [ "$sums" -ne "$pv" ] || [ "$ex2" -lt 2 ] || [ "$ex2" -gt 16 ]; }; then
      echo "FAIL: $fn: LEAN's row sums one wgmma per P.V wgmma and its ex2 the alphas only (2..16)"; status=1
    fi
    if [[ $fn == *exact* ]] && [ "$sums" -ne 0 ]; then echo "FAIL: $fn: EXACT sums in registers"; status=1; fi
  done
done
# 4. exponentials (softmax copies: masked and unmasked, in the first block and the two alternating
#    steps, and whatever ptxas duplicates: at most 8)
for suffix in d128 d192_128 d64 d256; do
  lean=$(count_in "$work/f1_$suffix.ptx" zyfa_attn_fwd_ws_e4m3_lean_$suffix 'ex2\.')
  exact=$(count_in "$work/f1_$suffix.ptx" zyfa_attn_fwd_ws_e4m3_exact_$suffix 'ex2\.')
  echo "ex2 in PTX ($suffix): ws e4m3 LEAN $lean, ws e4m3 EXACT $exact"
  if [ "$lean" -lt 2 ] || [ "$lean" -gt 16 ] || [ $((lean % 2)) -ne 0 ]; then
    echo "FAIL: the LEAN kernel should hold only the alphas (2 per softmax copy, <= 8 copies), has $lean"; status=1
  fi
  if [ "$exact" -lt $((16 * lean)) ]; then
    echo "FAIL: the EXACT kernel should hold >= 32 ex2 per softmax copy ($((16 * lean))), has $exact"; status=1
  fi
done
# 5. k-steps of S = Q K^T: head_dim_qk * bytes / 32 wgmmas in every score product (k16 16-bit, k32
#    e4m3: 32 bytes a step)
for dims in "${dims_list[@]}"; do
  read -r suffix dqk dv <<< "$dims"
  for kernel in "0 bf16 2" "0 fp16 2" "1 e4m3_lean 1" "1 e4m3_exact 1"; do
    read -r family name bytes <<< "$kernel"
    fn=zyfa_attn_fwd_ws_${name}_$suffix
    steps=$((dqk * bytes / 32))
    issues=$(score_issues "$work/f${family}_$suffix.ptx" $fn 'm64n(64|128)k')
    echo "$fn: S wgmmas per issue site: $(echo $issues) (k-steps $steps)"
    if [ -z "$issues" ]; then echo "FAIL: $fn: no score product found"; status=1; fi
    for n in $issues; do
      if [ "$n" -ne "$steps" ]; then echo "FAIL: $fn: a score product of $n wgmmas, not $steps k-steps"; status=1; fi
    done
  done
done
# 6. the INT8 Q/K kernels
for dims in "${int8_dims[@]}"; do
  read -r suffix dqk dv <<< "$dims"
  for mode in lean exact; do
    fn=zyfa_attn_fwd_ws_i8e4m3_${mode}_$suffix
    ptx="$work/f2_$suffix.ptx"
    s8='wgmma\.mma_async.*k32\.s32\.s8\.s8'
    issues=$(score_issues "$ptx" $fn "$s8")
    steps=$((dqk / 32))
    pv=$(count_in "$ptx" $fn 'wgmma\.mma_async.*m64n(64|128)k32\.f32\.e4m3\.e4m3')
    sums=$(count_in "$ptx" $fn 'wgmma\.mma_async.*m64n8k32\.f32\.e4m3\.e4m3')
    ex2=$(count_in "$ptx" $fn 'ex2\.')
    echo "$fn: s8 S wgmmas per issue site: $(echo $issues) (k-steps $steps); e4m3 P.V $pv, row sums $sums, ex2 $ex2"
    if [ -z "$issues" ]; then echo "FAIL: $fn: no s8 score product found"; status=1; fi
    for n in $issues; do
      if [ "$n" -ne "$steps" ]; then echo "FAIL: $fn: a score product of $n s8 wgmmas, not $steps"; status=1; fi
    done
    if [ "$pv" -lt 1 ]; then echo "FAIL: $fn: P.V should use the e4m3 wgmma"; status=1; fi
    if [[ $mode == lean && $sums -ne $pv ]] || [[ $mode == exact && $sums -ne 0 ]]; then
      echo "FAIL: $fn: row-sum wgmmas $sums (LEAN: one per P.V wgmma; EXACT: none)"; status=1
    fi
    if [[ $mode == lean ]] && { [ "$ex2" -lt 2 ] || [ "$ex2" -gt 16 ]; }; then
      echo "FAIL: $fn: LEAN should hold only the alphas' exponentials, has $ex2"; status=1
    fi
  done
done
exit $status
