// Merging partial attention results by their lse, one definition for the CPU backend
// (src/cpu/attention_merge.cpp), the CUDA kernel (kernels/nvidia/attention_merge.cu) and the HIP
// kernel (kernels/amd/attention_merge.hip). Per query row, over parts i = 0..n-1 in order:
//   M   = max_i lse_i                              merge_max_lse   (NaN if any lse_i is NaN or +inf)
//   w_i = exp2((lse_i - M) * log2 e)               merge_part_weight (0 for lse_i = -inf: not read)
//   acc = acc + w_i * O_i,  sum = sum + w_i        merge_accumulate (fp32, never fused)
//   O   = acc * (1 / sum),  lse = M + ln2 * log2(sum)   merge_output_scale, merged_output, merged_lse
// A row whose parts all saw no key (M = -inf) gets O = 0, lse = -inf, zyfa_attn_fwd's empty-row
// rule; a poisoned row (M = NaN) gets NaN. Shifting by the largest lse keeps every w_i in (0, 1]
// and sum in [1, n], so nothing overflows whatever the lse magnitudes, and the one division per
// row (1 / sum) never meets the edges of the fp32 range.
#ifndef ZYFA_KERNELS_COMMON_ATTN_MERGE_H
#define ZYFA_KERNELS_COMMON_ATTN_MERGE_H

#include "device_compat.h"
#include "fp32_exp2_log2.h"
#include "score_scale.h"

namespace zyfa {
namespace numerics {

// The running maximum of the parts' lse, starting from -inf. An lse of NaN (a poisoned part) or
// +inf (no finite denominator; exp(lse_i - M) would be NaN) makes the row NaN, and it stays NaN.
ZYFA_HD float merge_max_lse(float running, float part_lse) {
    if (running != running) return running;
    if (part_lse != part_lse || part_lse == __builtin_huge_valf()) return __builtin_nanf("");
    return part_lse > running ? part_lse : running;
}

ZYFA_HD bool merge_row_poisoned(float max_lse) { return max_lse != max_lse; }
ZYFA_HD bool merge_row_empty(float max_lse) { return max_lse == -__builtin_huge_valf(); }

// Whether part i is read at all: a part whose row saw no key holds O = 0 by zyfa_attn_fwd's rule,
// but the merge must not depend on that (a caller's split may leave such rows unwritten).
ZYFA_HD bool merge_part_contributes(float part_lse, float max_lse) {
    return part_lse > -__builtin_huge_valf() && !merge_row_poisoned(max_lse);
}

// w_i = exp(lse_i - M) in (0, 1]; call only for a contributing part.
ZYFA_HD float merge_part_weight(float part_lse, float max_lse) {
    return exp2_fp32((part_lse - max_lse) * kLog2e);
}

// acc + w * value as a product and a sum, never fused: the order is part of the contract.
ZYFA_HD float merge_accumulate(float acc, float weight, float value) { return acc + weight * value; }

// The factor every O element of a row is multiplied by: 1 / sum, 0 for a row without parts (whose
// acc is 0; the division is never formed).
ZYFA_HD float merge_output_scale(float weight_sum, float max_lse) {
    return merge_row_poisoned(max_lse) || merge_row_empty(max_lse) ? 0.0f : 1.0f / weight_sum;
}

ZYFA_HD float merged_output(float acc, float output_scale, float max_lse) {
    if (merge_row_poisoned(max_lse)) return __builtin_nanf("");
    if (merge_row_empty(max_lse)) return 0.0f;
    return acc * output_scale;
}

ZYFA_HD float merged_lse(float max_lse, float weight_sum) {
    if (merge_row_poisoned(max_lse) || merge_row_empty(max_lse)) return max_lse;
    return max_lse + kLn2 * log2_fp32(weight_sum);
}

}  // namespace numerics
}  // namespace zyfa

#endif
