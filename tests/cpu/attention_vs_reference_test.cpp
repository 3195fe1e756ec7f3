// The CPU backend against the fp64 reference over a grid of shapes: every dtype and softmax mode,
// masks, windows, GQA/MQA ratios, varlen with empty and length-1 sequences, seqlen_q != seqlen_k,
// head dims 64/128/192-128/256, lse, descales, every output dtype.
#include <string>
#include <vector>

#include "reference_check.hpp"
#include "support/attention_grid.hpp"

using namespace zyfa_test;

namespace {

zyfa_context* g_ctx = nullptr;

struct DtypeMode {
    zyfa_dtype dtype;
    zyfa_softmax softmax;
    const char* name;
};

const DtypeMode kModes[] = {
    {ZYFA_DTYPE_FP32, ZYFA_SOFTMAX_EXACT, "fp32"},
    {ZYFA_DTYPE_FP16, ZYFA_SOFTMAX_EXACT, "fp16"},
    {ZYFA_DTYPE_BF16, ZYFA_SOFTMAX_EXACT, "bf16"},
    {ZYFA_DTYPE_FP8_E4M3FN, ZYFA_SOFTMAX_EXACT, "e4m3fn-exact"},
    {ZYFA_DTYPE_FP8_E4M3FN, ZYFA_SOFTMAX_LEAN, "e4m3fn-lean"},
    {ZYFA_DTYPE_FP8_E4M3FNUZ, ZYFA_SOFTMAX_EXACT, "e4m3fnuz-exact"},
    {ZYFA_DTYPE_FP8_E4M3FNUZ, ZYFA_SOFTMAX_LEAN, "e4m3fnuz-lean"},
};

CaseShape base(const DtypeMode& m) {
    CaseShape s;
    s.dtype = m.dtype;
    s.softmax = m.softmax;
    s.descales = m.dtype == ZYFA_DTYPE_FP8_E4M3FN || m.dtype == ZYFA_DTYPE_FP8_E4M3FNUZ;
    return s;
}


void run_for_all_modes(const char* what, void (*shape_of)(CaseShape&)) {
    for (const DtypeMode& m : kModes) {
        CaseShape s = base(m);
        shape_of(s);
        check_case(g_ctx, s, (std::string(what) + " " + m.name).c_str());
    }
}

// The shared grid (tests/support/attention_grid.hpp), every mode.
void run_grid_group(GridGroup group) {
    for (const GridShape& shape : attention_grid())
        if (shape.group == group) run_for_all_modes(shape.name, shape.apply);
}

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
    const int64_t dims[][2] = {{64, 64}, {128, 128}, {192, 128}, {256, 256}, {32, 96}};
    for (const auto& d : dims) {
        for (const DtypeMode& m : kModes) {
            CaseShape s = base(m);
            s.seqlen_q = s.seqlen_k = 96;
            s.head_dim_qk = d[0];
            s.head_dim_v = d[1];
            const std::string label = "hd " + std::to_string(d[0]) + "/" + std::to_string(d[1]) + " " + m.name;
            check_case(g_ctx, s, label.c_str());
        }
    }
}

void test_output_dtypes(void**) {
    for (zyfa_dtype out : {ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP16, ZYFA_DTYPE_FP32}) {
        for (const DtypeMode& m : kModes) {
            CaseShape s = base(m);
            s.out_dtype = out;
            s.seqlen_q = s.seqlen_k = 80;
            const std::string label = "out dtype " + std::to_string(out) + " " + m.name;
            check_case(g_ctx, s, label.c_str());
        }
    }
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
