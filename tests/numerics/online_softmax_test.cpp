// The online-softmax update and the row epilogue of kernels/common (online_softmax.h,
// row_epilogue.h, exp2_polynomial.h): the -inf guard of alpha, the empty-row and poisoned-row
// rules, and the AMD LEAN polynomial against exp2f.
#include <cmath>
#include <limits>

#include "cmocka_cpp.hpp"
#include "common/exp2_polynomial.h"
#include "common/online_softmax.h"
#include "common/row_epilogue.h"
#include "common/row_max.h"

using namespace zyfa::numerics;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

void test_alpha_guard(void**) {
    // No key seen yet: alpha 0 whatever m_new is, even -inf (where exp2(-inf - -inf) is NaN).
    assert_true(running_max_rescale(-kInf, -kInf) == 0.0f);
    assert_true(running_max_rescale(-kInf, 3.0f) == 0.0f);
    assert_true(running_max_rescale(-kInf, -kInf, Exp2WithoutTranscendental{}) == 0.0f);
    assert_true(running_max_rescale(2.0f, 2.0f) == 1.0f);
    assert_true(running_max_rescale(1.0f, 3.0f) == 0.25f);
    assert_true(running_max_rescale(1.0f, 3.0f, Exp2WithoutTranscendental{}) == 0.25f);
}

void test_updates_are_unfused(void**) {
    // l * alpha + s rounded twice, not once: (1 + 2^-23)^2 rounds to 1 + 2^-22, losing the 2^-46
    // that a fused multiply-add would keep.
    const float x = 1.0f + 0x1p-23f;
    assert_true(running_sum_update(x, x, -1.0f) == 0x1p-22f);
    assert_true(accumulator_update(x, x, 1.0f, -1.0f) == 0x1p-22f);
}

void test_scaled_accumulator_rescale(void**) {
    // acc kept as acc * 2^e: moving from exponent 8 to 11 multiplies by alpha * 2^3.
    assert_true(scaled_accumulator_rescale(0.25f, 11.0f, 8.0f) == 2.0f);
    assert_true(scaled_accumulator_rescale(1.0f, 8.0f, 8.0f) == 1.0f);
    assert_true(scaled_accumulator_rescale(0.0f, 64.0f, 8.0f) == 0.0f);
}

void test_row_epilogue(void**) {
    // A row that saw no key: O = 0, lse = -inf.
    assert_false(row_saw_key(0.0f));
    assert_true(output_scale(2.0f, 0.0f) == 0.0f);
    assert_true(row_output(5.0f, false, false) == 0.0f);
    assert_true(row_lse(5.0f, false, false) == -kInf);
    // A poisoned row: NaN for both, whether or not l is positive.
    assert_true(row_max_is_poisoned(kInf) && row_max_is_poisoned(std::nanf("")));
    assert_true(std::isnan(row_output(5.0f, true, true)) && std::isnan(row_lse(5.0f, true, false)));
    // Otherwise the value; lse = ln2 (m + log2 l).
    assert_true(row_saw_key(1.0f) && output_scale(3.0f, 2.0f) == 1.5f);
    assert_true(row_output(5.0f, false, true) == 5.0f);
    assert_true(row_natural_lse(3.0f, 2.0f) == kLn2 * 4.0f);
}

void test_exp2_polynomial(void**) {
    for (float x = -126.0f; x <= 0.0f; x += 0.0625f) {
        const float want = exp2f(x), got = exp2_without_transcendental(x);
        assert_true(std::fabs(got - want) <= 1e-6f * want);
    }
    assert_true(exp2_without_transcendental(-126.5f) == 0.0f);
    assert_true(exp2_without_transcendental(-kInf) == 0.0f);
    assert_true(exp2_without_transcendental(std::nanf("")) == 0.0f);
}

}  // namespace

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_alpha_guard),
        cmocka_unit_test(test_updates_are_unfused),
        cmocka_unit_test(test_scaled_accumulator_rescale),
        cmocka_unit_test(test_row_epilogue),
        cmocka_unit_test(test_exp2_polynomial),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
