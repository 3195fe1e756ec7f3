// Per-key-block power-of-two scaling of the probabilities before they are rounded to FP8.
//
// Each block is scaled relative to its own maximum, not to the running maximum: with gap =
// running_max - block_max (log2 units, >= 0) the exponent is k = 8 + floor(gap) (7 in e4m3fnuz), so
// the block's largest probability lands in (2^7, 2^8] and no block pushes its small values into e4m3
// subnormals. k is capped at max_exponent: a block more than 2^-(max_exponent-8) below the
// running maximum contributes below fp32 resolution of the row sum anyway. The scale is removed
// after P.V (the scaled MFMA's E8M0 operand on gfx950, an fp32 multiply elsewhere), so a block
// contributes 2^-k * (P_codes . V) to the accumulator and 2^-k * sum(P_codes) to the row sum.
#ifndef ZYFA_KERNELS_COMMON_BLOCK_SCALE_H
#define ZYFA_KERNELS_COMMON_BLOCK_SCALE_H

#include "device_compat.h"
#include "fp8_e4m3.h"

namespace zyfa {
namespace numerics {

constexpr int kBlockScaleMaxExponent = 64;  // default cap on k

// The scale EXACT applies to every block and LEAN to the block holding the running maximum:
// the largest power of two that keeps 1.0 finite, 2^8 in e4m3fn (max 448), 2^7 in e4m3fnuz (240).
ZYFA_HD int p_scale_base_exponent(Fp8Format f) { return f == Fp8Format::E4M3FN ? 8 : 7; }

ZYFA_HD int block_scale_exponent(float running_max_log2, float block_max_log2, int max_exponent, Fp8Format f) {
    const int base = p_scale_base_exponent(f);
    const float gap = running_max_log2 - block_max_log2;
    if (!(gap < (float)(max_exponent - base))) return max_exponent;  // huge, inf or NaN
    if (gap <= 0.0f) return base;
    return base + (int)floorf(gap);
}

// 2^e as an fp32, exact for -126 <= e <= 127.
ZYFA_HD float exp2_int(int e) { return bits_float((uint32_t)(e + 127) << 23); }

// The same k and 2^e with k and e held as integral fp32 values, for the sm_90a ws kernel: no
// float-to-int or int-to-float conversion (F2I, I2F: the slow transcendental pipe) on the softmax's
// critical path, only additions, min/max and integer operations. Checked against the int forms
// above by tests/numerics/lean_p_test.cpp.
constexpr float kMagicInteger = 12582912.0f;  // 1.5 * 2^23: ulp 1, so x + it holds round(x) in its low bits

// fp32 a + b rounded toward -infinity. Host: the nearest sum, one ulp down when it lies above the
// exact sum, which a double holds for the operands used here (b = kMagicInteger, |a| < 2^24, or a
// below 2^-6, where an inexact double sum cannot cross an integer).
ZYFA_HD float add_round_down(float a, float b) {
#if defined(__CUDA_ARCH__)
    return __fadd_rd(a, b);
#else
    const float r = a + b;
    return (double)r > (double)a + (double)b ? nextafterf(r, -__builtin_huge_valf()) : r;
#endif
}

// block_scale_exponent(...) as an fp32: floor(gap) = (gap + 1.5 * 2^23 rounded down) - 1.5 * 2^23
// for 0 <= gap < 2^22; fminf returns the cap for NaN and +inf (as the int form does), fmaxf the
// base for gap <= 0, and gaps of 2^22 or more land on the cap either way.
ZYFA_HD float block_scale_exponent_integral(float running_max_log2, float block_max_log2, int max_exponent,
                                            Fp8Format f) {
    const float base = (float)p_scale_base_exponent(f);
    const float gap = running_max_log2 - block_max_log2;
    const float floor_gap = add_round_down(gap, kMagicInteger) - kMagicInteger;
    return fmaxf(fminf(floor_gap, (float)max_exponent - base), 0.0f) + base;
}

// 2^e for an integral fp32 e in [-126, 127]: e + 1.5 * 2^23 is exact and its bits are
// 0x4B400000 + e.
ZYFA_HD float exp2_integral(float e) {
    return bits_float((float_bits(e + kMagicInteger) - 0x4B400000u + 127u) << 23);
}

}  // namespace numerics
}  // namespace zyfa

#endif
