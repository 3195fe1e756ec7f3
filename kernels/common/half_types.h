// bfloat16 and IEEE binary16 conversions, round to nearest even, as the GPUs' cvt.rn does.
#ifndef ZYFA_KERNELS_COMMON_HALF_TYPES_H
#define ZYFA_KERNELS_COMMON_HALF_TYPES_H

#include "device_compat.h"

namespace zyfa {
namespace numerics {

ZYFA_HD float bf16_to_float(uint16_t h) { return bits_float((uint32_t)h << 16); }

ZYFA_HD uint16_t float_to_bf16(float x) {
    const uint32_t bits = float_bits(x);
    if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return (uint16_t)((bits >> 16) | 0x0040u);  // quiet NaN
    const uint32_t lsb = (bits >> 16) & 1u;
    return (uint16_t)((bits + 0x7FFFu + lsb) >> 16);  // overflow rounds to infinity, as RNE should
}

ZYFA_HD float fp16_to_float(uint16_t h) {
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    const uint32_t exponent = (h >> 10) & 0x1Fu;
    const uint32_t mantissa = h & 0x3FFu;
    if (exponent == 0x1F) return bits_float(sign | 0x7F800000u | (mantissa << 13));  // inf, NaN
    if (exponent == 0) {
        const float magnitude = (float)mantissa * bits_float(0x33800000u);  // m * 2^-24
        return (h & 0x8000u) ? -magnitude : magnitude;
    }
    return bits_float(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

ZYFA_HD uint16_t float_to_fp16(float x) {
    const uint32_t bits = float_bits(x);
    const uint16_t sign = (uint16_t)((bits >> 16) & 0x8000u);
    const uint32_t abs_bits = bits & 0x7FFFFFFFu;
    if (abs_bits > 0x7F800000u) return (uint16_t)(sign | 0x7E00u);  // NaN
    if (abs_bits >= 0x477FF000u) return (uint16_t)(sign | 0x7C00u);  // >= 65520 rounds to inf
    if (abs_bits < 0x38800000u) {
        // Below 2^-14: subnormal half, quantum 2^-24.
        const float quanta = bits_float(abs_bits) * bits_float(0x4B800000u);  // * 2^24
        return (uint16_t)(sign | (uint16_t)round_half_even(quanta));
    }
    const uint32_t rebased = abs_bits - (112u << 23);
    const uint32_t lsb = (rebased >> 13) & 1u;
    return (uint16_t)(sign | (uint16_t)((rebased + 0xFFFu + lsb) >> 13));
}

}  // namespace numerics
}  // namespace zyfa

#endif
