// The two FP8 e4m3 formats, one definition for every backend.
//   e4m3fn   (OCP, gfx950, NVIDIA): bias 7, max 448 (0x7E), NaN = S.1111.111, no infinity, has -0.
//   e4m3fnuz (gfx942):              bias 8, max 240 (0x7F), NaN = 0x80 only, no infinity, no -0.
// Encoding rounds to nearest, ties to even, and saturates to +-max (infinities too), which is what
// the hardware conversions with saturation (cvt.satfinite, v_cvt_pk_fp8_f32) produce.
#ifndef ZYFA_KERNELS_COMMON_FP8_E4M3_H
#define ZYFA_KERNELS_COMMON_FP8_E4M3_H

#include "device_compat.h"

namespace zyfa {
namespace numerics {

enum class Fp8Format : int { E4M3FN = 0, E4M3FNUZ = 1 };

ZYFA_HD int fp8_bias(Fp8Format f) { return f == Fp8Format::E4M3FN ? 7 : 8; }
ZYFA_HD float fp8_max(Fp8Format f) { return f == Fp8Format::E4M3FN ? 448.0f : 240.0f; }
ZYFA_HD uint8_t fp8_max_code(Fp8Format f) { return f == Fp8Format::E4M3FN ? 0x7E : 0x7F; }
ZYFA_HD uint8_t fp8_nan_code(Fp8Format f) { return f == Fp8Format::E4M3FN ? 0x7F : 0x80; }

ZYFA_HD bool fp8_is_nan(uint8_t code, Fp8Format f) {
    return f == Fp8Format::E4M3FN ? (code & 0x7F) == 0x7F : code == 0x80;
}

// Value of a code: exponent field e, mantissa m; e == 0 is subnormal: m/8 * 2^(1 - bias).
ZYFA_HD float fp8_decode(uint8_t code, Fp8Format f) {
    if (fp8_is_nan(code, f)) return bits_float(0x7FC00000u);
    const int e = (code >> 3) & 0xF;
    const int m = code & 0x7;
    const int bias = fp8_bias(f);
    // Build the fp32 directly: exact for every code, no pow or table needed on a device.
    float magnitude;
    if (e == 0) {
        magnitude = (float)m * bits_float((uint32_t)(127 + 1 - bias - 3) << 23);  // m * 2^(-bias-2)
    } else {
        magnitude = bits_float(((uint32_t)(e - bias + 127) << 23) | ((uint32_t)m << 20));
    }
    return (code & 0x80) ? -magnitude : magnitude;
}

// Round-to-nearest-even, saturating encoder.
ZYFA_HD uint8_t fp8_encode(float x, Fp8Format f) {
    const uint32_t bits = float_bits(x);
    const uint32_t abs_bits = bits & 0x7FFFFFFFu;
    if (abs_bits > 0x7F800000u) return fp8_nan_code(f);
    const uint8_t sign = (uint8_t)((bits >> 24) & 0x80);
    const int bias = fp8_bias(f);
    uint32_t magnitude_code;
    const float ax = bits_float(abs_bits);
    if (ax >= fp8_max(f)) {
        magnitude_code = fp8_max_code(f);  // saturate, infinity included
    } else {
        const int exponent = (int)(abs_bits >> 23) - 127;
        if (exponent < 1 - bias) {
            // Subnormal range: quantum 2^(-bias-2); rounding may carry into the smallest normal,
            // whose code (8) follows the largest subnormal (7) in the same integer sequence.
            const float quanta = ax * bits_float((uint32_t)(127 + bias + 2) << 23);
            magnitude_code = (uint32_t)round_half_even(quanta);
        } else {
            // Normal: keep 3 of the 23 mantissa bits, ties to even; a carry moves the exponent.
            const uint32_t rebased = abs_bits - ((uint32_t)(127 - bias) << 23);
            const uint32_t lsb = (rebased >> 20) & 1u;
            magnitude_code = (rebased + 0x7FFFFu + lsb) >> 20;
            if (magnitude_code > fp8_max_code(f)) magnitude_code = fp8_max_code(f);
        }
    }
    if (magnitude_code == 0 && f == Fp8Format::E4M3FNUZ) return 0;  // fnuz has no -0 (0x80 is NaN)
    return (uint8_t)(sign | magnitude_code);
}

}  // namespace numerics
}  // namespace zyfa

#endif
