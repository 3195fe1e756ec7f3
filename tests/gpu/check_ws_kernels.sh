#!/usr/bin/env bash
# CPU-side checks of the warp-specialised sm_90a kernels (kernels/nvidia/attention_fwd_ws.cuh;
# label nvidia_build: needs nvcc, no GPU), compiled exactly as kernels/nvidia/CMakeLists.txt does,
# for head dims 128, 192/128 and 64 (four kernels each):
#   1. ptxas keeps every wgmma asynchronous: no C7513/C7514 ("wgmma.mma_async instructions are
#      serialized ...", a 2-3x slowdown when it happens) and no C7508 (setmaxnreg ignored);
#   2. no spills to local memory in any kernel (producer at 56 registers, consumers 224);
#   3. the FP8 kernels issue the e4m3 wgmma for both products (m64n64k32 for S, m64n128k32 for P.V)
#      and LEAN an FP16 wgmma for its row sums (m64n8k16 against the ones tile), EXACT none
#      and change their register budget (setmaxnreg down and up);
#   4. LEAN's P path has no exponential: its ex2 are the per-row alphas only (2 per compiled copy
#      of the softmax, at most 8 copies), while EXACT adds one per probability (32 per copy);
#   5. the score product takes head_dim_qk * bytes / 32 wgmma k-steps: each kernel's S wgmma count
#      over its k-steps (the compiled copies of the issue) equals the head dim 128 kernel's, so
#      192/128 issues 1.5x the k-steps per copy (a k-step count left at 128's would fail here).
# Head dim 64's P.V is an m64n64 wgmma, the shape of S: its kernels' m64n64 count is S plus P.V,
# where P.V has the head dim 128 kernel's count (same issue sites, same k-steps over 64 keys).
# Usage: check_ws_kernels.sh <nvcc> <repo root> <flags...>
set -euo pipefail
nvcc=$1; root=$2; shift 2
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
status=0
# dims suffix | head_dim_qk | head_dim_v
dims_list=("d128 128 128" "d192_128 192 128" "d64 64 64")
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
# P.V wgmma count of a kernel's head dim 128 form: family file, kernel name (without dims), pattern
pv_of_d128() { count_in "$work/f$1_d128.ptx" "zyfa_attn_fwd_ws_$2_d128" "wgmma\\.mma_async.*$3"; }
for suffix in d128 d192_128 d64; do
  for fn in zyfa_attn_fwd_ws_e4m3_lean_$suffix zyfa_attn_fwd_ws_e4m3_exact_$suffix; do
    s=$(count_in "$work/f1_$suffix.ptx" $fn 'wgmma\.mma_async.*m64n64k32\.f32\.e4m3\.e4m3')
    pv=$(count_in "$work/f1_$suffix.ptx" $fn 'wgmma\.mma_async.*m64n128k32\.f32\.e4m3\.e4m3')
    if [ "$suffix" = d64 ]; then  # P.V is m64n64k32 too
      name=${fn#zyfa_attn_fwd_ws_}; name=${name%_d64}
      pv=$(pv_of_d128 1 "$name" 'm64n128k32\.f32\.e4m3\.e4m3'); s=$((s - pv))
    fi
    sums=$(count_in "$work/f1_$suffix.ptx" $fn 'wgmma\.mma_async.*m64n8k16\.f32\.f16\.f16')
    regs=$(count_in "$work/f1_$suffix.ptx" $fn 'setmaxnreg\.(inc|dec)')
    echo "$fn: e4m3 wgmma S $s, P.V $pv, row sums $sums; setmaxnreg $regs"
    if [ "$s" -lt 1 ] || [ "$pv" -lt 1 ]; then echo "FAIL: $fn should use the e4m3 wgmma for both products"; status=1; fi
    if [[ $fn == *lean* && $sums -ne $((2 * pv)) ]] || [[ $fn == *exact* && $sums -ne 0 ]]; then
      echo "FAIL: $fn: row-sum wgmmas $sums (LEAN: two per P.V wgmma, EXACT: none)"; status=1
    fi
    if [ "$regs" -lt 2 ]; then echo "FAIL: $fn should reallocate registers (setmaxnreg dec and inc)"; status=1; fi
  done
done
# 4. exponentials
for suffix in d128 d192_128 d64; do
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
# 5. k-steps of S = Q K^T: head_dim_qk * bytes / 32 per issue (k16 16-bit, k32 e4m3: 32 bytes a step)
copies_128=()
for dims in "${dims_list[@]}"; do
  read -r suffix dqk dv <<< "$dims"
  i=0
  for kernel in "0 bf16 2 m64n64k16\.f32\.bf16" "0 fp16 2 m64n64k16\.f32\.f16" \
                "1 e4m3_lean 1 m64n64k32\.f32\.e4m3" "1 e4m3_exact 1 m64n64k32\.f32\.e4m3"; do
    read -r family name bytes pat <<< "$kernel"
    fn=zyfa_attn_fwd_ws_${name}_$suffix
    steps=$((dqk * bytes / 32))
    s=$(count_in "$work/f${family}_$suffix.ptx" $fn "wgmma\\.mma_async.*$pat")
    if [ "$suffix" = d64 ]; then  # minus P.V, m64n64 at this head dim
      s=$((s - $(pv_of_d128 "$family" "$name" "${pat/m64n64/m64n128}")))
    fi
    echo "$fn: S wgmma $s = $((s / steps)) issues x $steps k-steps"
    if [ $((s % steps)) -ne 0 ] || [ "$s" -eq 0 ]; then
      echo "FAIL: $fn: $s score wgmmas is not a multiple of its $steps k-steps"; status=1
    elif [ "$suffix" = d128 ]; then
      copies_128[$i]=$((s / steps))
    elif [ $((s / steps)) -ne "${copies_128[$i]}" ]; then
      echo "FAIL: $fn issues S $((s / steps)) times with $steps k-steps; the d128 kernel ${copies_128[$i]} times"
      status=1
    fi
    i=$((i + 1))
  done
done
exit $status
