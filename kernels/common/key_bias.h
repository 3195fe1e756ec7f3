// The per-key score bias (zyfa_attn_params.key_bias) and Q smoothing's exact value of it
// (ZYFA_QUANT_KEY_BIAS). One definition for the CPU model and any kernel that takes the bias.
//
// Attention with a bias b_j (natural-log units, per query head) scores key j as
// softmax_scale * q.k_j + b_j. In log2 units, rounded once per score:
//   z_j   = b_j * log2 e                        per key, in fp32
//   t_j   = fma(s_raw_j, scale_log2, z_j)       the score EXACT exponentiates and the maximum sees
//   LEAN: code = round(fma(s_raw_j, scale8_log2, c_row + 8 * z_j))
// so LEAN stays one FMA and one rounding per score after one add for the FMA's constant
// (8 * z_j is exact in fp32). Without a bias z_j = +0 and t_j = s_raw * scale_log2 exactly: the
// bias-free bits.
//
// Q smoothing (SageAttention2's): with m_q the mean of Q's rows over the sequence and m_k K's
// (0 without K smoothing), q_i.(k_j - m_k) = (q_i - m_q).(k_j - m_k) + m_q.(k_j - m_k). The first
// term is what the kernel computes from the smoothed, quantised Q and K; the second depends on
// the key only and is the bias, computed from the unquantised K, so quantising Q no longer rounds
// Q's shared offset into every score. Bit-level definition (a GPU port must reproduce it):
//   d_j = sum over d = 0, 1, ... (in order) of (double)m_q[d] * (double)r_j[d], from +0.0,
//   where r_j = the fp32 smoothed row k_j - m_k (smooth_mean.h's smooth_subtract, before any
//   Hadamard rotation), then b_j = (float)((double)key_bias_scale * d_j), rounded once.
#ifndef ZYFA_KERNELS_COMMON_KEY_BIAS_H
#define ZYFA_KERNELS_COMMON_KEY_BIAS_H

#include "device_compat.h"
#include "score_scale.h"

namespace zyfa {
namespace numerics {

// z_j: the bias in log2 units.
ZYFA_HD float key_bias_log2(float bias) { return bias * kLog2e; }

// t_j: the biased score in log2 units.
ZYFA_HD float biased_score_log2(float s_raw, float scale_log2, float bias_log2) {
    return fmaf(s_raw, scale_log2, bias_log2);
}

// LEAN's per-(row, key) FMA constant: the row's lean_p_bias plus 8 z_j.
ZYFA_HD float lean_p_bias_with_key_bias(float row_bias, float bias_log2) { return row_bias + 8.0f * bias_log2; }

// b_j from the query mean and key j's smoothed fp32 row, value(d) for d = 0 .. n-1 (a GPU kernel
// computes each value as it reads it).
template <class SmoothedValue>
ZYFA_HD float smoothing_key_bias_of(const float* query_mean, int64_t n, float key_bias_scale, SmoothedValue value) {
    double dot = 0.0;
    for (int64_t d = 0; d < n; ++d) dot += (double)query_mean[d] * (double)value(d);
    return (float)((double)key_bias_scale * dot);
}
ZYFA_HD float smoothing_key_bias(const float* query_mean, const float* smoothed_key_row, int64_t n,
                                 float key_bias_scale) {
    return smoothing_key_bias_of(query_mean, n, key_bias_scale, [&](int64_t d) { return smoothed_key_row[d]; });
}

}  // namespace numerics
}  // namespace zyfa

#endif
