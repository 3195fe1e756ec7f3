// The INT8 Q/K mode's warp-specialised sm_90a kernels (i8e4m3: s8 wgmma scores, e4m3 P.V) on the
// H200, at head dims 64 and 128, EXACT and LEAN: causal, no mask, bottom-right, windows, GQA, varlen,
// 16-bit output without lse, no descales, sinks, and descales of both signs that change per query
// token and per 64-key block, each case first checked to run its kernel, then against the CPU model
// and the fp64 reference (gpu_check.hpp: the scores are exact integers times the descales, so the
// bounds are the FP8 kernels'). Its own program (it was the last part of gpu_ws_kernel, which takes
// minutes) so that a short device lease reaches it.
// Exits 77 (skipped) without a CUDA device; on devices that are not sm_90 it prints a line and passes.
#include <limits>
#include <string>
#include <vector>

#include "gpu_check.hpp"
#include "support/attention_modes.hpp"
#include "ws_kernel_names.hpp"

using namespace zyfa_gpu_test;
using namespace zyfa_test;

namespace {

// The kernel takes min or max per (row, half) by the descale factor's sign: both signs are cases.
void test_int8_qk(void**) {
    if (!is_hopper()) {
        std::printf("  not sm_90a: no INT8 Q/K kernels\n");
        return;
    }
    const std::vector<DtypeMode> modes = {kInt8qkExact, kInt8qkLean};
    const WsDims dims[] = {{128, 128, "_d128"}, {64, 64, "_d64"}};
    auto run = [&](const std::string& what, auto shape_of, const GpuCase::Edit& edit) {
        for (const WsDims& d : dims) {
            for_each_mode(modes, what + " hd" + std::to_string(d.qk), [&](CaseShape& s) {
                s.head_dim_qk = d.qk;
                s.head_dim_v = d.v;
                shape_of(s);
            }, [&](const CaseShape& s, const std::string& label) {
                const std::string name = kernel_name_of(session().cuda, s);
                if (name.find("_ws_i8e4m3_") == std::string::npos || !ends_with(name, d.suffix)) {
                    std::printf("  %s: runs %s (%s)\n", label.c_str(), name.c_str(), zyfa_last_error_message());
                    fail();
                }
                check_gpu_case(s, label, edit);
            });
        }
    };
    const GpuCase::Edit none;
    run("int8 causal b2 s=1000", [](CaseShape& s) { s.batch = 2; s.seqlen_q = s.seqlen_k = 1000; }, none);
    run("int8 none 200x1500", [](CaseShape& s) { s.mask = ZYFA_MASK_NONE; s.seqlen_q = 200; s.seqlen_k = 1500; }, none);
    run("int8 causal 777x300 br", [](CaseShape& s) {
        s.mask = ZYFA_MASK_CAUSAL_BOTTOM_RIGHT;
        s.seqlen_q = 777;
        s.seqlen_k = 300;
    }, none);
    run("int8 window 200,50 s=900", [](CaseShape& s) {
        s.mask = ZYFA_MASK_NONE;
        s.seqlen_q = s.seqlen_k = 900;
        s.window_left = 200;
        s.window_right = 50;
    }, none);
    run("int8 gqa 8:2 s=500", [](CaseShape& s) { s.heads_q = 8; s.heads_kv = 2; s.seqlen_q = s.seqlen_k = 500; }, none);
    run("int8 varlen q{1,700,0,129,64}", [](CaseShape& s) {
        s.batch = 5;
        s.lengths_q = {1, 700, 0, 129, 64};
        s.lengths_k = {1, 700, 0, 129, 64};
        s.seqlen_q = s.seqlen_k = 700;
    }, none);
    run("int8 out bf16, no lse s=333", [](CaseShape& s) {
        s.out_dtype = ZYFA_DTYPE_BF16;
        s.with_lse = false;
        s.seqlen_q = s.seqlen_k = 333;
    }, none);
    run("int8 no descales, scale 1/4096 s=450", [](CaseShape& s) { s.descales = false; s.seqlen_q = s.seqlen_k = 450; },
        [](AttentionCase& c) { c.params.softmax_scale = 1.0f / 4096; });
    // Attention sinks on the INT8 kernels (the shared epilogue's fold), rows that see only the sink
    // included (bottom-right causal, sq > sk), and packed sequences.
    run("int8 sinks causal-br sq=200 sk=130", [](CaseShape& s) {
        s.mask = ZYFA_MASK_CAUSAL_BOTTOM_RIGHT;
        s.seqlen_q = 200;
        s.seqlen_k = 130;
        s.heads_q = 4;
        s.sinks = {0.5f, -2.0f, 4.0f, -std::numeric_limits<float>::infinity()};
    }, none);
    run("int8 sinks varlen q{1,300,0,129}", [](CaseShape& s) {
        s.batch = 4;
        s.lengths_q = {1, 300, 0, 129};
        s.lengths_k = {1, 300, 5, 129};
        s.seqlen_q = s.seqlen_k = 300;
        s.sinks = {1.0f, -0.5f};
    }, none);
    // Every other q token and every third k block negated: the factor's sign changes per (row, half).
    run("int8 signed descales s=640", [](CaseShape& s) { s.seqlen_q = s.seqlen_k = 640; }, [](AttentionCase& c) {
        for (size_t i = 0; i < c.q_descale_per_token.size(); i += 2) c.q_descale_per_token[i] = -c.q_descale_per_token[i];
        for (size_t i = 0; i < c.k_descale_per_block.size(); i += 3) c.k_descale_per_block[i] = -c.k_descale_per_block[i];
    });
}

}  // namespace

int main(void) {
    if (const int rc = open_session_or_skip("gpu_int8_qk")) return rc;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_int8_qk),
    };
    const int failed = cmocka_run_group_tests(tests, nullptr, nullptr);
    close_session();
    return failed;
}
