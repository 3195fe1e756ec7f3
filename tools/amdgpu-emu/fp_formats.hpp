// Bit-level number formats of the matrix unit and the conversions: bf16, fp8 e4m3 (OCP "fn" on
// gfx950, "fnuz" on gfx942), bf8 e5m2 (OCP / fnuz), fp4 e2m1, E8M0 scales. Written from the format
// definitions (docs/emulator.md, ISA facts), independently of kernels/common.
#ifndef ZYFA_AMDGPU_EMU_FP_FORMATS_HPP
#define ZYFA_AMDGPU_EMU_FP_FORMATS_HPP

#include <algorithm>
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

// IEEE binary16, round to nearest even (the MODE register's default); beyond 65504 by half an ulp
// or more: infinity; subnormals kept (fp16 denormals are on by default); NaN stays a NaN with
// the quiet bit set and the top payload bits kept.
inline uint16_t float_to_fp16_rne(float f) {
    const uint32_t b = as_bits(f);
    const uint16_t sign = static_cast<uint16_t>((b >> 16) & 0x8000);
    if (std::isnan(f)) return static_cast<uint16_t>(sign | 0x7e00 | ((b >> 13) & 0x3ff));
    const float a = std::fabs(f);
    if (a >= 65520.0f) return static_cast<uint16_t>(sign | 0x7c00);
    if (a < 0x1p-14f) {  // subnormal: a multiple of 2^-24, rounded to nearest even (1024 = 2^-14)
        return static_cast<uint16_t>(sign | static_cast<uint16_t>(std::nearbyint(a * 0x1p24f)));
    }
    const uint32_t exponent = ((b >> 23) & 0xff) - 127 + 15;
    const uint32_t mantissa = b & 0x7fffff;
    uint32_t h = (exponent << 10) | (mantissa >> 13);
    const uint32_t dropped = mantissa & 0x1fff;
    if (dropped > 0x1000 || (dropped == 0x1000 && (h & 1))) ++h;  // a carry moves into the exponent
    return static_cast<uint16_t>(sign | h);
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

// Round to nearest even into an 8-bit format (the conversion instructions). Finite results keep
// the sign (fnuz has no -0, so a negative value rounding to zero gives 0x00). A value that rounds
// beyond the largest finite one, an infinity or a NaN gives NaN (e4m3 fn: S.1111.111; fnuz: 0x80)
// or, for OCP e5m2, infinity (NaN stays NaN). Whether the hardware saturates instead is
// unconfirmed (docs/emulator.md, ISA facts): kernels clamp first, as AMD's headers do.
inline uint32_t double_to_minifloat_rne(double x, Minifloat format) {
    int mbits, bias;
    uint32_t max_code;
    switch (format) {
        case Minifloat::E4M3Fn: mbits = 3; bias = 7; max_code = 0x7e; break;
        case Minifloat::E4M3Fnuz: mbits = 3; bias = 8; max_code = 0x7f; break;
        case Minifloat::E5M2: mbits = 2; bias = 15; max_code = 0x7b; break;
        case Minifloat::E5M2Fnuz: mbits = 2; bias = 16; max_code = 0x7f; break;
        default: mbits = 1; bias = 1; max_code = 0x7; break;
    }
    const bool fnuz = format == Minifloat::E4M3Fnuz || format == Minifloat::E5M2Fnuz;
    const uint32_t sign = std::signbit(x) ? 0x80u : 0u;
    auto not_finite = [&](bool is_nan) -> uint32_t {
        if (fnuz) return 0x80u;
        if (format == Minifloat::E5M2) return is_nan ? 0x7fu : (sign | 0x7cu);
        return sign | 0x7fu;
    };
    if (std::isnan(x)) return not_finite(true);
    if (std::isinf(x)) return not_finite(false);
    const double a = std::fabs(x);
    if (a == 0.0) return fnuz ? 0u : sign;
    int e2;
    std::frexp(a, &e2);
    const int unbiased = std::max(e2 - 1, 1 - bias);  // subnormals share the smallest exponent
    const double quantum = std::ldexp(1.0, unbiased - mbits);
    double steps = std::nearbyint(a / quantum);  // the host's default rounding: nearest even
    if (steps * quantum > minifloat_to_double(max_code, format)) return not_finite(false);
    if (steps == 0.0) return fnuz ? 0u : sign;
    int exponent_field = unbiased + bias;
    if (steps >= double(2 << mbits)) {  // rounded up into the next binade
        steps /= 2;
        ++exponent_field;
    }
    uint32_t code;
    if (steps < double(1 << mbits)) {
        code = static_cast<uint32_t>(steps);  // subnormal: exponent field 0
    } else {
        code = static_cast<uint32_t>(exponent_field) << mbits | (static_cast<uint32_t>(steps) - (1u << mbits));
    }
    return sign | code;
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
