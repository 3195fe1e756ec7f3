// The CUDA backend against the CPU backend (same numerics model: tight tolerance) and the fp64
// reference (the CPU tier's tolerances), over every case of tests/cpu/attention_vs_reference_test.cpp
// that NVIDIA supports: BF16, FP16, FP8 e4m3fn EXACT and LEAN; masks, windows, GQA/MQA up to
// ratio 12, varlen with empty and length-1 sequences, seqlen_q != seqlen_k, head dims
// 64/128/256/192-128, lse, descales, every output dtype. (FP32 inputs and e4m3fnuz are CPU-only.)
#include <string>
#include <vector>

#include "gpu_check.hpp"
#include "support/attention_modes.hpp"

using namespace zyfa_gpu_test;
using namespace zyfa_test;

namespace {

// Checks one case against the CPU backend and the fp64 reference (gpu_check.hpp).
void check(const CaseShape& s, const std::string& label) { check_gpu_case(s, label); }

template <class ShapeOf>
void run_for_all_modes(const std::string& what, ShapeOf shape_of) {
    for_each_mode(nvidia_modes(), what, shape_of, check);
}

// The shared grid (tests/support/attention_grid.hpp), every mode.
void run_grid_group(GridGroup group) { for_grid_group(nvidia_modes(), group, check); }

void test_causal_mha(void**) {
    run_grid_group(GridGroup::Causal);
    // Several query tiles and key blocks of a longer sequence, batch > 1.
    run_for_all_modes("causal hd128 b2 s=700", [](CaseShape& s) {
        s.batch = 2;
        s.seqlen_q = s.seqlen_k = 700;
        s.head_dim_qk = s.head_dim_v = 128;
    });
}

void test_no_mask_rectangular(void**) {
    run_grid_group(GridGroup::NoMask);
}

void test_causal_bottom_right(void**) {
    run_grid_group(GridGroup::BottomRight);
}

void test_sliding_windows(void**) {
    run_grid_group(GridGroup::Windows);
    // A window much shorter than the sequence: most key blocks are skipped entirely.
    run_for_all_modes("causal window 100,-1 s=600 hd128", [](CaseShape& s) {
        s.seqlen_q = s.seqlen_k = 600;
        s.window_left = 100;
        s.head_dim_qk = s.head_dim_v = 128;
    });
}

void test_gqa_ratios(void**) {
    run_grid_group(GridGroup::Gqa);
}

void test_varlen(void**) {
    run_grid_group(GridGroup::Varlen);
    run_for_all_modes("varlen causal q{1,300,0,129} hd128", [](CaseShape& s) {
        s.batch = 4;
        s.lengths_q = {1, 300, 0, 129};
        s.lengths_k = {1, 300, 0, 129};
        s.seqlen_q = s.seqlen_k = 300;
        s.head_dim_qk = s.head_dim_v = 128;
    });
}

void test_head_dims(void**) {
    for (const auto& d : kKernelHeadDims) {
        const std::string label = head_dims_label(d[0], d[1]);
        run_for_all_modes(label, [&d](CaseShape& s) {
            s.seqlen_q = s.seqlen_k = 96;
            s.head_dim_qk = d[0];
            s.head_dim_v = d[1];
        });
        run_for_all_modes(label + " none 33x257", [&d](CaseShape& s) {
            s.mask = ZYFA_MASK_NONE;
            s.seqlen_q = 33;
            s.seqlen_k = 257;
            s.head_dim_qk = d[0];
            s.head_dim_v = d[1];
        });
    }
}

void test_output_dtypes(void**) {
    for_each_output_dtype(nvidia_modes(), check);
}

void test_without_lse_and_descales(void**) {
    run_for_all_modes("no lse, no descales", [](CaseShape& s) {
        s.with_lse = false;
        s.descales = false;
        s.seqlen_q = s.seqlen_k = 150;
    });
}

void test_softmax_auto_resolves_by_dtype(void**) {
    CaseShape s;
    s.softmax = ZYFA_SOFTMAX_AUTO;
    s.dtype = ZYFA_DTYPE_FP8_E4M3FN;
    check_gpu_case(s, "auto e4m3fn (LEAN)");
    s.dtype = ZYFA_DTYPE_BF16;
    check_gpu_case(s, "auto bf16 (EXACT)");
}

void test_explicit_scales_and_input_scale(void**) {
    for (float scale : {0.02f, 0.5f}) {
        for_each_mode(nvidia_modes(), "scale " + std::to_string(scale) + " input x2",
                      [](CaseShape& s) {
                          s.seqlen_q = s.seqlen_k = 130;
                          s.input_scale = 2.0f;  // peaked rows: large score spread, many tiny probabilities
                      },
                      [scale](const CaseShape& s, const std::string& label) {
                          check_gpu_case(s, label, [scale](AttentionCase& c) { c.params.softmax_scale = scale; });
                      });
    }
}

// NVIDIA-unsupported requests answer NOT_SUPPORTED (a caller may fall back), never a crash.
void test_unsupported_requests_say_so(void**) {
    Session& s = session();
    CaseShape fp32;
    fp32.dtype = ZYFA_DTYPE_FP32;
    GpuCase a(*s.runtime, fp32);
    assert_int_equal(a.launch(s.cuda, s.stream), ZYFA_ERROR_NOT_SUPPORTED);
    CaseShape bf16_lean;
    bf16_lean.dtype = ZYFA_DTYPE_BF16;
    bf16_lean.softmax = ZYFA_SOFTMAX_LEAN;
    GpuCase b(*s.runtime, bf16_lean);
    assert_int_equal(b.launch(s.cuda, s.stream), ZYFA_ERROR_NOT_SUPPORTED);
}

}  // namespace

int main(void) {
    if (const int rc = open_session_or_skip("gpu_attention_vs_cpu_and_reference")) return rc;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_causal_mha),
        cmocka_unit_test(test_no_mask_rectangular),
        cmocka_unit_test(test_causal_bottom_right),
        cmocka_unit_test(test_sliding_windows),
        cmocka_unit_test(test_gqa_ratios),
        cmocka_unit_test(test_varlen),
        cmocka_unit_test(test_head_dims),
        cmocka_unit_test(test_output_dtypes),
        cmocka_unit_test(test_without_lse_and_descales),
        cmocka_unit_test(test_softmax_auto_resolves_by_dtype),
        cmocka_unit_test(test_explicit_scales_and_input_scale),
        cmocka_unit_test(test_unsupported_requests_say_so),
    };
    const int failed = cmocka_run_group_tests(tests, nullptr, nullptr);
    close_session();
    return failed;
}
