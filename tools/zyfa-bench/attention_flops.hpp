// FLOPs of an attention forward, counted from the (query, key) pairs the mask and window leave
// visible: FLOPs = 2 * (head_dim_qk + head_dim_v) * visible_pairs * heads_q.
#pragma once

#include <cstdint>
#include <vector>

#include "zyfa.h"

namespace zyfa_bench {

// Visible pairs of one sequence (lengths sq, sk) under docs/api.md's visibility rule.
int64_t visible_pairs(int64_t sq, int64_t sk, zyfa_mask mask, int32_t window_left, int32_t window_right);

// Summed over the batch: lengths_q/lengths_k hold one length per sequence.
int64_t visible_pairs(const std::vector<int64_t>& lengths_q, const std::vector<int64_t>& lengths_k, zyfa_mask mask,
                      int32_t window_left, int32_t window_right);

double attention_flops(int64_t pairs, int64_t heads_q, int64_t head_dim_qk, int64_t head_dim_v);

}  // namespace zyfa_bench
