// The CPU backend against the fp64 reference over a grid of shapes: every dtype and softmax mode,
// masks, windows, GQA/MQA ratios, varlen with empty and length-1 sequences, seqlen_q != seqlen_k,
// head dims 64/128/192-128/256, lse, descales, every output dtype.
#include <array>
#include <string>
#include <vector>

#include "reference_check.hpp"
#include "support/attention_modes.hpp"

using namespace zyfa_test;

namespace {

zyfa_context* g_ctx = nullptr;

// Checks one case against the fp64 reference (reference_check.hpp), printing its figures.
void check(const CaseShape& s, const std::string& label) { check_case(g_ctx, s, label.c_str()); }

// The shared grid (tests/support/attention_grid.hpp), every mode.
void run_grid_group(GridGroup group) { for_grid_group(all_modes(), group, check); }

void test_causal_mha(void**) {
    run_grid_group(GridGroup::Causal);
}

void test_no_mask_rectangular(void**) {
    run_grid_group(GridGroup::NoMask);
}

void test_causal_bottom_right(void**) {
    run_grid_group(GridGroup::BottomRight);
}

void test_sliding_windows(void**) {
    run_grid_group(GridGroup::Windows);
}

void test_gqa_ratios(void**) {
    run_grid_group(GridGroup::Gqa);
}

void test_varlen(void**) {
    run_grid_group(GridGroup::Varlen);
}

void test_head_dims(void**) {
    std::vector<std::array<int64_t, 2>> dims;
    for (const auto& d : kKernelHeadDims) dims.push_back({d[0], d[1]});
    dims.push_back({32, 96});  // the CPU backend also runs dims no kernel is built for
    for (const auto& d : dims)
        for_each_mode(all_modes(), head_dims_label(d[0], d[1]),
                      [&d](CaseShape& s) {
                          s.seqlen_q = s.seqlen_k = 96;
                          s.head_dim_qk = d[0];
                          s.head_dim_v = d[1];
                      },
                      check);
}

void test_output_dtypes(void**) {
    for_each_output_dtype(all_modes(), check);
}

void test_softmax_auto_resolves_by_dtype(void**) {
    // AUTO is LEAN for FP8 and EXACT otherwise: the tolerance applied follows the resolved mode.
    CaseShape s;
    s.softmax = ZYFA_SOFTMAX_AUTO;
    s.dtype = ZYFA_DTYPE_FP8_E4M3FN;
    check_case(g_ctx, s, "auto e4m3fn");
    s.dtype = ZYFA_DTYPE_BF16;
    check_case(g_ctx, s, "auto bf16");
}

void test_default_scale_and_explicit_scale(void**) {
    for (float scale : {0.0f, 0.02f, 0.5f}) {
        CaseShape s;
        s.dtype = ZYFA_DTYPE_BF16;
        AttentionCase c(s);
        c.params.softmax_scale = scale;
        assert_int_equal(c.run(g_ctx), ZYFA_SUCCESS);
        const auto problem = zyfa::validate_attn(&c.params, &c.tq, &c.tk, &c.tv, &c.to, ZYFA_BACKEND_CPU);
        const auto ref = zyfa::cpu::attention_reference_fp64(problem);
        assert_true(compare(c, ref).rel_rms <= o_tolerance(s.dtype, ZYFA_SOFTMAX_EXACT, s.out_dtype));
    }
}

// Host buffers: the CPU backend explicitly (AUTO would pick a GPU where one is present).
int setup(void**) {
    zyfa_context_options opts;
    zyfa_context_options_init(&opts, sizeof opts);
    opts.backend = ZYFA_BACKEND_CPU;
    return zyfa_context_create(&opts, &g_ctx) == ZYFA_SUCCESS ? 0 : -1;
}
int teardown(void**) {
    zyfa_context_destroy(g_ctx);
    return 0;
}

}  // namespace

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_causal_mha),        cmocka_unit_test(test_no_mask_rectangular),
        cmocka_unit_test(test_causal_bottom_right), cmocka_unit_test(test_sliding_windows),
        cmocka_unit_test(test_gqa_ratios),        cmocka_unit_test(test_varlen),
        cmocka_unit_test(test_head_dims),         cmocka_unit_test(test_output_dtypes),
        cmocka_unit_test(test_softmax_auto_resolves_by_dtype),
        cmocka_unit_test(test_default_scale_and_explicit_scale),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
