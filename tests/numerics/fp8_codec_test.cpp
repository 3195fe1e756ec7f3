// Exhaustive tests of the e4m3fn and e4m3fnuz codecs: all 256 codes, ties, saturation, NaN.
#include <cmath>

#include "cmocka_cpp.hpp"
#include "common/fp8_e4m3.h"

using zyfa::numerics::Fp8Format;
using zyfa::numerics::fp8_decode;
using zyfa::numerics::fp8_encode;

namespace {

// Independent value of a code, from the format definitions (OCP 8-bit FP spec; gfx942 fnuz).
double expected_value(unsigned code, Fp8Format f) {
    const int bias = f == Fp8Format::E4M3FN ? 7 : 8;
    const int e = (code >> 3) & 15, m = code & 7;
    const double sign = (code & 0x80) ? -1.0 : 1.0;
    if (e == 0) return sign * std::ldexp(m / 8.0, 1 - bias);
    return sign * std::ldexp(1.0 + m / 8.0, e - bias);
}

bool expected_nan(unsigned code, Fp8Format f) {
    return f == Fp8Format::E4M3FN ? (code & 0x7F) == 0x7F : code == 0x80;
}

void decode_all_codes(Fp8Format f) {
    for (unsigned code = 0; code < 256; ++code) {
        const float got = fp8_decode(static_cast<uint8_t>(code), f);
        if (expected_nan(code, f)) {
            assert_true(std::isnan(got));
            continue;
        }
        assert_true(static_cast<double>(got) == expected_value(code, f));
    }
}

void encode_round_trips(Fp8Format f) {
    for (unsigned code = 0; code < 256; ++code) {
        if (expected_nan(code, f)) continue;
        const uint8_t back = fp8_encode(fp8_decode(static_cast<uint8_t>(code), f), f);
        assert_int_equal(back, code);
    }
}

// The midpoint between two neighbouring codes rounds to the even code; anything off the midpoint
// rounds to the nearer one. Checked for every pair of positive neighbours and their negatives.
void ties_go_to_even(Fp8Format f) {
    const unsigned max_code = f == Fp8Format::E4M3FN ? 0x7E : 0x7F;
    for (unsigned code = 0; code < max_code; ++code) {
        const double lo = expected_value(code, f), hi = expected_value(code + 1, f);
        const double mid = 0.5 * (lo + hi);  // exact in fp32: one more mantissa bit than e4m3 needs
        const unsigned even = (code % 2 == 0) ? code : code + 1;
        assert_int_equal(fp8_encode(static_cast<float>(mid), f), even);
        const double nudge = (hi - lo) / 64.0;
        assert_int_equal(fp8_encode(static_cast<float>(mid - nudge), f), code);
        assert_int_equal(fp8_encode(static_cast<float>(mid + nudge), f), code + 1);
        if (f == Fp8Format::E4M3FN || code != 0)
            assert_int_equal(fp8_encode(static_cast<float>(-mid), f), even | 0x80u);
    }
}

void test_e4m3fn_decode(void**) { decode_all_codes(Fp8Format::E4M3FN); }
void test_e4m3fnuz_decode(void**) { decode_all_codes(Fp8Format::E4M3FNUZ); }
void test_e4m3fn_round_trip(void**) { encode_round_trips(Fp8Format::E4M3FN); }
void test_e4m3fnuz_round_trip(void**) { encode_round_trips(Fp8Format::E4M3FNUZ); }
void test_e4m3fn_ties(void**) { ties_go_to_even(Fp8Format::E4M3FN); }
void test_e4m3fnuz_ties(void**) { ties_go_to_even(Fp8Format::E4M3FNUZ); }

void test_e4m3fn_saturation_and_specials(void**) {
    const Fp8Format f = Fp8Format::E4M3FN;
    assert_int_equal(fp8_encode(448.0f, f), 0x7E);
    assert_int_equal(fp8_encode(463.99f, f), 0x7E);
    assert_int_equal(fp8_encode(464.0f, f), 0x7E);  // would round past 448: saturates, never NaN
    assert_int_equal(fp8_encode(1e30f, f), 0x7E);
    assert_int_equal(fp8_encode(INFINITY, f), 0x7E);
    assert_int_equal(fp8_encode(-INFINITY, f), 0xFE);
    assert_int_equal(fp8_encode(NAN, f) & 0x7F, 0x7F);
    assert_int_equal(fp8_encode(-0.0f, f), 0x80);
    assert_int_equal(fp8_encode(0.0f, f), 0x00);
    assert_int_equal(fp8_encode(std::ldexp(1.0f, -10), f), 0x00);    // half the smallest subnormal: tie to 0
    assert_int_equal(fp8_encode(std::ldexp(1.01f, -10), f), 0x01);
    assert_int_equal(fp8_encode(std::ldexp(1.0f, -20), f), 0x00);    // underflow
    assert_int_equal(fp8_encode(std::ldexp(15.0f, -10), f), 0x08);   // 7.5 quanta: tie to 8 = 2^-6
}

void test_e4m3fnuz_saturation_and_specials(void**) {
    const Fp8Format f = Fp8Format::E4M3FNUZ;
    assert_int_equal(fp8_encode(240.0f, f), 0x7F);
    assert_int_equal(fp8_encode(250.0f, f), 0x7F);
    assert_int_equal(fp8_encode(-1e30f, f), 0xFF);
    assert_int_equal(fp8_encode(INFINITY, f), 0x7F);
    assert_int_equal(fp8_encode(NAN, f), 0x80);
    assert_int_equal(fp8_encode(-0.0f, f), 0x00);  // no negative zero: 0x80 is NaN
    assert_int_equal(fp8_encode(-std::ldexp(1.0f, -12), f), 0x00);  // rounds to -0, stored as +0
    assert_int_equal(fp8_encode(1.0f, f), 0x40);   // bias 8
    assert_int_equal(fp8_encode(std::ldexp(1.0f, -10), f), 0x01);  // smallest subnormal
}

}  // namespace

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_e4m3fn_decode),       cmocka_unit_test(test_e4m3fnuz_decode),
        cmocka_unit_test(test_e4m3fn_round_trip),   cmocka_unit_test(test_e4m3fnuz_round_trip),
        cmocka_unit_test(test_e4m3fn_ties),         cmocka_unit_test(test_e4m3fnuz_ties),
        cmocka_unit_test(test_e4m3fn_saturation_and_specials),
        cmocka_unit_test(test_e4m3fnuz_saturation_and_specials),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
