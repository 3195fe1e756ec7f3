// The CPU backend against the fp64 reference over a grid of shapes: every dtype and softmax mode,
// masks, windows, GQA/MQA ratios, varlen with empty and length-1 sequences, seqlen_q != seqlen_k,
// head dims 64/128/192-128/256, lse, descales, every output dtype.
#include <string>
#include <vector>

#include "reference_check.hpp"

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

void test_causal_mha(void**) {
    run_for_all_modes("causal hd128 sq=sk=200", [](CaseShape& s) {
        s.seqlen_q = s.seqlen_k = 200;
        s.head_dim_qk = s.head_dim_v = 128;
    });
}

void test_no_mask_rectangular(void**) {
    run_for_all_modes("none sq=37 sk=150 hd64", [](CaseShape& s) {
        s.mask = ZYFA_MASK_NONE;
        s.seqlen_q = 37;
        s.seqlen_k = 150;
    });
}

void test_causal_bottom_right(void**) {
    run_for_all_modes("causal-br sq=50 sk=130", [](CaseShape& s) {
        s.mask = ZYFA_MASK_CAUSAL_BOTTOM_RIGHT;
        s.seqlen_q = 50;
        s.seqlen_k = 130;
    });
    run_for_all_modes("causal-br sq=130 sk=50 (rows with no key)", [](CaseShape& s) {
        s.mask = ZYFA_MASK_CAUSAL_BOTTOM_RIGHT;
        s.seqlen_q = 130;
        s.seqlen_k = 50;
    });
    run_for_all_modes("causal top-left sq=50 sk=130", [](CaseShape& s) {
        s.seqlen_q = 50;
        s.seqlen_k = 130;
    });
}

void test_sliding_windows(void**) {
    run_for_all_modes("causal window 17,-1 s=160", [](CaseShape& s) {
        s.seqlen_q = s.seqlen_k = 160;
        s.window_left = 17;
    });
    run_for_all_modes("none window 8,3 s=100", [](CaseShape& s) {
        s.mask = ZYFA_MASK_NONE;
        s.seqlen_q = s.seqlen_k = 100;
        s.window_left = 8;
        s.window_right = 3;
    });
    run_for_all_modes("none window 0,0 (diagonal only)", [](CaseShape& s) {
        s.mask = ZYFA_MASK_NONE;
        s.seqlen_q = s.seqlen_k = 70;
        s.window_left = 0;
        s.window_right = 0;
    });
}

void test_gqa_ratios(void**) {
    run_for_all_modes("gqa 8/2 batch 2", [](CaseShape& s) {
        s.batch = 2;
        s.heads_q = 8;
        s.heads_kv = 2;
        s.seqlen_q = s.seqlen_k = 90;
    });
    run_for_all_modes("gqa 12/1 (mqa, ratio 12)", [](CaseShape& s) {
        s.heads_q = 12;
        s.heads_kv = 1;
        s.seqlen_q = s.seqlen_k = 70;
    });
    run_for_all_modes("gqa 24/2 (ratio 12)", [](CaseShape& s) {
        s.heads_q = 24;
        s.heads_kv = 2;
        s.seqlen_q = s.seqlen_k = 40;
        s.head_dim_qk = s.head_dim_v = 128;
    });
}

void test_varlen(void**) {
    run_for_all_modes("varlen q{5,0,1,70,1} k{7,3,0,70,1} gqa 4/2", [](CaseShape& s) {
        s.batch = 5;
        s.lengths_q = {5, 0, 1, 70, 1};
        s.lengths_k = {7, 3, 0, 70, 1};
        s.seqlen_q = s.seqlen_k = 70;
        s.heads_q = 4;
        s.heads_kv = 2;
    });
    run_for_all_modes("varlen causal-br q{3,65} k{130,65}", [](CaseShape& s) {
        s.mask = ZYFA_MASK_CAUSAL_BOTTOM_RIGHT;
        s.batch = 2;
        s.lengths_q = {3, 65};
        s.lengths_k = {130, 65};
        s.seqlen_q = 65;
        s.seqlen_k = 130;
    });
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
