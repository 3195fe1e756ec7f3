// Attention sinks (zyfa_attn_params.sinks, kernels/common/attention_sink.h) on the CUDA backend: the
// epilogue of every sm_90a kernel (warp-specialised, FP8 LEAN and EXACT, 16-bit) folds each row's
// sink into its running maximum and row sum after the last key block.
//   1. Against the CPU model of the kernel that ran and the fp64 reference, every NVIDIA mode and
//      head dim, with sinks below, near and above the rows' maxima; rows that see only the sink
//      (bottom-right causal with seqlen_q > seqlen_k, varlen with empty key sequences).
//   2. The fold is the one function of kernels/common: a sink of -inf (and one far below every
//      score) gives the same bits as no sinks on the GPU; a finite sink turns the same kernel's
//      result into lse' = ln(e^lse + e^sink), O' = O e^(lse - lse') to fp32 rounding (the main loop
//      is untouched, only the epilogue changes).
//   3. Exact scores and one-hot V (p_code_agreement_test.cpp's method): with sinks, LEAN's P codes
//      still all agree with the CPU model's and lse within the exact-score bound.
//   4. NaN and +inf sinks make their head's rows NaN; 1e30 leaves O = 0 and lse = the sink.
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "exact_score_inputs.hpp"
#include "gpu_check.hpp"
#include "support/attention_modes.hpp"

using namespace zyfa_gpu_test;
using namespace zyfa_test;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<float> some_sinks(int64_t heads) {
    const float pattern[] = {0.5f, -2.0f, 3.0f, 30.0f, -0.75f, 6.0f, 2.0f, -5.0f};
    std::vector<float> s;
    for (int64_t h = 0; h < heads; ++h) s.push_back(pattern[h % 8]);
    return s;
}

void test_against_cpu_and_reference(void**) {
    for (const auto& d : kKernelHeadDims) {
        const std::string dims = head_dims_label(d[0], d[1]);
        for_each_mode(nvidia_modes(), "sinks causal b2 s=300 gqa 4:2 " + dims, [&d](CaseShape& s) {
            s.batch = 2;
            s.seqlen_q = s.seqlen_k = 300;
            s.heads_q = 4;
            s.heads_kv = 2;
            s.head_dim_qk = d[0];
            s.head_dim_v = d[1];
            s.sinks = some_sinks(s.heads_q);
        }, [](const CaseShape& s, const std::string& label) { check_gpu_case(s, label); });
        for_each_mode(nvidia_modes(), "sinks causal-br sq=200 sk=130 (70 rows see only the sink) " + dims,
                      [&d](CaseShape& s) {
                          s.mask = ZYFA_MASK_CAUSAL_BOTTOM_RIGHT;
                          s.seqlen_q = 200;
                          s.seqlen_k = 130;
                          s.head_dim_qk = d[0];
                          s.head_dim_v = d[1];
                          s.sinks = some_sinks(s.heads_q);
                      },
                      [](const CaseShape& s, const std::string& label) { check_gpu_case(s, label); });
    }
    for_each_mode(nvidia_modes(), "sinks varlen q(1,300,0,129) k(0,300,5,129) hd128", [](CaseShape& s) {
        s.batch = 4;
        s.lengths_q = {1, 300, 0, 129};
        s.lengths_k = {0, 300, 5, 129};
        s.seqlen_q = s.seqlen_k = 300;
        s.head_dim_qk = s.head_dim_v = 128;
        s.mask = ZYFA_MASK_CAUSAL_BOTTOM_RIGHT;
        s.sinks = some_sinks(s.heads_q);
    }, [](const CaseShape& s, const std::string& label) { check_gpu_case(s, label); });
}

struct GpuRun {
    GpuCase gpu;
    GpuRun(const CaseShape& shape) : gpu(*session().runtime, shape) {
        Session& s = session();
        const zyfa_status st = gpu.run(s.cuda, *s.runtime, s.stream);
        if (st != ZYFA_SUCCESS) {
            std::printf("  zyfa_attn_fwd(CUDA) failed: %s: %s\n", zyfa_status_string(st), zyfa_last_error_message());
            fail();
        }
        assert_true(gpu.guards_intact());
    }
};

void test_fold_on_the_gpu(void**) {
    for (const auto& d : kKernelHeadDims) {
        for (const DtypeMode& m : nvidia_modes()) {
            CaseShape s = mode_shape(m);
            s.batch = 1;
            s.seqlen_q = s.seqlen_k = 400;
            s.heads_q = 4;
            s.heads_kv = 2;
            s.head_dim_qk = d[0];
            s.head_dim_v = d[1];
            s.out_dtype = ZYFA_DTYPE_FP32;
            GpuRun none(s);
            s.sinks.assign(4, -kInf);
            GpuRun minus_inf(s);
            s.sinks.assign(4, -1e30f);
            GpuRun far_below(s);
            const bool same = none.gpu.host.o == minus_inf.gpu.host.o && none.gpu.host.o == far_below.gpu.host.o &&
                              std::memcmp(none.gpu.host.lse.data(), minus_inf.gpu.host.lse.data(), 4 * none.gpu.host.lse.size()) == 0 &&
                              std::memcmp(none.gpu.host.lse.data(), far_below.gpu.host.lse.data(), 4 * none.gpu.host.lse.size()) == 0;
            // Sinks near each head's last-row lse: the sink takes a large share of the mass.
            s.sinks = some_sinks(4);
            for (int64_t h = 0; h < 4; ++h) s.sinks[h] += none.gpu.host.lse[static_cast<size_t>(h * s.seqlen_q + s.seqlen_q - 1)];
            GpuRun with(s);
            double lse_err = 0.0, o_err = 0.0, share = 0.0;
            for (int64_t h = 0; h < 4; ++h)
                for (int64_t i = 0; i < s.seqlen_q; ++i) {
                    const size_t at = static_cast<size_t>(h * s.seqlen_q + i);
                    const double l0 = none.gpu.host.lse[at], sink = s.sinks[h];
                    const double want = std::fmax(l0, sink) + std::log1p(std::exp(-std::fabs(l0 - sink)));
                    lse_err = std::fmax(lse_err, std::fabs(with.gpu.host.lse[at] - want) / std::fmax(1.0, std::fabs(want)));
                    const double factor = std::exp(l0 - want);
                    share = std::fmax(share, 1.0 - factor);
                    for (int64_t x = 0; x < s.head_dim_v; ++x) {
                        const int64_t e = (i * s.heads_q + h) * s.head_dim_v + x;
                        const double a = none.gpu.host.out(e) * factor, b = with.gpu.host.out(e);
                        o_err = std::fmax(o_err, std::fabs(a - b) / std::fmax(1e-3, std::fabs(a)));
                    }
                }
            std::printf("  %-13s %-11s sinks -inf, -1e30 vs none: %s; finite: lse' vs ln(e^lse + e^sink) rel %.1e, "
                        "O' vs O e^(lse - lse') rel %.1e, sink share up to %.2f\n",
                        m.name, head_dims_label(d[0], d[1]).c_str(), same ? "bitwise equal" : "DIFFERENT", lse_err, o_err,
                        share);
            assert_true(same);
            assert_true(share > 0.5);
            assert_true(lse_err <= 2e-6);
            assert_true(o_err <= 1e-5);
        }
    }
}

// The CPU model's P codes, read back through one-hot V, with sinks folded in (per row they only
// scale O and move lse, so each row's ratio to the model stays one constant).
void test_exact_scores_with_sinks(void**) {
    for (const DtypeMode& m : nvidia_modes()) {
        for (const auto& d : kKernelHeadDims) {
            CaseShape s = mode_shape(m);
            s.out_dtype = ZYFA_DTYPE_FP32;
            s.batch = 2;
            s.heads_q = 4;
            s.heads_kv = 2;
            s.seqlen_q = s.seqlen_k = d[1];  // one-hot V needs a dimension per key
            s.head_dim_qk = d[0];
            s.head_dim_v = d[1];
            s.seed = 7;
            s.sinks = std::vector<float>{-3.0f, 0.75f, 6.0f, 40.0f};
            const GpuCase::Edit edit = [](AttentionCase& c) {
                integer_qk(c, 11);
                one_hot_v(c);
            };
            Session& session_ = session();
            GpuCase gpu(*session_.runtime, s, edit);
            assert_int_equal(gpu.run(session_.cuda, *session_.runtime, session_.stream), ZYFA_SUCCESS);
            AttentionCase cpu(s);
            edit(cpu);
            run_on_cpu_as(cpu, session_.cuda, gpu);
            const PComparison p = compare_p_through_one_hot_v(gpu.host, cpu);
            const int64_t compared = p.compared, mismatched = p.mismatched;
            const CpuDiff diff = compare_with_cpu(gpu.host, cpu);
            std::printf("  exact S, one-hot V, sinks %-13s %-11s P mismatches %lld of %lld, bitwise %lld/%lld, lse %.1e\n",
                        m.name, head_dims_label(d[0], d[1]).c_str(), (long long)mismatched, (long long)compared,
                        (long long)diff.bitwise_equal, (long long)diff.elements, diff.lse_max_abs);
            assert_true(compared > 0);
            assert_true(diff.lse_max_abs <= exact_score_lse_tol(m.dtype, m.softmax));
            assert_int_equal(diff.lse_mismatched_infinities, 0);
            if (m.softmax == ZYFA_SOFTMAX_LEAN) {
                assert_int_equal(mismatched, 0);
            } else {
                assert_true(mismatched * 200 <= compared);  // an exp2 an ulp away, rarely
            }
        }
    }
}

void test_non_finite_and_far_sinks(void**) {
    for (const DtypeMode& m : nvidia_modes()) {
        CaseShape s = mode_shape(m);
        s.mask = ZYFA_MASK_CAUSAL_BOTTOM_RIGHT;
        s.seqlen_q = 160;
        s.seqlen_k = 130;  // the first 30 rows see no key
        s.heads_q = s.heads_kv = 6;
        s.head_dim_qk = s.head_dim_v = 128;
        s.sinks = std::vector<float>{1.5f, -kInf, std::numeric_limits<float>::quiet_NaN(), kInf, 1e30f, -3.0f};
        GpuRun r(s);
        const AttentionCase& g = r.gpu.host;
        int64_t bad = 0;
        for (int64_t h = 0; h < s.heads_q; ++h)
            for (int64_t i = 0; i < s.seqlen_q; ++i) {
                const float lse = g.lse[static_cast<size_t>(h * s.seqlen_q + i)];
                bool o_zero = true, o_nan = true;
                for (int64_t x = 0; x < s.head_dim_v; ++x) {
                    const float o = g.out((i * s.heads_q + h) * s.head_dim_v + x);
                    o_zero = o_zero && o == 0.0f;
                    o_nan = o_nan && std::isnan(o);
                }
                const float sink = s.sinks[h];
                const bool no_key = i < 30;
                bool ok;
                if (std::isnan(sink) || sink == kInf) {
                    ok = o_nan && std::isnan(lse);
                } else if (sink == 1e30f) {
                    ok = o_zero && std::fabs(lse - 1e30f) <= 1e24f;
                } else if (no_key) {
                    ok = o_zero && (sink == -kInf ? lse == -kInf : std::fabs(lse - sink) <= 1e-5f * std::fabs(sink));
                } else {
                    ok = !o_zero && !o_nan && std::isfinite(lse);
                }
                bad += !ok;
            }
        std::printf("  %-13s sinks {1.5, -inf, NaN, +inf, 1e30, -3}, 30 rows without keys: %lld rows wrong\n", m.name,
                    (long long)bad);
        assert_int_equal(bad, 0);
    }
}

}  // namespace

int main(void) {
    if (const int rc = open_session_or_skip("gpu_attention_sinks")) return rc;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_against_cpu_and_reference),
        cmocka_unit_test(test_fold_on_the_gpu),
        cmocka_unit_test(test_exact_scores_with_sinks),
        cmocka_unit_test(test_non_finite_and_far_sinks),
    };
    const int failed = cmocka_run_group_tests(tests, nullptr, nullptr);
    close_session();
    return failed;
}
