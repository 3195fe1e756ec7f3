// bf16 and fp16 conversions: every 16-bit code decodes to its defined value and round-trips;
// ties round to even; overflow and NaN behave as IEEE round-to-nearest-even.
#include <cmath>

#include "cmocka_cpp.hpp"
#include "common/half_types.h"

using namespace zyfa::numerics;

namespace {

double fp16_value(unsigned h) {
    const int e = (h >> 10) & 31, m = h & 1023;
    const double sign = (h & 0x8000) ? -1.0 : 1.0;
    if (e == 0) return sign * std::ldexp(m, -24);
    if (e == 31) return m ? NAN : sign * INFINITY;
    return sign * std::ldexp(1024.0 + m, e - 25);
}

void test_fp16_all_codes(void**) {
    for (unsigned h = 0; h < 65536; ++h) {
        const float f = fp16_to_float(static_cast<uint16_t>(h));
        const double want = fp16_value(h);
        if (std::isnan(want)) {
            assert_true(std::isnan(f));
            assert_true((float_to_fp16(f) & 0x7C00u) == 0x7C00u && (float_to_fp16(f) & 0x3FFu) != 0);
            continue;
        }
        assert_true(static_cast<double>(f) == want);
        assert_int_equal(float_to_fp16(f), h);
    }
}

void test_bf16_all_codes(void**) {
    for (unsigned h = 0; h < 65536; ++h) {
        const float f = bf16_to_float(static_cast<uint16_t>(h));
        if (std::isnan(f)) {
            assert_true(std::isnan(bf16_to_float(float_to_bf16(f))));
            continue;
        }
        assert_true(float_bits(f) == (static_cast<uint32_t>(h) << 16));
        assert_int_equal(float_to_bf16(f), h);
    }
}

void test_ties_and_overflow(void**) {
    // 1 + 2^-8 lies halfway between bf16 1.0 and 1 + 2^-7: ties to even (1.0); 1 + 3*2^-8 to 1 + 2^-6.
    assert_int_equal(float_to_bf16(1.0f + std::ldexp(1.0f, -8)), 0x3F80);
    assert_int_equal(float_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3F82);
    assert_int_equal(float_to_bf16(3.4e38f), 0x7F80);  // rounds up to infinity
    // fp16: 1 + 2^-11 ties to 1.0; 65504 is the max; 65520 and above round to infinity.
    assert_int_equal(float_to_fp16(1.0f + std::ldexp(1.0f, -11)), 0x3C00);
    assert_int_equal(float_to_fp16(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);
    assert_int_equal(float_to_fp16(65504.0f), 0x7BFF);
    assert_int_equal(float_to_fp16(65519.0f), 0x7BFF);
    assert_int_equal(float_to_fp16(65520.0f), 0x7C00);
    assert_int_equal(float_to_fp16(-INFINITY), 0xFC00);
    assert_int_equal(float_to_fp16(std::ldexp(1.0f, -25)), 0x0000);  // half the smallest subnormal: to even
    assert_int_equal(float_to_fp16(std::ldexp(3.0f, -25)), 0x0002);
}

}  // namespace

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fp16_all_codes),
        cmocka_unit_test(test_bf16_all_codes),
        cmocka_unit_test(test_ties_and_overflow),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
