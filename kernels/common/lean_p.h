// Lean P: the e4m3fn code of a probability from one FMA and one float-to-int conversion.
//
// An e4m3fn code read as an integer grows by 8 each time the value doubles (3 mantissa bits) and
// is 56 at 1.0 (bias 7), so code(2^x) ~= 8x + 56. For t = s*log2e*scale - m (<= 0) and a block
// scale exponent k, the code of 2^(t+k) is
//     code = cvt(clamp(fma(s_raw, 8 * scale_log2, bias), 0, 126)),  bias = 56 + c + 8k - 8m,
// with no exponential and no separate fp32->fp8 conversion. Between powers of two the code is
// linear in x while 2^x is not, so the value read back is 1..1.086x the true one before rounding;
// the constant c centres that error.
//
// c = -15/32 minimises the RMS relative error of the decoded value against 2^x for uniformly
// distributed x (a sweep of c over [-1, 0.5] in steps of 1/200, 2026-11-29: 3.14% RMS vs 2.65%
// for round-to-nearest-even of exp2, mean bias -0.1%). It is not -0.5, which would put the row maximum (code 120 - 0.5)
// exactly on a rounding tie that fp32 noise then decides.
//
// Codes 1..7 are e4m3 subnormals (code * 2^-9), below the linear law (code 4 reads 2^-7, the law
// says 2^-6.5). They are kept, not flushed: with per-block scaling they only occur for probabilities
// more than 2^13 below their block's maximum, and the rounded row sum counts exactly the value that
// multiplies V, so numerator and denominator stay consistent. Flushing would cost an extra compare.
//
// Conversions differ by target: NVIDIA's cvt.rni rounds to nearest even, AMD's v_cvt_i32_f32
// truncates. A truncating target uses c + 0.5 so that both produce the same code except on exact
// ties (measure-zero for real scores); the CPU model reproduces either bit for bit.
#ifndef ZYFA_KERNELS_COMMON_LEAN_P_H
#define ZYFA_KERNELS_COMMON_LEAN_P_H

#include "device_compat.h"
#include "fp8_e4m3.h"

namespace zyfa {
namespace numerics {

constexpr float kLeanPCentre = -0.46875f;  // -15/32, for a round-to-nearest conversion

// Code of 1.0 (8 * bias) and the largest finite code: e4m3fn 56 and 126 (448; 0x7F is NaN),
// e4m3fnuz 64 and 127 (240). The same formula serves both formats.
ZYFA_HD float lean_p_code_of_one(Fp8Format f) { return f == Fp8Format::E4M3FN ? 56.0f : 64.0f; }
ZYFA_HD float lean_p_max_code(Fp8Format f) { return f == Fp8Format::E4M3FN ? 126.0f : 127.0f; }

enum class FloatToIntRounding : int { NearestEven = 0, TowardZero = 1 };

// The constant c a target must use so that its conversion yields the reference codes.
ZYFA_HD float lean_p_centre_for(FloatToIntRounding rounding) {
    return rounding == FloatToIntRounding::NearestEven ? kLeanPCentre : kLeanPCentre + 0.5f;
}

// Per (row, block) constant of the FMA: 56 + c + 8k - 8m, evaluated in fp32 in this order.
// (The block exponent as an integral fp32: block_scale_exponent_integral.)
ZYFA_HD float lean_p_bias(float running_max_log2, float block_exponent, float centre, Fp8Format f) {
    return (lean_p_code_of_one(f) + centre + 8.0f * block_exponent) - 8.0f * running_max_log2;
}
ZYFA_HD float lean_p_bias(float running_max_log2, int block_exponent, float centre, Fp8Format f) {
    return lean_p_bias(running_max_log2, (float)block_exponent, centre, f);
}

// The form the sm_90a warp-specialised kernel computes (nvidia/sm90/softmax.cuh), two instructions
// per code and one per two codes: y128 = sat(fma(s_raw, scale8_log2 / 128, bias / 128)) (PTX
// fma.rn.sat: clamped to [0, 1], NaN -> +0; saturate_unit below is that clamp) is
// clamp(y, 0, 128) / 128 exactly, since a power-of-two scale commutes with rounding; an FMA scales
// back while adding 1.5 * 2^23, one rounding like the add of the unscaled y, so the low byte of the
// magic-number sum is round(clamp(y, 0, 128)) (0..128; byte 1 is 0). The cap at 126 follows on two
// codes at once (lean_p_capped_code_lanes: PTX min.u16x2): min(round(y), 126) = round(min(y, 126))
// because 126 is an integer and rounding is monotonic. Together they give lean_p_code(...,
// NearestEven, E4M3FN) (checked on the CPU by tests/numerics/lean_p_test.cpp). Exact except at
// rounding ties when scale8_log2 / 128 or bias / 128 falls below 2^-126 (subnormal): scales and
// biases that small never occur with real descales.
ZYFA_HD float saturate_unit(float x) { return x > 0.0f ? (x < 1.0f ? x : 1.0f) : 0.0f; }
ZYFA_HD uint32_t lean_p_uncapped_bits_from_saturated(float y128) { return float_bits(fmaf(y128, 128.0f, 12582912.0f)); }
// Two uncapped sums -> their codes capped at 126, in the low bytes of the two 16-bit lanes.
ZYFA_HD uint32_t lean_p_capped_code_lanes(uint32_t lo_bits, uint32_t hi_bits) {
    const uint32_t cap = (uint32_t)lean_p_max_code(Fp8Format::E4M3FN);
    const uint32_t lo = lo_bits & 0xFFFFu, hi = hi_bits & 0xFFFFu;
    return (lo < cap ? lo : cap) | ((hi < cap ? hi : cap) << 16);
}

// Where the cap at 126 cannot act, so that a kernel may leave its min (or clamp) out: a row whose
// scale m (lean_p_bias's running_max_log2: the running maximum, or LEAN's anchor) is finite with
// |m| < 2^19, for every score s at or below m in log2 units and a nonnegative scale (the kernels
// turn a negative one into -Q). With b = fl(s_max * scale_log2) <= m and the block exponent k of
// block_scale_exponent_integral (8 + floor(m - b), or less when capped) or of the anchor (8), the
// largest argument is 120 + c + 8 (b - m + (k - 8)) <= 120 + c, plus the roundings of 8b against
// 8 s_max scale_log2 and of the bias, each at most 1/4 while |8m| < 2^22: at most 120.03 with
// round-to-nearest (c = -15/32) and 120.53 with truncation (c + 1/2), code 120 either way. NaN and
// infinite m fail the test (their rows keep the cap). The sm_90a kernels and the gfx950/gfx942
// generator both take it from here; tests/numerics/lean_p_test.cpp checks it on the model's rows.
constexpr float kLeanPCapUnreachableBelow = 524288.0f;  // 2^19
ZYFA_HD bool lean_p_cap_unreachable(float running_max_log2) {
    return fabsf(running_max_log2) < kLeanPCapUnreachableBelow;
}
// Two uncapped sums (their codes at most 126: lean_p_cap_unreachable) -> the codes in the low
// bytes of the two 16-bit lanes, as lean_p_capped_code_lanes places them.
ZYFA_HD uint32_t lean_p_code_lanes(uint32_t lo_bits, uint32_t hi_bits) {
    return (lo_bits & 0xFFFFu) | ((hi_bits & 0xFFFFu) << 16);
}

// The code itself: scale8_log2 = 8 * softmax_scale * descales * log2(e), s_raw the raw dot product.
// A masked score (-inf) or a NaN clamps to 0, which decodes to exactly 0.
ZYFA_HD uint8_t lean_p_code(float s_raw, float scale8_log2, float bias, FloatToIntRounding rounding,
                            Fp8Format f) {
    const float y = clamp_float(fmaf(s_raw, scale8_log2, bias), 0.0f, lean_p_max_code(f));
    const float integral = rounding == FloatToIntRounding::NearestEven ? round_half_even(y) : truncf(y);
    return (uint8_t)(int)integral;
}

}  // namespace numerics
}  // namespace zyfa

#endif
