// The attention-sink fold of kernels/common/attention_sink.h: no sink (-inf) changes no bit, a sink
// far above or below every score neither overflows nor underflows into NaN, a row without keys
// gets O = 0 and lse = the sink, a NaN or +inf sink poisons the row, and the fold's exponentials
// are exact where 2^x is.
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <limits>

#include "cmocka_cpp.hpp"
#include "common/attention_sink.h"

using namespace zyfa::numerics;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

void test_no_sink_changes_nothing(void**) {
    const float ms[] = {-kInf, -300.0f, -1.25f, 0.0f, 3.5f, 1e30f};
    const float ls[] = {0.0f, 1.0f, 1.0625f, 37.5f, 1e-30f};
    for (float m : ms)
        for (float l : ls) {
            if (m == -kInf && l != 0.0f) continue;  // a row without keys has l = 0
            const SinkedRow row = fold_sink(m, l, -kInf);
            assert_true(same_bits(row.max_log2, m));
            assert_true(same_bits(row.sum, l));
            assert_true(same_bits(sinked_output_scale(0.75f, row), output_scale(0.75f, l)));
            assert_true(same_bits(sinked_row_lse(row), row_natural_lse(m, l)));
            assert_true(sinked_row_seen(row) == row_saw_key(l));
        }
    // sinks NULL reads as z = -inf.
    assert_true(sink_log2(nullptr, 3) == -kInf);
}

void test_exact_cases(void**) {
    // The sink below the maximum: alpha 1, the sink's term 2^(1 - 2).
    SinkedRow row = fold_sink(2.0f, 1.5f, 1.0f);
    assert_true(row.max_log2 == 2.0f && row.rescale == 1.0f && row.sum == 2.0f);
    // Above it: the keys' state shifts by 2^(2 - 3), the sink's term is 1.
    row = fold_sink(2.0f, 1.5f, 3.0f);
    assert_true(row.max_log2 == 3.0f && row.rescale == 0.5f && row.sum == 1.75f);
    assert_true(sinked_output_scale(1.0f, row) == 0.5f / 1.75f);
    // The sink's units: natural log, like the scaled scores.
    const float sinks[] = {0.0f, 2.0f};
    assert_true(sink_log2(sinks, 1) == 2.0f * kLog2e);
}

void test_far_sinks(void**) {
    // Far above every score: O -> 0 (alpha below 2^-126 flushes), l' = 1, lse = the sink.
    SinkedRow row = fold_sink(0.0f, 3.0f, 1000.0f);
    assert_true(row.rescale == 0.0f && row.sum == 1.0f);
    assert_true(sinked_output_scale(2.0f, row) == 0.0f);
    assert_true(std::fabs(sinked_row_lse(row) - kLn2 * 1000.0f) <= 1e-4f);
    assert_false(sinked_row_poisoned(row));
    // Far below: nothing l could hold, the same bits as without a sink.
    row = fold_sink(5.0f, 3.0f, -1000.0f);
    assert_true(same_bits(row.sum, 3.0f) && row.rescale == 1.0f && row.max_log2 == 5.0f);
    // The largest finite sinks in natural-log units: z overflows to +-inf in log2 units. -inf is
    // no sink; +inf is a score of +inf (NaN row).
    row = fold_sink(5.0f, 3.0f, -3e38f * kLog2e);
    assert_true(same_bits(row.sum, 3.0f));
}

void test_rows_without_keys(void**) {
    // m = -inf, l = 0 (no key) and a finite sink: softmax over the sink alone.
    const SinkedRow row = fold_sink(-kInf, 0.0f, -7.5f);
    assert_true(row.rescale == 0.0f && row.sum == 1.0f && row.max_log2 == -7.5f);
    assert_true(sinked_row_seen(row));
    assert_false(sinked_row_poisoned(row));
    assert_true(sinked_output_scale(1.0f, row) == 0.0f);  // acc is 0 too: O = 0
    assert_true(sinked_row_lse(row) == kLn2 * -7.5f);
    // ... without a sink: O = 0, lse = -inf, as before.
    const SinkedRow none = fold_sink(-kInf, 0.0f, -kInf);
    assert_false(sinked_row_seen(none));
    assert_true(row_lse(sinked_row_lse(none), sinked_row_poisoned(none), sinked_row_seen(none)) == -kInf);
}

void test_non_finite_sinks(void**) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    for (float m : {-kInf, 0.0f, 4.0f}) {
        const float l = m == -kInf ? 0.0f : 2.0f;
        assert_true(sinked_row_poisoned(fold_sink(m, l, nan)));
        assert_true(sinked_row_poisoned(fold_sink(m, l, kInf)));
        const SinkedRow row = fold_sink(m, l, nan);
        assert_true(std::isnan(row_output(1.0f, sinked_row_poisoned(row), sinked_row_seen(row))));
        assert_true(std::isnan(row_lse(0.0f, sinked_row_poisoned(row), sinked_row_seen(row))));
    }
    // A poisoned row stays poisoned whatever the sink.
    assert_true(sinked_row_poisoned(fold_sink(nan, 1.0f, 2.0f)));
    assert_true(sinked_row_poisoned(fold_sink(kInf, 1.0f, -kInf)));
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_sink_changes_nothing), cmocka_unit_test(test_exact_cases),
        cmocka_unit_test(test_far_sinks),               cmocka_unit_test(test_rows_without_keys),
        cmocka_unit_test(test_non_finite_sinks),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
