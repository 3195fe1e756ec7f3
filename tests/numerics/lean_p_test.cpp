// Lean P against the exact exponential: the code from one FMA and one conversion decodes to
// 2^x within a stated bound; the block scale keeps each block's maximum in (2^7, 2^8].
#include <cfenv>
#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <limits>

#include "cmocka_cpp.hpp"
#include "common/block_scale.h"
#include "common/fp8_e4m3.h"
#include "common/lean_anchor.h"
#include "common/lean_p.h"

using namespace zyfa::numerics;

namespace {

struct ErrorOverGrid {
    double rms = 0.0, max_abs = 0.0, mean = 0.0;
};

// Relative error of decode(code(x)) against 2^(x + k) for x = t - m uniformly over [-8, 0),
// k = base exponent, running max m = 0.75 (any value: the error is periodic in x).
ErrorOverGrid lean_p_error(Fp8Format f, FloatToIntRounding rounding) {
    const int k = p_scale_base_exponent(f);
    const float m = 0.75f, scale_log2 = 1.0f;
    const float bias = lean_p_bias(m, k, lean_p_centre_for(rounding), f);
    ErrorOverGrid e;
    const int n = 1 << 16;
    for (int i = 0; i < n; ++i) {
        const float s = m - 8.0f * (static_cast<float>(i) + 0.5f) / n;  // raw score; x = s - m
        const uint8_t code = lean_p_code(s, 8.0f * scale_log2, bias, rounding, f);
        const double exact = std::exp2(static_cast<double>(s) - m + k);
        const double rel = fp8_decode(code, f) / exact - 1.0;
        e.rms += rel * rel;
        e.mean += rel;
        e.max_abs = std::fmax(e.max_abs, std::fabs(rel));
    }
    e.rms = std::sqrt(e.rms / n);
    e.mean /= n;
    return e;
}

// The bound: code = round(8x + 56 + c) reads back as the piecewise-linear 2^floor * (1 + frac),
// which overestimates 2^x by up to 8.6% (at frac = 0.557); c = -15/32 shifts by 2^(-c/8) and the
// rounding of the code adds up to 2^(1/16). Measured (2026-11-29): max 8.3%, RMS 3.14%, mean
// -0.1%, against RMS 2.65% for exp2 rounded to e4m3 with round-to-nearest-even.
void check_bound(Fp8Format f, FloatToIntRounding rounding) {
    const ErrorOverGrid e = lean_p_error(f, rounding);
    assert_true(e.max_abs < 0.085);
    assert_true(e.rms < 0.0320);
    assert_true(std::fabs(e.mean) < 0.005);  // centred: the reason for c
}

void test_lean_p_bound_e4m3fn_rne(void**) { check_bound(Fp8Format::E4M3FN, FloatToIntRounding::NearestEven); }
void test_lean_p_bound_e4m3fn_trunc(void**) { check_bound(Fp8Format::E4M3FN, FloatToIntRounding::TowardZero); }
void test_lean_p_bound_e4m3fnuz(void**) { check_bound(Fp8Format::E4M3FNUZ, FloatToIntRounding::NearestEven); }

// A truncating conversion with c + 0.5 yields the same codes as round-to-nearest with c.
void test_truncation_matches_rounding(void**) {
    const Fp8Format f = Fp8Format::E4M3FN;
    const float m = 1.3f;
    const float bias_rne = lean_p_bias(m, 8, lean_p_centre_for(FloatToIntRounding::NearestEven), f);
    const float bias_trunc = lean_p_bias(m, 8, lean_p_centre_for(FloatToIntRounding::TowardZero), f);
    int differing = 0;
    for (int i = 0; i < 100000; ++i) {
        const float s = m - 20.0f * i / 100000.0f;
        differing += lean_p_code(s, 8.0f, bias_rne, FloatToIntRounding::NearestEven, f) !=
                     lean_p_code(s, 8.0f, bias_trunc, FloatToIntRounding::TowardZero, f);
    }
    assert_int_equal(differing, 0);  // ties are measure-zero; none on this grid
}

void test_row_maximum_is_not_a_tie(void**) {
    // At the row maximum x = 0 the code is 56 + 8*8 + c = 119.53: rounds to 120 (2^8) with margin.
    const Fp8Format f = Fp8Format::E4M3FN;
    const float bias = lean_p_bias(2.0f, 8, kLeanPCentre, f);
    assert_int_equal(lean_p_code(2.0f, 8.0f, bias, FloatToIntRounding::NearestEven, f), 120);
    assert_true(fp8_decode(120, f) == 256.0f);
}

void test_clamps(void**) {
    const Fp8Format f = Fp8Format::E4M3FN;
    const float bias = lean_p_bias(0.0f, 8, kLeanPCentre, f);
    assert_int_equal(lean_p_code(-INFINITY, 8.0f, bias, FloatToIntRounding::NearestEven, f), 0);
    assert_int_equal(lean_p_code(NAN, 8.0f, bias, FloatToIntRounding::NearestEven, f), 0);
    assert_int_equal(lean_p_code(-30.0f, 8.0f, bias, FloatToIntRounding::NearestEven, f), 0);
    assert_int_equal(lean_p_code(100.0f, 8.0f, bias, FloatToIntRounding::NearestEven, f), 126);  // never NaN (127)
    const float bias_uz = lean_p_bias(0.0f, 7, kLeanPCentre, Fp8Format::E4M3FNUZ);
    assert_int_equal(lean_p_code(100.0f, 8.0f, bias_uz, FloatToIntRounding::NearestEven, Fp8Format::E4M3FNUZ), 127);
    assert_int_equal(lean_p_code(0.0f, 8.0f, bias_uz, FloatToIntRounding::NearestEven, Fp8Format::E4M3FNUZ), 120);
}

void test_block_scale_exponent(void**) {
    const Fp8Format f = Fp8Format::E4M3FN;
    assert_int_equal(block_scale_exponent(3.0f, 3.0f, 64, f), 8);     // holds the running max
    assert_int_equal(block_scale_exponent(3.0f, 2.5f, 64, f), 8);
    assert_int_equal(block_scale_exponent(3.0f, 2.0f, 64, f), 9);
    assert_int_equal(block_scale_exponent(3.0f, -9.5f, 64, f), 20);   // gap 12.5
    assert_int_equal(block_scale_exponent(3.0f, -100.0f, 64, f), 64); // capped
    assert_int_equal(block_scale_exponent(3.0f, -INFINITY, 64, f), 64);
    assert_int_equal(block_scale_exponent(3.0f, 3.0f, 64, Fp8Format::E4M3FNUZ), 7);
    // Every block's maximum then codes to (2^7, 2^8]: codes 113..120.
    for (int i = 0; i < 1000; ++i) {
        const float m = 0.0f, block_max = -40.0f * i / 1000.0f;
        const int k = block_scale_exponent(m, block_max, 64, f);
        const uint8_t code = lean_p_code(block_max, 8.0f, lean_p_bias(m, k, kLeanPCentre, f),
                                         FloatToIntRounding::NearestEven, f);
        assert_true(code >= 112 && code <= 120);
    }
}

// The 128-key instance's anchor (common/lean_anchor.h): up at once, down only past the window, never
// below the running maximum minus the drop cap; NaN and +inf poison; -inf blocks change nothing;
// alpha exactly 1 while it holds; and every block that keeps the anchor codes its maximum in
// [2^5, 2^8], no code above 120 (2^8) or at the cap.
void test_lean_anchor(void**) {
    const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
    assert_true(lean_anchor_update(-inf, 2.5f, 2.5f) == 2.5f);    // the first block
    assert_true(lean_anchor_update(2.5f, 2.5f, 2.5f) == 2.5f);    // holds
    assert_true(lean_anchor_update(2.5f, 2.5f, -0.5f) == 2.5f);   // 3 below: holds
    assert_true(lean_anchor_update(2.5f, 2.5f, -0.625f) == -0.625f);  // past the window: down to the block
    assert_true(lean_anchor_update(2.5f, 2.625f, 2.625f) == 2.625f);  // a new maximum: up at once
    assert_true(lean_anchor_update(-0.625f, 2.5f, 1.0f) == 1.0f);     // above an anchor below M: up to b
    assert_true(lean_anchor_update(2.5f, 2.5f, 1.0f, 1.0f) == 1.0f);  // a narrower window
    assert_true(lean_anchor_update(2.5f, 2.5f, -100.0f) == 2.5f - kLeanAnchorMaxDrop);  // the drop cap
    assert_true(lean_anchor_update(2.5f - kLeanAnchorMaxDrop, 2.5f, -100.0f) == 2.5f - kLeanAnchorMaxDrop);
    assert_true(lean_anchor_update(2.5f, 2.5f, -inf) == 2.5f);    // nothing seen: unchanged
    assert_true(lean_anchor_update(-inf, -inf, -inf) == -inf);
    assert_true(std::isnan(lean_anchor_update(2.5f, nan, nan)));  // poisoned rows take the maximum
    assert_true(lean_anchor_update(2.5f, inf, inf) == inf);
    assert_true(std::isnan(lean_anchor_update(nan, nan, 1.0f)));
    auto exp2 = [](float x) { return std::exp2(x); };
    assert_true(anchor_rescale(2.5f, 2.5f, exp2) == 1.0f);
    assert_true(anchor_rescale(-inf, 2.5f, exp2) == 0.0f);
    assert_true(anchor_rescale(-inf, -inf, exp2) == 1.0f);
    assert_true(anchor_rescale(2.5f, 4.5f, exp2) == 0.25f);
    assert_true(anchor_rescale(2.5f, -0.5f, exp2) == 8.0f);
    assert_int_equal(lean_anchor_exponent(Fp8Format::E4M3FN), 8);
    assert_int_equal(lean_anchor_exponent(Fp8Format::E4M3FNUZ), 7);
    for (Fp8Format f : {Fp8Format::E4M3FN, Fp8Format::E4M3FNUZ}) {
        const int k = lean_anchor_exponent(f);
        const int top = 120;  // the code of 2^8 in e4m3fn and of 2^7 in e4m3fnuz
        for (int i = 0; i <= 4000; ++i) {
            const float a = 0.375f, block_max = a + 1.0f - 5.0f * i / 4000.0f;
            const float anchor = lean_anchor_update(a, std::fmax(a, block_max), block_max);
            const uint8_t code = lean_p_code(block_max, 8.0f, lean_p_bias(anchor, k, kLeanPCentre, f),
                                             FloatToIntRounding::NearestEven, f);
            assert_true(code <= top);
            assert_true(code >= top - 8 * static_cast<int>(kLeanAnchorBelow) - 1);
        }
    }
}

// The ws kernel's conversion-free forms (block_scale_exponent_integral, exp2_integral) against the
// int forms: every gap class (0, fractions, integers and their neighbours, the cap, huge, +inf,
// NaN, negative), 2,000,000 random gaps, and add_round_down against the FPU in round-down mode.
void test_integral_exponent_forms(void**) {
    const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
    auto check = [](float m, float block_max) {
        for (Fp8Format f : {Fp8Format::E4M3FN, Fp8Format::E4M3FNUZ}) {
            for (int cap : {64, 20, 8}) {
                const int k = block_scale_exponent(m, block_max, cap, f);
                const float kf = block_scale_exponent_integral(m, block_max, cap, f);
                if (static_cast<float>(k) != kf) {
                    std::printf("  m %a block_max %a cap %d: int %d integral %a\n", m, block_max, cap, k, kf);
                }
                assert_true(static_cast<float>(k) == kf);
                assert_true(lean_p_bias(m, k, kLeanPCentre, f) == lean_p_bias(m, kf, kLeanPCentre, f) ||
                            std::isnan(m));
            }
        }
    };
    for (float gap : {0.0f, -0.0f, 0.25f, 0.999999940f, 1.0f, 1.00000012f, 7.5f, 55.9999962f, 56.0f, 56.5f, 57.0f,
                      4194303.5f, 4194304.0f, 8388608.0f, 1.0e30f, inf, -0.5f, -3.0f, 1.0e-30f, 1.0e-45f}) {
        check(3.0f, 3.0f - gap);
        check(0.0f, -gap);
    }
    check(nan, 1.0f);
    check(1.0f, nan);
    check(1.0f, -inf);
    uint32_t state = 777u;
    auto next = [&state] {
        state ^= state << 13, state ^= state >> 17, state ^= state << 5;
        return state;
    };
    for (int i = 0; i < 2000000; ++i) {
        const float m = bits_float(0x3F800000u ^ (next() & 0x807FFFFFu)) * std::exp2(float(next() % 40) - 20.0f);
        const float gap = (next() & 3u) ? std::exp2(float(next() % 30) - 24.0f) * float(next() & 0xFFFFFFu) * 0x1p-24f * 64.0f
                                        : float(next() % 80);
        check(m, m - gap);
    }
    for (int e = -126; e <= 127; ++e) assert_true(exp2_integral(static_cast<float>(e)) == exp2_int(e));
    // add_round_down's host form against the FPU's round-down mode
    const int saved = std::fegetround();
    for (int i = 0; i < 2000000; ++i) {
        const float a = bits_float(next() & 0x4B7FFFFFu);  // |a| < 2^24, either sign
        const float sum_host = add_round_down(a, kMagicInteger);
        std::fesetround(FE_DOWNWARD);
        volatile float x = a, y = kMagicInteger;
        volatile float sum_fpu = x + y;  // stored before the mode is restored (volatile: not moved)
        std::fesetround(saved);
        if (float_bits(sum_host) != float_bits(sum_fpu)) std::printf("  a %a: host %a fpu %a\n", a, sum_host, (float)sum_fpu);
        assert_true(float_bits(sum_host) == float_bits(sum_fpu));
    }
}

}  // namespace

// The sm_90a kernel's saturating form (lean_p_uncapped_bits_from_saturated after fma.rn.sat, whose
// clamp to [0, 1] with NaN -> +0 saturate_unit mirrors, then lean_p_capped_code_lanes on two
// codes) gives lean_p_code's code for every input: scores over the whole range an FP8 dot product
// reaches, biases of real rows (from the running max and block exponent) and arbitrary ones, and
// non-finite scores. Each code goes through both lanes of the cap, beside the previous code.
uint32_t previous_bits = 0x4B400000u;
uint8_t saturated_form(float s, float scale8_log2, float bias) {
    const float y128 = saturate_unit(fmaf(s, scale8_log2 * 0x1p-7f, bias * 0x1p-7f));
    const uint32_t bits = lean_p_uncapped_bits_from_saturated(y128);
    const uint32_t as_low = lean_p_capped_code_lanes(bits, previous_bits) & 0xFFFFu;
    const uint32_t as_high = lean_p_capped_code_lanes(previous_bits, bits) >> 16;
    previous_bits = bits;
    assert_int_equal(as_low, as_high);
    return static_cast<uint8_t>(as_low);
}

void test_saturated_form_matches_the_code(void**) {
    const Fp8Format f = Fp8Format::E4M3FN;
    const float centre = lean_p_centre_for(FloatToIntRounding::NearestEven);
    uint32_t state = 12345u;
    auto next = [&state] {  // xorshift32: reproducible, no library dependence
        state ^= state << 13, state ^= state >> 17, state ^= state << 5;
        return state;
    };
    auto uniform = [&](float lo, float hi) { return lo + (hi - lo) * static_cast<float>(next() >> 8) * 0x1p-24f; };
    long compared = 0, differing = 0;
    for (int i = 0; i < 2000000; ++i) {
        // log-uniform scale (8 * softmax scale * descales * log2 e) over 2^-20 .. 2^20
        const float scale8 = std::exp2(uniform(-20.0f, 20.0f)) * ((next() & 15u) == 0 ? -1.0f : 1.0f);
        // a score near the row maximum m (the codes that are not 0) or anywhere in +-2^24
        const float m_raw = uniform(-3.0e7f, 3.0e7f);
        const float s = (next() & 1u) ? m_raw - std::exp2(uniform(-4.0f, 12.0f)) * uniform(0.0f, 1.0f) / std::fabs(scale8)
                                      : uniform(-1.67e7f, 1.67e7f);
        float bias;
        if (next() & 1u) {  // a real row's bias: m = the maximum in log2 units, k from its block gap
            const float m = m_raw * scale8 * 0.125f;
            const int k = block_scale_exponent(m, m - uniform(0.0f, 30.0f), kBlockScaleMaxExponent, f);
            bias = lean_p_bias(m, k, centre, f);
        } else {
            bias = uniform(-1.0e4f, 1.0e4f);
        }
        ++compared;
        if (saturated_form(s, scale8, bias) != lean_p_code(s, scale8, bias, FloatToIntRounding::NearestEven, f)) {
            ++differing;
        }
    }
    std::printf("  saturated form vs lean_p_code: %ld of %ld codes differ\n", differing, compared);
    assert_int_equal(differing, 0);
    const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
    for (float s : {nan, inf, -inf, 0.0f, -0.0f, 3.0e38f, -3.0e38f}) {
        for (float bias : {0.0f, 120.0f, -1.0e30f, 1.0e30f, nan}) {
            assert_int_equal(saturated_form(s, 0.5f, bias), lean_p_code(s, 0.5f, bias, FloatToIntRounding::NearestEven, f));
        }
    }
}

// lean_p_cap_unreachable: on the model's own rows (a block of raw scores, its maximum b in log2
// units, then the 64-key instance's running maximum and block exponent, or the 128-key instance's
// anchor), every score's uncapped code is at most 126, hence lean_p_code's, wherever the test
// passes, for both conversions: the sm_90a kernels' form (round to nearest even, saturating FMA,
// no min) and the AMD generator's (truncation with c + 1/2, v_cvt_u32_f32 taking y < 0 and NaN to
// 0, no clamp). Scales log-uniform, row maxima up to the limit. Beyond it the cap does act for
// some rows (so the test is what keeps it).
void test_cap_unreachable(void**) {
    const Fp8Format f = Fp8Format::E4M3FN;
    uint32_t state = 777u;
    auto next = [&state] {
        state ^= state << 13, state ^= state >> 17, state ^= state << 5;
        return state;
    };
    auto uniform = [&](float lo, float hi) { return lo + (hi - lo) * static_cast<float>(next() >> 8) * 0x1p-24f; };
    auto uncapped_code = [](float s, float scale8_log2, float bias, FloatToIntRounding rounding) -> long {
        if (rounding == FloatToIntRounding::NearestEven) {
            const float y128 = saturate_unit(fmaf(s, scale8_log2 * 0x1p-7f, bias * 0x1p-7f));
            return static_cast<long>(lean_p_uncapped_bits_from_saturated(y128) & 0xFFFFu);
        }
        const float y = fmaf(s, scale8_log2, bias);
        return y > 0.0f ? static_cast<long>(truncf(y)) : 0;  // v_cvt_u32_f32 (y < 2^32 here)
    };
    long rows = 0, codes = 0, beyond_rows = 0, beyond_capped = 0, largest = 0;
    for (int i = 0; i < 400000; ++i) {
        const float scale_log2 = std::exp2(uniform(-24.0f, 12.0f));
        // the row's maximum in log2 units near the limit or anywhere below it, either sign
        const float target = (next() & 1u) ? uniform(-1.0f, 1.0f) * kLeanPCapUnreachableBelow : uniform(-64.0f, 64.0f);
        const bool beyond = (next() & 7u) == 0;  // a row past the limit: the cap must remain
        const float s_max = (beyond ? target * 4096.0f : target) / scale_log2;
        const float b = s_max * scale_log2;
        float m, k;
        if (next() & 1u) {  // 64 keys: a running maximum at or above b, the block exponent from the gap
            m = b + ((next() & 1u) ? 0.0f : uniform(0.0f, 70.0f));
            k = block_scale_exponent_integral(m, b, kBlockScaleMaxExponent, f);
        } else {  // 128 keys: the anchor after this block, from an earlier anchor and running maximum
            const float earlier = b + uniform(-6.0f, 6.0f);
            const float running = std::fmax(earlier, b);
            m = lean_anchor_update(earlier - uniform(0.0f, 4.0f), running, b);
            k = static_cast<float>(lean_anchor_exponent(f));
        }
        if (lean_p_cap_unreachable(m) == beyond) continue;
        float s[64];
        for (int j = 0; j < 64; ++j) s[j] = j == 0 ? s_max : s_max - uniform(0.0f, 16.0f) / scale_log2;
        long row_largest = 0;
        for (FloatToIntRounding rounding : {FloatToIntRounding::NearestEven, FloatToIntRounding::TowardZero}) {
            const float bias = lean_p_bias(m, k, lean_p_centre_for(rounding), f);
            for (int j = 0; j < 64; ++j) {
                const long code = uncapped_code(s[j], 8.0f * scale_log2, bias, rounding);
                row_largest = code > row_largest ? code : row_largest;
                if (!beyond) {
                    assert_int_equal(code, lean_p_code(s[j], 8.0f * scale_log2, bias, rounding, f));
                    ++codes;
                }
            }
        }
        if (beyond) {
            ++beyond_rows;
            beyond_capped += row_largest > 126;
        } else {
            ++rows;
            largest = row_largest > largest ? row_largest : largest;
        }
    }
    std::printf("  cap unreachable: %ld rows, %ld codes, largest %ld; beyond the limit %ld of %ld rows need the cap\n",
                rows, codes, largest, beyond_capped, beyond_rows);
    assert_true(rows > 100000);
    assert_true(largest <= 120);  // the row maximum's code, 120 = 2^8
    assert_true(beyond_capped > 0);
    const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
    assert_false(lean_p_cap_unreachable(nan));
    assert_false(lean_p_cap_unreachable(inf));
    assert_false(lean_p_cap_unreachable(-inf));
    assert_false(lean_p_cap_unreachable(kLeanPCapUnreachableBelow));
    assert_true(lean_p_cap_unreachable(-0x1.fffffep18f));
    assert_int_equal(lean_p_code_lanes(0x4B400078u, 0x4B400003u), 0x00030078u);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lean_p_bound_e4m3fn_rne),   cmocka_unit_test(test_lean_p_bound_e4m3fn_trunc),
        cmocka_unit_test(test_lean_p_bound_e4m3fnuz),     cmocka_unit_test(test_truncation_matches_rounding),
        cmocka_unit_test(test_row_maximum_is_not_a_tie),  cmocka_unit_test(test_clamps),
        cmocka_unit_test(test_block_scale_exponent),       cmocka_unit_test(test_lean_anchor),       cmocka_unit_test(test_saturated_form_matches_the_code),
        cmocka_unit_test(test_integral_exponent_forms),       cmocka_unit_test(test_cap_unreachable),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
