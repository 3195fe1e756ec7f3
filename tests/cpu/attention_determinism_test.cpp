// Two identical calls give bitwise identical output, whatever the number of worker threads: every
// work item owns its rows and sums in a fixed order.
#include <cstring>

#include "reference_check.hpp"

using namespace zyfa_test;

namespace {

CaseShape shape_for(zyfa_dtype dtype) {
    CaseShape s;
    s.dtype = dtype;
    s.batch = 2;
    s.seqlen_q = s.seqlen_k = 300;
    s.heads_q = 4;
    s.heads_kv = 2;
    s.head_dim_qk = s.head_dim_v = 128;
    s.descales = dtype == ZYFA_DTYPE_FP8_E4M3FN;
    return s;
}

zyfa_context* make_context(int threads) {
    zyfa_context_options opts;
    zyfa_context_options_init(&opts, sizeof opts);
    opts.backend = ZYFA_BACKEND_CPU;
    opts.num_threads = threads;
    zyfa_context* ctx = nullptr;
    assert_int_equal(zyfa_context_create(&opts, &ctx), ZYFA_SUCCESS);
    return ctx;
}

void identical_across_calls_and_threads(zyfa_dtype dtype) {
    zyfa_context* one = make_context(1);
    zyfa_context* three = make_context(3);
    AttentionCase a(shape_for(dtype)), b(shape_for(dtype)), c(shape_for(dtype));
    assert_int_equal(a.run(one), ZYFA_SUCCESS);
    assert_int_equal(b.run(one), ZYFA_SUCCESS);
    assert_int_equal(c.run(three), ZYFA_SUCCESS);
    assert_memory_equal(a.o.data(), b.o.data(), a.o.size());
    assert_memory_equal(a.o.data(), c.o.data(), a.o.size());
    assert_memory_equal(a.lse.data(), b.lse.data(), a.lse.size() * sizeof(float));
    assert_memory_equal(a.lse.data(), c.lse.data(), a.lse.size() * sizeof(float));
    // The same context called again on the same buffers overwrites them with the same bytes.
    const std::vector<uint8_t> first = c.o;
    assert_int_equal(c.run(three), ZYFA_SUCCESS);
    assert_memory_equal(first.data(), c.o.data(), first.size());
    zyfa_context_destroy(one);
    zyfa_context_destroy(three);
}

void test_fp8_lean_bitwise(void**) { identical_across_calls_and_threads(ZYFA_DTYPE_FP8_E4M3FN); }
void test_bf16_bitwise(void**) { identical_across_calls_and_threads(ZYFA_DTYPE_BF16); }

}  // namespace

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fp8_lean_bitwise),
        cmocka_unit_test(test_bf16_bitwise),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
