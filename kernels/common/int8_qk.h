// The INT8 Q/K mode (ZYFA_DTYPE_INT8 q and k, FP8 v): the symmetric INT8 quantiser's code and scale,
// and how an int32 score enters the fp32 softmax. One definition for the CPU model, the quantiser
// and every GPU kernel.
//
// Scores. q and k hold integers in [-128, 127] (the quantiser writes [-127, 127]); with head_dim_qk
// <= 256 the raw score s = q . k is an int32 with |s| <= 128 * 128 * 256 = 2^22, computed exactly
// (the matrix unit's s32 accumulation, or any order of integer sums). It becomes fp32 without the
// int-to-float conversion unit (quarter rate on Hopper) through the exponent-bias trick: the integer
// s + 0x4B400000, read as fp32, is exactly 1.5 * 2^23 + s for -2^22 <= s <= 2^22 (ulp 1 in
// [2^23, 2^24], and 2^24 itself is representable), so
//     biased = bits_float(s + 0x4B400000)        one integer add, no conversion
//     float(s) = biased - 1.5 * 2^23             exact: int8_score_value
// Every later step (the block maximum, EXACT's exponent) uses that exact value times the per
// (query token, 64-key block) factor scale_log2 = score_scale_log2(softmax_scale, q_descale_token,
// k_descale_block) (score_scale.h), so the log2-domain score is float(s) * scale_log2 rounded once.
//
// LEAN folds the subtraction into the Lean P FMA: the code's argument is
//     fma(biased, scale8_log2, bias - 1.5 * 2^23 * scale8_log2)          (int8_lean_p_bias)
// one FMA per score as in the FP8 kernels, the folded bias computed once per (row, 64-key block).
// The folded bias is rounded (1.5 * 2^23 * scale8_log2 and the difference, each once in fp32), so
// the argument differs from fma(float(s), scale8_log2, bias) by up to two half-ulps of values
// below 2^24 * scale8_log2, at most 2 * scale8_log2 code units (plus the result's own rounding):
// thousandths of a code for real descales (scale8_log2 is the code change per unit of the integer
// score, whose real range is ~10^4), the same shift for every score of a (row, 64-key block), far
// below the code's own rounding of 0.5; a code changes only where the unfolded argument lies that
// close to a rounding boundary (tests/cpu/int8_qk_test.cpp: under 1% of codes, by one). This, not
// the unfolded form, is the contract: the CPU model computes it.
// Where that bound is not small (a descale product near 1 with small codes: scale8_log2 ~ 1.4, and
// the folded bias, near -1.5 * 2^23 * scale8_log2, has an ulp of 1 or 2 codes), the fold rounds
// away the centre's fraction, so two targets whose conversions differ (truncation with c + 0.5,
// round-to-nearest with c: lean_p_centre_for) no longer give the same codes; each still equals
// the CPU model run with its own conversion (tests/emu/amd_end_to_end_test.cpp,
// test_int8_no_descales). zyfa_quantize_int8's descales (amax / 127) keep it far below a code.
#ifndef ZYFA_KERNELS_COMMON_INT8_QK_H
#define ZYFA_KERNELS_COMMON_INT8_QK_H

#include "block_scale.h"
#include "device_compat.h"
#include "lean_p.h"

namespace zyfa {
namespace numerics {

// Keys per k descale (zyfa_attn_params.k_descale_per_block), aligned to the sequence's key 0 as
// the softmax key blocks are (64 or 128 keys: each holds one or two whole descale blocks).
constexpr int kInt8KeyBlock = 64;
// The largest head_dim_qk whose scores stay within the exact range of the bias trick.
constexpr int kInt8MaxHeadDim = 256;
// The largest code the quantiser writes (symmetric: -127..127, -128 unused).
constexpr float kInt8MaxCode = 127.0f;
constexpr uint32_t kInt8ScoreBias = 0x4B400000u;  // the bits of kMagicInteger (1.5 * 2^23)

// The raw int32 score as fp32 biased by 1.5 * 2^23 (one integer add); exact for |s| <= 2^22.
ZYFA_HD float int8_score_biased(int32_t s) { return bits_float((uint32_t)s + kInt8ScoreBias); }

// float(s) from the biased form, exact.
ZYFA_HD float int8_score_value(float biased) { return biased - kMagicInteger; }

// The Lean P bias (lean_p_bias) with the removal of the 1.5 * 2^23 folded in, per (row, 64-key
// block): lean_p_code(biased, scale8_log2, int8_lean_p_bias(bias, scale8_log2), ...).
ZYFA_HD float int8_lean_p_bias(float bias, float scale8_log2) { return bias - kMagicInteger * scale8_log2; }

// The quantiser (zyfa_quantize_int8): per group of rows, scale = 127 / amax and descale = amax / 127
// in fp32 (the caller pre-shifts a tiny amax as zyfa_quantize_fp8 does), and each value's code is
// round-half-even(x * scale) clamped to [-127, 127] (GPU: cvt.rni.sat.s8.f32 then a clamp of -128).
ZYFA_HD float int8_quant_scale(float amax) { return kInt8MaxCode / amax; }
ZYFA_HD float int8_quant_descale(float amax) { return amax / kInt8MaxCode; }
ZYFA_HD int8_t int8_encode(float scaled) {
    // |scaled| <= 127 plus an ulp or two: round_half_even is exact there (|x| < 2^22).
    return (int8_t)(int)round_half_even(clamp_float(scaled, -kInt8MaxCode, kInt8MaxCode));
}

}  // namespace numerics
}  // namespace zyfa

#endif
