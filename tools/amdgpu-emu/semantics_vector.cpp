// VALU: f32 / f64 / packed f32 / integer arithmetic, compares and cndmask, conversions, lane
// operations (readlane, writelane, readfirstlane, mbcnt, permlane swaps), SDWA selection.
#include <cmath>
#include <cstring>
#include <limits>

#include "fp_formats.hpp"
#include "semantics.hpp"

namespace zyfa {
namespace emu {

namespace {

// SDWA source selection (BYTE_n / WORD_n / DWORD, zero- or sign-extended).
uint32_t sdwa_select(uint32_t v, int sel, bool sext) {
    if (sel == 6) return v;
    if (sel <= 3) {
        const uint32_t b = (v >> (8 * sel)) & 0xff;
        return sext ? uint32_t(int32_t(int8_t(b))) : b;
    }
    const uint32_t h = (v >> (16 * (sel - 4))) & 0xffff;
    return sext ? uint32_t(int32_t(int16_t(h))) : h;
}

uint32_t sdwa_dst(uint32_t result, uint32_t old, const Instruction& in) {
    const int sel = in.dst_sel;
    if (sel == 6) return result;
    const int shift = sel <= 3 ? 8 * sel : 16 * (sel - 4);
    const int width = sel <= 3 ? 8 : 16;
    const uint32_t mask = ((1u << width) - 1) << shift;
    const uint32_t field = (result << shift) & mask;
    if (in.dst_unused == 2) return (old & ~mask) | field;  // preserve
    if (in.dst_unused == 1) {                                // sign-extend upward
        uint32_t d = field;
        if ((field >> (shift + width - 1)) & 1) d |= ~((1u << (shift + width)) - 1);
        return d;
    }
    return field;
}

uint32_t src(R& r, const Wave& w, const Instruction& in, int i, int lane) {
    const Operand& op = in.ops.at(i);
    uint32_t v = r.read32(w, op, lane);
    if (in.encoding == "sdwa") {
        const int k = i - in.num_dst;
        if (k >= 0 && k < 2) {
            // Operand modifiers were applied to 32 bits; selection takes the raw field then the float
            // modifiers apply to that field for f32 operations only (not used on f32 here).
            v = sdwa_select(v, in.src_sel[k], op.sext);
        }
    }
    return v;
}

float fsrc(R& r, const Wave& w, const Instruction& in, int i, int lane) { return as_float(src(r, w, in, i, lane)); }

// Output modifiers of f32 results.
uint32_t fout(const Instruction& in, float x) {
    if (in.omod != 1.0f) x = x * in.omod;
    if (in.clamp) x = std::isnan(x) ? 0.0f : std::fmin(std::fmax(x, 0.0f), 1.0f);
    return as_bits(x);
}

void put(R& r, Wave& w, const Instruction& in, int lane, uint32_t value) {
    const Operand& d = in.ops[0];
    if (in.encoding == "sdwa") value = sdwa_dst(value, r.reg(w, d, 0, lane), in);
    r.write32(w, d, lane, value);
}

template <class F>
void each_lane(Wave& w, F f) {
    for (int lane = 0; lane < kLanes; ++lane) {
        if (w.lane_active(lane)) f(lane);
    }
}

// IEEE-mode max/min: a NaN operand yields the other operand; +0 > -0.
float fmax_ieee(float a, float b) {
    if (std::isnan(a)) return std::isnan(b) ? std::numeric_limits<float>::quiet_NaN() : b;
    if (std::isnan(b)) return a;
    if (a == 0.0f && b == 0.0f) return std::signbit(a) ? b : a;
    return a > b ? a : b;
}
float fmin_ieee(float a, float b) {
    if (std::isnan(a)) return std::isnan(b) ? std::numeric_limits<float>::quiet_NaN() : b;
    if (std::isnan(b)) return a;
    if (a == 0.0f && b == 0.0f) return std::signbit(a) ? a : b;
    return a < b ? a : b;
}

// IEEE 754-2019 maximum / minimum (gfx950 v_maximum3_f32 / v_minimum3_f32): NaN when an operand
// is NaN, else the larger / smaller with -0 < +0. The NaN returned is the default quiet NaN
// (whether hardware keeps an input NaN's payload is unconfirmed).
float fmaximum(float a, float b) {
    if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<float>::quiet_NaN();
    if (a == 0.0f && b == 0.0f) return std::signbit(a) ? b : a;
    return a > b ? a : b;
}
float fminimum(float a, float b) {
    if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<float>::quiet_NaN();
    if (a == 0.0f && b == 0.0f) return std::signbit(a) ? a : b;
    return a < b ? a : b;
}

int exponent_of(float x) { return static_cast<int>((as_bits(x) >> 23) & 0xff); }
bool is_denormal(float x) { return x != 0.0f && std::fpclassify(x) == FP_SUBNORMAL; }

double fmax_ieee_d(double a, double b) {
    if (std::isnan(a)) return std::isnan(b) ? std::numeric_limits<double>::quiet_NaN() : b;
    if (std::isnan(b)) return a;
    if (a == 0.0 && b == 0.0) return std::signbit(a) ? b : a;
    return a > b ? a : b;
}
double fmin_ieee_d(double a, double b) {
    if (std::isnan(a)) return std::isnan(b) ? std::numeric_limits<double>::quiet_NaN() : b;
    if (std::isnan(b)) return a;
    if (a == 0.0 && b == 0.0) return std::signbit(a) ? a : b;
    return a < b ? a : b;
}
int exponent_of_d(double x) { return static_cast<int>((as_bits64(x) >> 52) & 0x7ff); }
bool is_denormal_d(double x) { return x != 0.0 && std::fpclassify(x) == FP_SUBNORMAL; }

// Source i of an f64 instruction (a register pair, or a constant as a double).
double dsrc(R& r, const Wave& w, const Instruction& in, int i, int lane) { return as_double(r.read64(w, in.ops.at(i), lane, true)); }

// The f64 forms modelled: VOP1/2/3 without output modifiers.
void f64_plain(R& r, Wave& w, const Instruction& in) {
    if (in.clamp || in.omod != 1.0f) r.fail(w, in, "clamp/omod on an f64 instruction are not modelled");
    if (in.encoding == "sdwa" || in.encoding == "dpp") r.fail(w, in, "the " + in.encoding + " form of " + in.base + " is not modelled");
}

uint32_t cvt_i32(float x) {
    if (std::isnan(x)) return 0;
    if (x >= 2147483648.0f) return 0x7fffffffu;
    if (x < -2147483648.0f) return 0x80000000u;
    return uint32_t(int32_t(std::trunc(x)));
}
uint32_t cvt_u32(float x) {
    if (std::isnan(x) || x <= 0.0f) return 0;
    if (x >= 4294967296.0f) return 0xffffffffu;
    return uint32_t(std::trunc(x));
}

Minifloat format_8bit(const R& r, bool bf8) {
    if (r.arch == Arch::Gfx950) return bf8 ? Minifloat::E5M2 : Minifloat::E4M3Fn;
    return bf8 ? Minifloat::E5M2Fnuz : Minifloat::E4M3Fnuz;
}

// v_cvt_pk_{fp8,bf8}_f32 vD, a, b and v_cvt_scalef32_pk_{fp8,bf8}_f32 vD, a, b, scale (gfx950):
// byte 0 = a, byte 1 = b, rounded to nearest even (double_to_minifloat_rne: overflow gives
// NaN/inf, unconfirmed). The scaled form divides by 2^(exponent of scale - 127): only scale's
// exponent field counts (docs/emulator.md; MLIR's ROCDLOps.td); an exponent field of 255 is refused.
void cvt_pk_8bit(R& r, Wave& w, const Instruction& in, bool bf8, bool scaled) {
    if (scaled && r.arch != Arch::Gfx950) r.fail(w, in, in.base + " exists on gfx950 only");
    if (in.clamp || in.omod != 1.0f) r.fail(w, in, "clamp/omod on an fp8 conversion are not modelled");
    const Minifloat format = format_8bit(r, bf8);
    const bool high = scaled ? in.op_sel[3] != 0 : in.op_sel[2] != 0;
    each_lane(w, [&](int l) {
        double a = as_float(r.read32(w, in.ops[1], l)), b = as_float(r.read32(w, in.ops[2], l));
        if (scaled) {
            const int exponent = static_cast<int>((r.read32(w, in.ops[3], l) >> 23) & 0xff);
            if (exponent == 255) r.fail(w, in, "a scale with exponent field 255 (inf/NaN) is not modelled");
            a = std::ldexp(a, 127 - exponent);
            b = std::ldexp(b, 127 - exponent);
        }
        const uint32_t pair = double_to_minifloat_rne(a, format) | double_to_minifloat_rne(b, format) << 8;
        uint32_t& d = r.reg(w, in.ops[0], 0, l);
        d = high ? (d & 0x0000ffffu) | pair << 16 : (d & 0xffff0000u) | pair;
    });
}

// v_cvt_f32_{fp8,bf8} vD, src (byte 0, or the SDWA byte) and v_cvt_pk_f32_{fp8,bf8} vD[2], src
// (bytes 0 and 1 of the low word, or of the SDWA-selected word). A NaN code gives the default
// quiet NaN (its sign is unconfirmed).
void cvt_from_8bit(R& r, Wave& w, const Instruction& in, bool bf8, bool packed) {
    if (in.encoding == "e64" || in.op_sel[0] || in.op_sel[1]) r.fail(w, in, "the VOP3 (op_sel) form of " + in.base + " is not modelled");
    if (in.clamp || in.omod != 1.0f) r.fail(w, in, "clamp/omod on an fp8 conversion are not modelled");
    const Minifloat format = format_8bit(r, bf8);
    each_lane(w, [&](int l) {
        uint32_t v = r.read32(w, in.ops[1], l);
        if (in.encoding == "sdwa") {
            const int sel = in.src_sel[0];
            if (packed && sel < 4) r.fail(w, in, "a byte select on a packed fp8 conversion is not modelled");
            if (sel != 6) v = sel <= 3 ? (v >> (8 * sel)) & 0xff : (v >> (16 * (sel - 4))) & 0xffff;
            if (in.dst_sel != 6) r.fail(w, in, "dst_sel on an fp8 conversion is not modelled");
        }
        for (int k = 0; k < (packed ? 2 : 1); ++k) {
            const float f = static_cast<float>(minifloat_to_double((v >> (8 * k)) & 0xff, format));
            r.reg(w, in.ops[0], k, l) = as_bits(f);
        }
    });
}

}  // namespace

void register_vector(Registry& reg) {
    const Unit V = Unit::Valu;
    const Unit T = Unit::ValuTrans;
    // ---------------------------------------------------------------- f32
#define ZYFA_VF1(name, unit, expr)                                                                  \
    reg.add(name, [](R& r, Wave& w, const Instruction& in) {                                       \
        each_lane(w, [&](int l) { const float a = fsrc(r, w, in, 1, l); put(r, w, in, l, fout(in, (expr))); }); \
    }, unit, 1);
#define ZYFA_VF2(name, expr)                                                                        \
    reg.add(name, [](R& r, Wave& w, const Instruction& in) {                                       \
        each_lane(w, [&](int l) {                                                                   \
            const float a = fsrc(r, w, in, 1, l), b = fsrc(r, w, in, 2, l);                        \
            put(r, w, in, l, fout(in, (expr))); });                                                 \
    }, V, 1);
#define ZYFA_VF3(name, expr)                                                                        \
    reg.add(name, [](R& r, Wave& w, const Instruction& in) {                                       \
        each_lane(w, [&](int l) {                                                                   \
            const float a = fsrc(r, w, in, 1, l), b = fsrc(r, w, in, 2, l), c = fsrc(r, w, in, 3, l); \
            put(r, w, in, l, fout(in, (expr))); });                                                 \
    }, V, 1);
    ZYFA_VF2("v_add_f32", a + b)
    ZYFA_VF2("v_sub_f32", a - b)
    ZYFA_VF2("v_subrev_f32", b - a)
    ZYFA_VF2("v_mul_f32", a * b)
    ZYFA_VF2("v_max_f32", fmax_ieee(a, b))
    ZYFA_VF2("v_min_f32", fmin_ieee(a, b))
    ZYFA_VF2("v_ldexp_f32", std::ldexp(a, int32_t(as_bits(b))))
    ZYFA_VF3("v_fma_f32", std::fma(a, b, c))
    ZYFA_VF3("v_fmaak_f32", std::fma(a, b, c))  // printed order: D, S0, S1, K
    ZYFA_VF3("v_fmamk_f32", std::fma(a, b, c))  // printed order: D, S0, K, S1
    ZYFA_VF3("v_max3_f32", fmax_ieee(fmax_ieee(a, b), c))
    ZYFA_VF3("v_min3_f32", fmin_ieee(fmin_ieee(a, b), c))
    ZYFA_VF3("v_med3_f32", fmax_ieee(fmin_ieee(a, b), fmin_ieee(fmax_ieee(a, b), c)))
    // gfx950 only (llvm-mc-22 rejects them for gfx942).
    reg.add("v_maximum3_f32", [](R& r, Wave& w, const Instruction& in) {
        if (r.arch != Arch::Gfx950) r.fail(w, in, in.base + " exists on gfx950 only");
        each_lane(w, [&](int l) {
            const float a = fsrc(r, w, in, 1, l), b = fsrc(r, w, in, 2, l), c = fsrc(r, w, in, 3, l);
            put(r, w, in, l, fout(in, fmaximum(fmaximum(a, b), c)));
        });
    }, V, 1);
    reg.add("v_minimum3_f32", [](R& r, Wave& w, const Instruction& in) {
        if (r.arch != Arch::Gfx950) r.fail(w, in, in.base + " exists on gfx950 only");
        each_lane(w, [&](int l) {
            const float a = fsrc(r, w, in, 1, l), b = fsrc(r, w, in, 2, l), c = fsrc(r, w, in, 3, l);
            put(r, w, in, l, fout(in, fminimum(fminimum(a, b), c)));
        });
    }, V, 1);
    ZYFA_VF1("v_trunc_f32", V, std::trunc(a))
    ZYFA_VF1("v_floor_f32", V, std::floor(a))
    ZYFA_VF1("v_ceil_f32", V, std::ceil(a))
    ZYFA_VF1("v_rndne_f32", V, std::nearbyint(a))
    ZYFA_VF1("v_fract_f32", V, std::isinf(a) ? std::numeric_limits<float>::quiet_NaN() : std::fmin(a - std::floor(a), 0x1.fffffep-1f))
    // Transcendentals: the hardware is approximate (about 1 ulp); the emulator uses the correctly
    // rounded libm result, so these are the one place the emulator is not bit-exact by design.
    ZYFA_VF1("v_exp_f32", T, std::exp2(a))
    ZYFA_VF1("v_log_f32", T, std::log2(a))
    ZYFA_VF1("v_rcp_f32", T, 1.0f / a)
    ZYFA_VF1("v_rcp_iflag_f32", T, 1.0f / a)
    ZYFA_VF1("v_rsq_f32", T, 1.0f / std::sqrt(a))
    ZYFA_VF1("v_sqrt_f32", T, std::sqrt(a))
    reg.add("v_fmac_f32", [](R& r, Wave& w, const Instruction& in) {
        each_lane(w, [&](int l) {
            put(r, w, in, l, fout(in, std::fma(fsrc(r, w, in, 1, l), fsrc(r, w, in, 2, l), as_float(r.read32(w, in.ops[0], l)))));
        });
    }, V, 1, true);
    // Division helpers (the v_div_scale / v_rcp / fma / v_div_fmas / v_div_fixup sequence).
    reg.add("v_div_scale_f32", [](R& r, Wave& w, const Instruction& in) {
        uint64_t vcc = 0;
        each_lane(w, [&](int l) {
            const float s0 = fsrc(r, w, in, 2, l), s1 = fsrc(r, w, in, 3, l), s2 = fsrc(r, w, in, 4, l);
            float d = s0;
            bool flag = false;
            const float quotient = s2 / s1;
            if (s2 == 0.0f || s1 == 0.0f) {
                d = std::numeric_limits<float>::quiet_NaN();
            } else if (exponent_of(s2) - exponent_of(s1) >= 96) {
                flag = true;
                if (s0 == s1) d = std::ldexp(s0, 64);
            } else if (is_denormal(s1)) {
                d = std::ldexp(s0, 64);
            } else if (is_denormal(1.0f / s1) && !is_denormal(quotient)) {
                flag = true;
                if (s0 == s1) d = std::ldexp(s0, 64);
            } else if (is_denormal(1.0f / s1) && is_denormal(quotient)) {
                d = std::ldexp(s0, 64);
            } else if (is_denormal(quotient)) {
                flag = true;
                if (s0 == s2) d = std::ldexp(s0, 64);
            } else if (exponent_of(s2) <= 23) {
                d = std::ldexp(s0, 64);
            }
            r.write32(w, in.ops[0], l, as_bits(d));
            if (flag) vcc |= uint64_t(1) << l;
        });
        r.write_scalar64(w, in.ops[1], vcc);
    }, V, 2);
    reg.add("v_div_fmas_f32", [](R& r, Wave& w, const Instruction& in) {
        if (w.vcc & w.exec) {
            r.fail(w, in, "v_div_fmas_f32 with VCC set (a division at the edge of the f32 range) is not modelled");
        }
        each_lane(w, [&](int l) {
            put(r, w, in, l, fout(in, std::fma(fsrc(r, w, in, 1, l), fsrc(r, w, in, 2, l), fsrc(r, w, in, 3, l))));
        });
    }, V, 1);
    reg.add("v_div_fixup_f32", [](R& r, Wave& w, const Instruction& in) {
        each_lane(w, [&](int l) {
            const float q = fsrc(r, w, in, 1, l), den = fsrc(r, w, in, 2, l), num = fsrc(r, w, in, 3, l);
            const bool sign = std::signbit(den) != std::signbit(num);
            const float inf = std::numeric_limits<float>::infinity();
            float d;
            if (std::isnan(num)) {
                d = num;
            } else if (std::isnan(den)) {
                d = den;
            } else if (den == 0.0f && num == 0.0f) {
                d = std::numeric_limits<float>::quiet_NaN();
            } else if (std::isinf(den) && std::isinf(num)) {
                d = std::numeric_limits<float>::quiet_NaN();
            } else if (den == 0.0f || std::isinf(num)) {
                d = sign ? -inf : inf;
            } else if (std::isinf(den) || num == 0.0f) {
                d = sign ? -0.0f : 0.0f;
            } else if (std::isnan(q)) {
                d = sign ? -inf : inf;  // overflow in the scaled path
            } else {
                d = sign ? -std::fabs(q) : std::fabs(q);
            }
            put(r, w, in, l, fout(in, d));
        });
    }, V, 1);
#undef ZYFA_VF1
#undef ZYFA_VF2
#undef ZYFA_VF3

    // ---------------------------------------------------------------- f64
    // What compiled fp64 sums and divisions use (zyfa_quantize_fp8's K-smoothing means,
    // common/smooth_mean.h). IEEE results, operand neg/abs through read64; output modifiers and
    // SDWA/DPP forms are refused rather than guessed.
#define ZYFA_VD(name, unit, nsrc, expr)                                                             \
    reg.add(name, [](R& r, Wave& w, const Instruction& in) {                                       \
        f64_plain(r, w, in);                                                                        \
        each_lane(w, [&](int l) {                                                                   \
            const double a = dsrc(r, w, in, 1, l);                                                  \
            const double b = (nsrc) > 1 ? dsrc(r, w, in, 2, l) : 0.0;                               \
            const double c = (nsrc) > 2 ? dsrc(r, w, in, 3, l) : 0.0;                               \
            (void)b;                                                                                \
            (void)c;                                                                                \
            r.write64(w, in.ops[0], l, as_bits64(expr));                                            \
        });                                                                                         \
    }, unit, 1);
    ZYFA_VD("v_add_f64", V, 2, a + b)
    ZYFA_VD("v_mul_f64", V, 2, a * b)
    ZYFA_VD("v_fma_f64", V, 3, std::fma(a, b, c))
    ZYFA_VD("v_max_f64", V, 2, fmax_ieee_d(a, b))
    ZYFA_VD("v_min_f64", V, 2, fmin_ieee_d(a, b))
    // As v_rcp_f32: the correctly rounded reciprocal, where hardware's is approximate (about 1
    // ulp); a division refines it with fma steps, so its result is the IEEE quotient either way.
    ZYFA_VD("v_rcp_f64", T, 1, 1.0 / a)
#undef ZYFA_VD
    reg.add("v_fmac_f64", [](R& r, Wave& w, const Instruction& in) {
        f64_plain(r, w, in);
        each_lane(w, [&](int l) {
            const double acc = as_double(r.read64(w, in.ops[0], l, true));
            r.write64(w, in.ops[0], l, as_bits64(std::fma(dsrc(r, w, in, 1, l), dsrc(r, w, in, 2, l), acc)));
        });
    }, V, 1, true);
    reg.add("v_ldexp_f64", [](R& r, Wave& w, const Instruction& in) {
        f64_plain(r, w, in);
        each_lane(w, [&](int l) {
            r.write64(w, in.ops[0], l, as_bits64(std::ldexp(dsrc(r, w, in, 1, l), int32_t(r.read32(w, in.ops[2], l)))));
        });
    }, V, 1);
    reg.add("v_cvt_f64_f32", [](R& r, Wave& w, const Instruction& in) {
        f64_plain(r, w, in);
        each_lane(w, [&](int l) { r.write64(w, in.ops[0], l, as_bits64(double(fsrc(r, w, in, 1, l)))); });
    }, V, 1);
    reg.add("v_cvt_f64_u32", [](R& r, Wave& w, const Instruction& in) {
        f64_plain(r, w, in);
        each_lane(w, [&](int l) { r.write64(w, in.ops[0], l, as_bits64(double(r.read32(w, in.ops[1], l)))); });
    }, V, 1);
    reg.add("v_cvt_f64_i32", [](R& r, Wave& w, const Instruction& in) {
        f64_plain(r, w, in);
        each_lane(w, [&](int l) { r.write64(w, in.ops[0], l, as_bits64(double(int32_t(r.read32(w, in.ops[1], l))))); });
    }, V, 1);
    // Round to nearest even (the default mode), denormal results kept.
    reg.add("v_cvt_f32_f64", [](R& r, Wave& w, const Instruction& in) {
        f64_plain(r, w, in);
        each_lane(w, [&](int l) { r.write32(w, in.ops[0], l, as_bits(static_cast<float>(dsrc(r, w, in, 1, l)))); });
    }, V, 1);
    // The f64 forms of the division helpers: v_div_scale_f32's cases with the f64 thresholds
    // (exponent difference 768, scale 2^128, numerator exponent <= 53).
    reg.add("v_div_scale_f64", [](R& r, Wave& w, const Instruction& in) {
        f64_plain(r, w, in);
        uint64_t vcc = 0;
        each_lane(w, [&](int l) {
            const double s0 = dsrc(r, w, in, 2, l), s1 = dsrc(r, w, in, 3, l), s2 = dsrc(r, w, in, 4, l);
            double d = s0;
            bool flag = false;
            const double quotient = s2 / s1;
            if (s2 == 0.0 || s1 == 0.0) {
                d = std::numeric_limits<double>::quiet_NaN();
            } else if (exponent_of_d(s2) - exponent_of_d(s1) >= 768) {
                flag = true;
                if (s0 == s1) d = std::ldexp(s0, 128);
            } else if (is_denormal_d(s1)) {
                d = std::ldexp(s0, 128);
            } else if (is_denormal_d(1.0 / s1) && !is_denormal_d(quotient)) {
                flag = true;
                if (s0 == s1) d = std::ldexp(s0, 128);
            } else if (is_denormal_d(1.0 / s1) && is_denormal_d(quotient)) {
                d = std::ldexp(s0, 128);
            } else if (is_denormal_d(quotient)) {
                flag = true;
                if (s0 == s2) d = std::ldexp(s0, 128);
            } else if (exponent_of_d(s2) <= 53) {
                d = std::ldexp(s0, 128);
            }
            r.write64(w, in.ops[0], l, as_bits64(d));
            if (flag) vcc |= uint64_t(1) << l;
        });
        r.write_scalar64(w, in.ops[1], vcc);
    }, V, 2);
    reg.add("v_div_fmas_f64", [](R& r, Wave& w, const Instruction& in) {
        f64_plain(r, w, in);
        if (w.vcc & w.exec) {
            r.fail(w, in, "v_div_fmas_f64 with VCC set (a division at the edge of the f64 range) is not modelled");
        }
        each_lane(w, [&](int l) {
            r.write64(w, in.ops[0], l, as_bits64(std::fma(dsrc(r, w, in, 1, l), dsrc(r, w, in, 2, l), dsrc(r, w, in, 3, l))));
        });
    }, V, 1);
    reg.add("v_div_fixup_f64", [](R& r, Wave& w, const Instruction& in) {
        f64_plain(r, w, in);
        each_lane(w, [&](int l) {
            const double q = dsrc(r, w, in, 1, l), den = dsrc(r, w, in, 2, l), num = dsrc(r, w, in, 3, l);
            const bool sign = std::signbit(den) != std::signbit(num);
            const double inf = std::numeric_limits<double>::infinity();
            double d;
            if (std::isnan(num)) {
                d = num;
            } else if (std::isnan(den)) {
                d = den;
            } else if ((den == 0.0 && num == 0.0) || (std::isinf(den) && std::isinf(num))) {
                d = std::numeric_limits<double>::quiet_NaN();
            } else if (den == 0.0 || std::isinf(num)) {
                d = sign ? -inf : inf;
            } else if (std::isinf(den) || num == 0.0) {
                d = sign ? -0.0 : 0.0;
            } else if (std::isnan(q)) {
                d = sign ? -inf : inf;  // overflow in the scaled path
            } else {
                d = sign ? -std::fabs(q) : std::fabs(q);
            }
            r.write64(w, in.ops[0], l, as_bits64(d));
        });
    }, V, 1);

    // ---------------------------------------------------------------- packed f32 (64-bit pairs)
#define ZYFA_VPK(name, nsrc, expr)                                                                      \
    reg.add(name, [](R& r, Wave& w, const Instruction& in) {                                           \
        for (int i = 1; i <= (nsrc); ++i) {                                                             \
            if (in.ops[i].kind == OperandKind::Constant) r.fail(w, in, "packed f32 with a constant operand is not modelled"); \
        }                                                                                               \
        each_lane(w, [&](int l) {                                                                       \
            float x[2][3] = {};                                                                         \
            for (int i = 0; i < (nsrc); ++i) {                                                          \
                const Operand& op = in.ops[i + 1];                                                      \
                const uint32_t lo = r.reg_value(w, op, 0, l), hi = r.reg_value(w, op, 1, l);            \
                x[0][i] = as_float((in.op_sel[i] ? hi : lo) ^ (in.neg_lo[i] ? 0x80000000u : 0u));       \
                x[1][i] = as_float((in.op_sel_hi[i] ? hi : lo) ^ (in.neg_hi[i] ? 0x80000000u : 0u));    \
            }                                                                                           \
            for (int h = 0; h < 2; ++h) {                                                               \
                const float a = x[h][0], b = x[h][1], c = x[h][2];                                      \
                (void)c;                                                                                \
                r.reg(w, in.ops[0], h, l) = fout(in, (expr));                                           \
            }                                                                                           \
        });                                                                                             \
    }, V, 1);
    ZYFA_VPK("v_pk_add_f32", 2, a + b)
    ZYFA_VPK("v_pk_mul_f32", 2, a * b)
    ZYFA_VPK("v_pk_fma_f32", 3, std::fma(a, b, c))
#undef ZYFA_VPK

    // ---------------------------------------------------------------- integer
#define ZYFA_VI1(name, expr)                                                                        \
    reg.add(name, [](R& r, Wave& w, const Instruction& in) {                                       \
        each_lane(w, [&](int l) { const uint32_t a = src(r, w, in, 1, l); put(r, w, in, l, (expr)); }); \
    }, V, 1);
#define ZYFA_VI2(name, expr)                                                                        \
    reg.add(name, [](R& r, Wave& w, const Instruction& in) {                                       \
        each_lane(w, [&](int l) {                                                                   \
            const uint32_t a = src(r, w, in, 1, l), b = src(r, w, in, 2, l);                       \
            put(r, w, in, l, (expr)); });                                                           \
    }, V, 1);
#define ZYFA_VI3(name, expr)                                                                        \
    reg.add(name, [](R& r, Wave& w, const Instruction& in) {                                       \
        each_lane(w, [&](int l) {                                                                   \
            const uint32_t a = src(r, w, in, 1, l), b = src(r, w, in, 2, l), c = src(r, w, in, 3, l); \
            put(r, w, in, l, (expr)); });                                                           \
    }, V, 1);
    ZYFA_VI1("v_mov_b32", a)
    ZYFA_VI1("v_not_b32", ~a)
    ZYFA_VI1("v_bfrev_b32", [](uint32_t x) { uint32_t d = 0; for (int i = 0; i < 32; ++i) d |= ((x >> i) & 1u) << (31 - i); return d; }(a))
    ZYFA_VI1("v_accvgpr_read_b32", a)
    ZYFA_VI1("v_accvgpr_write_b32", a)
    ZYFA_VI1("v_accvgpr_mov_b32", a)
    ZYFA_VI2("v_add_u32", a + b)
    ZYFA_VI2("v_sub_u32", a - b)
    ZYFA_VI2("v_subrev_u32", b - a)
    ZYFA_VI2("v_and_b32", a & b)
    ZYFA_VI2("v_or_b32", a | b)
    ZYFA_VI2("v_xor_b32", a ^ b)
    ZYFA_VI2("v_lshlrev_b32", b << (a & 31))
    ZYFA_VI2("v_lshrrev_b32", b >> (a & 31))
    ZYFA_VI2("v_ashrrev_i32", uint32_t(int32_t(b) >> (a & 31)))
    ZYFA_VI2("v_min_i32", int32_t(a) < int32_t(b) ? a : b)
    ZYFA_VI2("v_max_i32", int32_t(a) > int32_t(b) ? a : b)
    ZYFA_VI2("v_min_u32", a < b ? a : b)
    ZYFA_VI2("v_max_u32", a > b ? a : b)
    ZYFA_VI2("v_mul_lo_u32", a * b)
    ZYFA_VI2("v_mul_hi_u32", uint32_t((uint64_t(a) * b) >> 32))
    ZYFA_VI2("v_mul_hi_i32", uint32_t(uint64_t(int64_t(int32_t(a)) * int32_t(b)) >> 32))
    ZYFA_VI2("v_mul_u32_u24", (a & 0xffffff) * (b & 0xffffff))
    ZYFA_VI2("v_mul_hi_u32_u24", uint32_t((uint64_t(a & 0xffffff) * (b & 0xffffff)) >> 32))
    ZYFA_VI2("v_mul_i32_i24", uint32_t((int32_t(a << 8) >> 8) * (int32_t(b << 8) >> 8)))
    // 16-bit integer ops: gfx9 writes the low half and zeroes the high half (LLVM's
    // zeroesHigh16BitsOfDest for the GFX9 generation).
    ZYFA_VI2("v_add_u16", (a + b) & 0xffff)
    ZYFA_VI2("v_sub_u16", (a - b) & 0xffff)
    ZYFA_VI2("v_subrev_u16", (b - a) & 0xffff)
    ZYFA_VI2("v_mul_lo_u16", (a * b) & 0xffff)
    ZYFA_VI2("v_lshlrev_b16", ((b & 0xffff) << (a & 15)) & 0xffff)
    ZYFA_VI2("v_lshrrev_b16", (b & 0xffff) >> (a & 15))
    ZYFA_VI3("v_add3_u32", a + b + c)
    ZYFA_VI3("v_lshl_add_u32", (a << (b & 31)) + c)
    ZYFA_VI3("v_add_lshl_u32", (a + b) << (c & 31))
    ZYFA_VI3("v_lshl_or_b32", (a << (b & 31)) | c)
    ZYFA_VI3("v_and_or_b32", (a & b) | c)
    ZYFA_VI3("v_or3_b32", a | b | c)
    ZYFA_VI3("v_xad_u32", (a ^ b) + c)
    ZYFA_VI3("v_bfi_b32", (a & b) | (~a & c))
    ZYFA_VI3("v_alignbit_b32", uint32_t(((uint64_t(a) << 32) | b) >> (c & 31)))
    ZYFA_VI3("v_bfe_u32", (c & 31) == 0 ? 0u : ((a >> (b & 31)) & (((c & 31) == 32) ? ~0u : ((1u << (c & 31)) - 1))))
    ZYFA_VI3("v_bfe_i32", (c & 31) == 0 ? 0u : uint32_t((int32_t((a >> (b & 31)) << (32 - (c & 31)))) >> (32 - (c & 31))))
    ZYFA_VI3("v_min3_i32", uint32_t(std::min(std::min(int32_t(a), int32_t(b)), int32_t(c))))
    ZYFA_VI3("v_max3_i32", uint32_t(std::max(std::max(int32_t(a), int32_t(b)), int32_t(c))))
    ZYFA_VI3("v_min3_u32", std::min(std::min(a, b), c))
    ZYFA_VI3("v_max3_u32", std::max(std::max(a, b), c))
    ZYFA_VI3("v_mad_u32_u24", (a & 0xffffff) * (b & 0xffffff) + c)
    // gfx950 bitop3: bit i of the result is table[(a_i << 2) | (b_i << 1) | c_i]. The b16 form
    // writes the low half and zeroes the high half (unconfirmed: docs/emulator.md).
    reg.add("v_bitop3_b32", [](R& r, Wave& w, const Instruction& in) {
        each_lane(w, [&](int l) {
            const uint32_t a = src(r, w, in, 1, l), b = src(r, w, in, 2, l), c = src(r, w, in, 3, l);
            uint32_t d = 0;
            for (int i = 0; i < 32; ++i) {
                const int idx = int(((a >> i) & 1) << 2 | ((b >> i) & 1) << 1 | ((c >> i) & 1));
                d |= uint32_t((in.bitop3 >> idx) & 1) << i;
            }
            put(r, w, in, l, d);
        });
    }, V, 1);
    reg.add("v_bitop3_b16", [](R& r, Wave& w, const Instruction& in) {
        if (in.op_sel[0] || in.op_sel[1] || in.op_sel[2] || in.op_sel[3]) r.fail(w, in, "v_bitop3_b16 with op_sel is not modelled");
        each_lane(w, [&](int l) {
            const uint32_t a = src(r, w, in, 1, l), b = src(r, w, in, 2, l), c = src(r, w, in, 3, l);
            uint32_t d = 0;
            for (int i = 0; i < 16; ++i) {
                const int idx = int(((a >> i) & 1) << 2 | ((b >> i) & 1) << 1 | ((c >> i) & 1));
                d |= uint32_t((in.bitop3 >> idx) & 1) << i;
            }
            put(r, w, in, l, d);
        });
    }, V, 1);
    // 64-bit.
    reg.add("v_mov_b64", [](R& r, Wave& w, const Instruction& in) {
        each_lane(w, [&](int l) { r.write64(w, in.ops[0], l, r.read64(w, in.ops[1], l)); });
    }, V, 1);
    reg.add("v_lshlrev_b64", [](R& r, Wave& w, const Instruction& in) {
        each_lane(w, [&](int l) { r.write64(w, in.ops[0], l, r.read64(w, in.ops[2], l) << (r.read32(w, in.ops[1], l) & 63)); });
    }, V, 1);
    reg.add("v_lshrrev_b64", [](R& r, Wave& w, const Instruction& in) {
        each_lane(w, [&](int l) { r.write64(w, in.ops[0], l, r.read64(w, in.ops[2], l) >> (r.read32(w, in.ops[1], l) & 63)); });
    }, V, 1);
    reg.add("v_ashrrev_i64", [](R& r, Wave& w, const Instruction& in) {
        each_lane(w, [&](int l) { r.write64(w, in.ops[0], l, uint64_t(int64_t(r.read64(w, in.ops[2], l)) >> (r.read32(w, in.ops[1], l) & 63))); });
    }, V, 1);
    reg.add("v_lshl_add_u64", [](R& r, Wave& w, const Instruction& in) {
        each_lane(w, [&](int l) {
            r.write64(w, in.ops[0], l, (r.read64(w, in.ops[1], l) << (r.read32(w, in.ops[2], l) & 63)) + r.read64(w, in.ops[3], l));
        });
    }, V, 1);
    reg.add("v_mad_u64_u32", [](R& r, Wave& w, const Instruction& in) {
        uint64_t carry = 0;
        each_lane(w, [&](int l) {
            const unsigned __int128 p = (unsigned __int128)(uint64_t(r.read32(w, in.ops[2], l)) * r.read32(w, in.ops[3], l)) +
                                        r.read64(w, in.ops[4], l);
            r.write64(w, in.ops[0], l, uint64_t(p));
            if (p >> 64) carry |= uint64_t(1) << l;
        });
        r.write_scalar64(w, in.ops[1], carry);
    }, V, 2);
    reg.add("v_mad_i64_i32", [](R& r, Wave& w, const Instruction& in) {
        uint64_t carry = 0;
        each_lane(w, [&](int l) {
            const __int128 p = (__int128)(int64_t(int32_t(r.read32(w, in.ops[2], l))) * int32_t(r.read32(w, in.ops[3], l))) +
                               int64_t(r.read64(w, in.ops[4], l));
            r.write64(w, in.ops[0], l, uint64_t(p));
            if (p != (__int128)(int64_t)p) carry |= uint64_t(1) << l;
        });
        r.write_scalar64(w, in.ops[1], carry);
    }, V, 2);
    // Carry-out forms: D, sdst(carry), S0, S1 [, carry-in].
#define ZYFA_VCARRY(name, nsrc, expr)                                                              \
    reg.add(name, [](R& r, Wave& w, const Instruction& in) {                                      \
        uint64_t out = 0;                                                                          \
        const uint64_t cin_mask = (nsrc) == 3 ? r.read_scalar64(w, in.ops[4]) : 0;                \
        each_lane(w, [&](int l) {                                                                  \
            const uint64_t a = src(r, w, in, 2, l), b = src(r, w, in, 3, l);                      \
            const uint64_t ci = (cin_mask >> l) & 1;                                               \
            (void)ci;                                                                              \
            const uint64_t wide = (expr);                                                          \
            r.write32(w, in.ops[0], l, uint32_t(wide));                                            \
            if ((wide >> 32) & 1) out |= uint64_t(1) << l;                                         \
        });                                                                                        \
        r.write_scalar64(w, in.ops[1], out);                                                       \
    }, V, 2);
    ZYFA_VCARRY("v_add_co_u32", 2, a + b)
    ZYFA_VCARRY("v_addc_co_u32", 3, a + b + ci)
    ZYFA_VCARRY("v_sub_co_u32", 2, a - b)
    ZYFA_VCARRY("v_subb_co_u32", 3, a - b - ci)
    ZYFA_VCARRY("v_subrev_co_u32", 2, b - a)
    ZYFA_VCARRY("v_subbrev_co_u32", 3, b - a - ci)
#undef ZYFA_VCARRY
    reg.add("v_cndmask_b32", [](R& r, Wave& w, const Instruction& in) {
        const uint64_t mask = r.read_scalar64(w, in.ops.at(3));
        each_lane(w, [&](int l) { put(r, w, in, l, ((mask >> l) & 1) ? src(r, w, in, 2, l) : src(r, w, in, 1, l)); });
    }, V, 1);

    // ---------------------------------------------------------------- conversions
    ZYFA_VI1("v_cvt_i32_f32", cvt_i32(as_float(a)))
    ZYFA_VI1("v_cvt_u32_f32", cvt_u32(as_float(a)))
    ZYFA_VI1("v_cvt_f32_i32", as_bits(float(int32_t(a))))
    ZYFA_VI1("v_cvt_f32_u32", as_bits(float(a)))
    ZYFA_VI1("v_cvt_f32_ubyte0", as_bits(float(a & 0xff)))
    ZYFA_VI1("v_cvt_f32_ubyte1", as_bits(float((a >> 8) & 0xff)))
    ZYFA_VI1("v_cvt_f32_ubyte2", as_bits(float((a >> 16) & 0xff)))
    ZYFA_VI1("v_cvt_f32_ubyte3", as_bits(float(a >> 24)))
    // fp8 / bf8 (gfx942: fnuz formats, gfx950: OCP). Packed conversions write two bytes into the
    // low word of vD, or the high word with op_sel (dst bit, op_sel[2]; op_sel[3] for the scaled
    // form); the other word is kept.
    reg.add("v_cvt_pk_fp8_f32", [](R& r, Wave& w, const Instruction& in) { cvt_pk_8bit(r, w, in, false, false); }, V, 1, true);
    reg.add("v_cvt_pk_bf8_f32", [](R& r, Wave& w, const Instruction& in) { cvt_pk_8bit(r, w, in, true, false); }, V, 1, true);
    reg.add("v_cvt_scalef32_pk_fp8_f32", [](R& r, Wave& w, const Instruction& in) { cvt_pk_8bit(r, w, in, false, true); }, V, 1, true);
    reg.add("v_cvt_scalef32_pk_bf8_f32", [](R& r, Wave& w, const Instruction& in) { cvt_pk_8bit(r, w, in, true, true); }, V, 1, true);
    // 8-bit float -> f32: byte 0 (e32), or the SDWA-selected byte / word.
    reg.add("v_cvt_f32_fp8", [](R& r, Wave& w, const Instruction& in) { cvt_from_8bit(r, w, in, false, false); }, V, 1);
    reg.add("v_cvt_f32_bf8", [](R& r, Wave& w, const Instruction& in) { cvt_from_8bit(r, w, in, true, false); }, V, 1);
    reg.add("v_cvt_pk_f32_fp8", [](R& r, Wave& w, const Instruction& in) { cvt_from_8bit(r, w, in, false, true); }, V, 1);
    reg.add("v_cvt_pk_f32_bf8", [](R& r, Wave& w, const Instruction& in) { cvt_from_8bit(r, w, in, true, true); }, V, 1);
    ZYFA_VI2("v_cvt_pk_bf16_f32", uint32_t(float_to_bf16_rne(as_float(a))) | uint32_t(float_to_bf16_rne(as_float(b))) << 16)
    ZYFA_VI2("v_cvt_pk_f16_f32", uint32_t(float_to_fp16_rne(as_float(a))) | uint32_t(float_to_fp16_rne(as_float(b))) << 16)
#undef ZYFA_VI1
#undef ZYFA_VI2
#undef ZYFA_VI3

    // ---------------------------------------------------------------- compares
#define ZYFA_VCMP(name, type, expr)                                                                     \
    reg.add(name, [](R& r, Wave& w, const Instruction& in) {                                           \
        uint64_t mask = 0;                                                                              \
        each_lane(w, [&](int l) {                                                                       \
            const type a = ZYFA_LOAD_##type(1), b = ZYFA_LOAD_##type(2);                                \
            if (expr) mask |= uint64_t(1) << l;                                                         \
        });                                                                                             \
        r.write_scalar64(w, in.ops[0], mask);                                                           \
    }, V, 1);
#define ZYFA_LOAD_float(i) fsrc(r, w, in, i, l)
#define ZYFA_LOAD_int32_t(i) int32_t(src(r, w, in, i, l))
#define ZYFA_LOAD_uint32_t(i) src(r, w, in, i, l)
#define ZYFA_LOAD_int64_t(i) int64_t(r.read64(w, in.ops[i], l))
#define ZYFA_LOAD_uint64_t(i) r.read64(w, in.ops[i], l)
#define ZYFA_VCMP_INT(suffix, type)                                                                     \
    ZYFA_VCMP("v_cmp_eq_" suffix, type, a == b) ZYFA_VCMP("v_cmp_ne_" suffix, type, a != b)             \
    ZYFA_VCMP("v_cmp_lt_" suffix, type, a < b) ZYFA_VCMP("v_cmp_le_" suffix, type, a <= b)              \
    ZYFA_VCMP("v_cmp_gt_" suffix, type, a > b) ZYFA_VCMP("v_cmp_ge_" suffix, type, a >= b)
    ZYFA_VCMP_INT("i32", int32_t)
    ZYFA_VCMP_INT("u32", uint32_t)
    ZYFA_VCMP_INT("i64", int64_t)
    ZYFA_VCMP_INT("u64", uint64_t)
    ZYFA_VCMP("v_cmp_eq_f32", float, a == b) ZYFA_VCMP("v_cmp_lg_f32", float, a < b || a > b)
    ZYFA_VCMP("v_cmp_lt_f32", float, a < b) ZYFA_VCMP("v_cmp_le_f32", float, a <= b)
    ZYFA_VCMP("v_cmp_gt_f32", float, a > b) ZYFA_VCMP("v_cmp_ge_f32", float, a >= b)
    ZYFA_VCMP("v_cmp_o_f32", float, !std::isnan(a) && !std::isnan(b))
    ZYFA_VCMP("v_cmp_u_f32", float, std::isnan(a) || std::isnan(b))
    ZYFA_VCMP("v_cmp_neq_f32", float, !(a == b)) ZYFA_VCMP("v_cmp_nlg_f32", float, !(a < b || a > b))
    ZYFA_VCMP("v_cmp_nlt_f32", float, !(a < b)) ZYFA_VCMP("v_cmp_nle_f32", float, !(a <= b))
    ZYFA_VCMP("v_cmp_ngt_f32", float, !(a > b)) ZYFA_VCMP("v_cmp_nge_f32", float, !(a >= b))
#undef ZYFA_VCMP_INT
#undef ZYFA_VCMP

    // ---------------------------------------------------------------- lanes
    reg.add("v_readlane_b32", [](R& r, Wave& w, const Instruction& in) {
        const int lane = int(r.read_scalar32(w, in.ops[2]) & 63);
        r.write_scalar32(w, in.ops[0], r.reg(w, in.ops[1], 0, lane));
    }, V, 1);
    reg.add("v_readfirstlane_b32", [](R& r, Wave& w, const Instruction& in) {
        const int lane = w.exec ? __builtin_ctzll(w.exec) : 0;
        r.write_scalar32(w, in.ops[0], r.read32(w, in.ops[1], lane));
    }, V, 1);
    reg.add("v_writelane_b32", [](R& r, Wave& w, const Instruction& in) {
        const int lane = int(r.read_scalar32(w, in.ops[2]) & 63);
        r.reg(w, in.ops[0], 0, lane) = r.read_scalar32(w, in.ops[1]);
    }, V, 1, true);
    reg.add("v_mbcnt_lo_u32_b32", [](R& r, Wave& w, const Instruction& in) {
        each_lane(w, [&](int l) {
            const uint32_t below = l >= 32 ? 0xffffffffu : (1u << l) - 1;
            put(r, w, in, l, uint32_t(__builtin_popcount(src(r, w, in, 1, l) & below)) + src(r, w, in, 2, l));
        });
    }, V, 1);
    reg.add("v_mbcnt_hi_u32_b32", [](R& r, Wave& w, const Instruction& in) {
        each_lane(w, [&](int l) {
            const uint32_t below = l < 32 ? 0u : l == 63 ? 0x7fffffffu : (1u << (l - 32)) - 1;
            put(r, w, in, l, uint32_t(__builtin_popcount(src(r, w, in, 1, l) & below)) + src(r, w, in, 2, l));
        });
    }, V, 1);
    // gfx950: swap vA's upper 32 lanes with vB's lower 32 (permlane32), or vA's odd 16-lane rows
    // with vB's even rows (permlane16). Both operands are written.
    reg.add("v_permlane32_swap_b32", [](R& r, Wave& w, const Instruction& in) {
        if (r.arch != Arch::Gfx950) r.fail(w, in, "v_permlane32_swap_b32 exists on gfx950 only");
        for (int l = 0; l < 32; ++l) {
            if (!w.lane_active(l) || !w.lane_active(l + 32)) continue;
            std::swap(r.reg(w, in.ops[0], 0, l + 32), r.reg(w, in.ops[1], 0, l));
        }
    }, V, 2, true);
    reg.add("v_permlane16_swap_b32", [](R& r, Wave& w, const Instruction& in) {
        if (r.arch != Arch::Gfx950) r.fail(w, in, "v_permlane16_swap_b32 exists on gfx950 only");
        for (int row = 0; row < 4; row += 2) {
            for (int i = 0; i < 16; ++i) {
                const int la = (row + 1) * 16 + i, lb = row * 16 + i;
                if (!w.lane_active(la) || !w.lane_active(lb)) continue;
                std::swap(r.reg(w, in.ops[0], 0, la), r.reg(w, in.ops[1], 0, lb));
            }
        }
    }, V, 2, true);
}

}  // namespace emu
}  // namespace zyfa
