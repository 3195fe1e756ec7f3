// Bit-level number formats of the matrix unit and the conversions: bf16, fp8 e4m3 (OCP "fn" on
// gfx950, "fnuz" on gfx942), bf8 e5m2 (OCP / fnuz), fp4 e2m1, E8M0 scales. Written from the format
// definitions (gfx950-notes.md section 4), independently of kernels/common.
#ifndef ZYFA_AMDGPU_EMU_FP_FORMATS_HPP
#define ZYFA_AMDGPU_EMU_FP_FORMATS_HPP

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace zyfa {
namespace emu {

inline float as_float(uint32_t bits) {
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}
inline uint32_t as_bits(float f) {
    uint32_t b;
    std::memcpy(&b, &f, 4);
    return b;
}
inline double as_double(uint64_t bits) {
    double d;
    std::memcpy(&d, &bits, 8);
    return d;
}
inline uint64_t as_bits64(double d) {
    uint64_t b;
    std::memcpy(&b, &d, 8);
    return b;
}

inline float bf16_to_float(uint16_t h) { return as_float(uint32_t(h) << 16); }

// Round to nearest even; NaN stays a (quiet) NaN.
inline uint16_t float_to_bf16_rne(float f) {
    const uint32_t b = as_bits(f);
    if (std::isnan(f)) return static_cast<uint16_t>((b >> 16) | 0x40);
    const uint32_t rounding = 0x7fff + ((b >> 16) & 1);
    return static_cast<uint16_t>((b + rounding) >> 16);
}

// A minifloat with `ebits` exponent bits, `mbits` mantissa bits and exponent bias `bias`.
// fnuz: 0x80 is the only NaN and there is no -0 or inf. fn (e4m3 OCP): S.1111.111 is NaN, no inf.
// e5m2 OCP: IEEE-like with inf and NaNs.
enum class Minifloat { E4M3Fn, E4M3Fnuz, E5M2, E5M2Fnuz, E2M1 };

inline double minifloat_to_double(uint32_t code, Minifloat format) {
    int ebits, mbits, bias;
    switch (format) {
        case Minifloat::E4M3Fn: ebits = 4; mbits = 3; bias = 7; break;
        case Minifloat::E4M3Fnuz: ebits = 4; mbits = 3; bias = 8; break;
        case Minifloat::E5M2: ebits = 5; mbits = 2; bias = 15; break;
        case Minifloat::E5M2Fnuz: ebits = 5; mbits = 2; bias = 16; break;
        default: ebits = 2; mbits = 1; bias = 1; break;
    }
    const int width = 1 + ebits + mbits;
    code &= (1u << width) - 1;
    const bool sign = (code >> (width - 1)) & 1;
    const int exponent = static_cast<int>((code >> mbits) & ((1u << ebits) - 1));
    const int mantissa = static_cast<int>(code & ((1u << mbits) - 1));
    const double nan = std::numeric_limits<double>::quiet_NaN();
    if ((format == Minifloat::E4M3Fnuz || format == Minifloat::E5M2Fnuz) && code == 0x80) return nan;
    if (format == Minifloat::E4M3Fn && exponent == 15 && mantissa == 7) return nan;
    if (format == Minifloat::E5M2 && exponent == 31) {
        return mantissa ? nan : (sign ? -HUGE_VAL : HUGE_VAL);
    }
    double value = exponent == 0 ? std::ldexp(mantissa, 1 - bias - mbits)
                                 : std::ldexp((1 << mbits) + mantissa, exponent - bias - mbits);
    return sign ? -value : value;
}

// E8M0 scale: 2^(e - 127); 255 is NaN.
inline double e8m0_to_double(uint32_t e) {
    e &= 0xff;
    if (e == 255) return std::numeric_limits<double>::quiet_NaN();
    return std::ldexp(1.0, static_cast<int>(e) - 127);
}

}  // namespace emu
}  // namespace zyfa

#endif
