// The per-key score bias (zyfa_attn_params.key_bias, Q smoothing's correction; common/key_bias.h) on
// the CUDA backend: the key-bias kernels (attention_kernel_variants.def's ws_bias: FP8 E4M3 EXACT
// and LEAN at head dims 64 and 128, sm_90a).
//   1. Against the CPU model of the kernel that ran and the fp64 reference: causal and bottom-right
//      chunks, GQA, packed sequences (the [heads_q, total_k] layout), sinks, 1,000 keys (the ring
//      wraps), biases of Q smoothing's size and larger.
//   2. A bias of +0 against the bias-free kernel. LEAN: O and lse bit for bit, since z = +0 makes
//      every score, maximum and Lean P constant the same fp32 value. EXACT: within the bound of the
//      one difference in what they compute: the bias-free kernels exponentiate s * c - m as one FMA
//      in the blocks every row sees (softmax.cuh's ExponentForm::Fused), the key-bias kernels as
//      the CPU model's t - m with t = fma(s, c, z), two roundings.
//   3. Exact scores and one-hot V (p_code_agreement_test.cpp's method) with random biases: LEAN's P
//      codes equal the CPU model's, so the per-key constant is the model's (bias + 8z) / 128 exactly.
//   4. -inf biases on a third of the keys against the CPU model and fp64; NaN and +inf poison
//      exactly the rows that see the key.
//   5. What the kernels do not take is NOT_SUPPORTED naming params.key_bias: 16-bit inputs, head
//      dims 192/128 and 256.
// Exits 77 (skipped) without a CUDA device.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "exact_score_inputs.hpp"
#include "gpu_check.hpp"
#include "support/attention_modes.hpp"

using namespace zyfa_gpu_test;
using namespace zyfa_test;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

const std::vector<DtypeMode>& fp8_modes() {
    static const std::vector<DtypeMode> modes = {kE4m3fnExact, kE4m3fnLean};
    return modes;
}

int64_t key_rows(const CaseShape& s) {
    if (s.lengths_k.empty()) return s.batch * s.seqlen_k;
    int64_t n = 0;
    for (int32_t len : s.lengths_k) n += len;
    return n;
}

// Normal biases of standard deviation sd, [batch, heads_q, seqlen_k] or [heads_q, total_k].
std::vector<float> random_biases(const CaseShape& s, float sd, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> normal(0.0f, sd);
    std::vector<float> b(static_cast<size_t>(key_rows(s) * s.heads_q));
    for (float& x : b) x = normal(rng);
    return b;
}

const char* kernel_of(const GpuCase& gpu) {
    return zyfa_attn_kernel_name(session().cuda, &gpu.params, &gpu.tq, &gpu.tk, &gpu.tv, &gpu.to);
}

void test_against_cpu_and_reference(void**) {
    for (int64_t d : {128, 64}) {
        const std::string dims = head_dims_label(d, d);
        for_each_mode(fp8_modes(), "bias causal b2 s=300 gqa 4:2 " + dims, [d](CaseShape& s) {
            s.batch = 2;
            s.seqlen_q = s.seqlen_k = 300;
            s.heads_q = 4;
            s.heads_kv = 2;
            s.head_dim_qk = s.head_dim_v = d;
            s.key_bias = random_biases(s, 1.5f, 21);
        }, [](const CaseShape& s, const std::string& label) { check_gpu_case(s, label); });
        for_each_mode(fp8_modes(), "bias causal-br sq=200 sk=1000 sd 6, sinks " + dims, [d](CaseShape& s) {
            s.mask = ZYFA_MASK_CAUSAL_BOTTOM_RIGHT;
            s.seqlen_q = 200;
            s.seqlen_k = 1000;
            s.head_dim_qk = s.head_dim_v = d;
            s.sinks.assign(static_cast<size_t>(s.heads_q), 1.5f);
            s.key_bias = random_biases(s, 6.0f, 22);
        }, [](const CaseShape& s, const std::string& label) { check_gpu_case(s, label); });
        for_each_mode(fp8_modes(), "bias varlen q(1,300,0,129) k(0,300,5,129) " + dims, [d](CaseShape& s) {
            s.batch = 4;
            s.lengths_q = {1, 300, 0, 129};
            s.lengths_k = {0, 300, 5, 129};
            s.seqlen_q = s.seqlen_k = 300;
            s.head_dim_qk = s.head_dim_v = d;
            s.mask = ZYFA_MASK_CAUSAL_BOTTOM_RIGHT;
            s.key_bias = random_biases(s, 1.5f, 23);
        }, [](const CaseShape& s, const std::string& label) { check_gpu_case(s, label); });
    }
}

struct GpuRun {
    GpuCase gpu;
    std::string kernel;
    explicit GpuRun(const CaseShape& shape) : gpu(*session().runtime, shape) {
        Session& s = session();
        const char* name = kernel_of(gpu);
        kernel = name ? name : "(none)";
        const zyfa_status st = gpu.run(s.cuda, *s.runtime, s.stream);
        if (st != ZYFA_SUCCESS) {
            std::printf("  zyfa_attn_fwd(CUDA) failed: %s: %s\n", zyfa_status_string(st), zyfa_last_error_message());
            fail();
        }
        assert_true(gpu.guards_intact());
    }
};

bool same_bits(const AttentionCase& a, const AttentionCase& b) {
    return a.o == b.o && std::memcmp(a.lse.data(), b.lse.data(), 4 * a.lse.size()) == 0;
}

// EXACT with a bias of +0 against the bias-free kernel. The two exponent forms differ by at most
// half an ulp of s * c in x, so an e4m3 P code moves by one step (at most 1/8 of that p) only where
// x lies that close to a rounding boundary: gpu_p_code_agreement's random-score bound allows 2% of
// the codes to move. With V's entries independent, O then moves by at most 0.125 * sqrt(0.02) =
// 1.8e-2 of its RMS. lse is a sum of unrounded p whose exponents move by <= 2^-12: the exact-score
// bound 2e-4 (exact_score_inputs.hpp).
constexpr double kFusedExponentORelRms = 0.125 * 0.1414213562;
constexpr double kFusedExponentLse = 2e-4;

void test_zero_bias_is_the_bias_free_kernel(void**) {
    guarded([] {
        for (int64_t d : {128, 64}) {
            for (const DtypeMode& m : fp8_modes()) {
                CaseShape s = mode_shape(m);
                s.batch = 2;
                s.mask = ZYFA_MASK_CAUSAL_BOTTOM_RIGHT;
                s.seqlen_q = 333;
                s.seqlen_k = 1000;
                s.heads_q = 4;
                s.heads_kv = 2;
                s.head_dim_qk = s.head_dim_v = d;
                s.out_dtype = ZYFA_DTYPE_FP32;
                GpuRun none(s);
                s.key_bias.assign(static_cast<size_t>(key_rows(s) * s.heads_q), 0.0f);
                GpuRun zero(s);
                const bool same = same_bits(none.gpu.host, zero.gpu.host);
                const CpuDiff diff = compare_with_cpu(zero.gpu.host, none.gpu.host);
                std::printf("  %-13s %-11s bias +0 (%s) vs none (%s): %s; O rel_rms %.2e, bitwise %lld/%lld, "
                            "lse %.1e\n",
                            m.name, head_dims_label(d, d).c_str(), zero.kernel.c_str(), none.kernel.c_str(),
                            same ? "bitwise equal" : "DIFFERENT", diff.rel_rms,
                            static_cast<long long>(diff.bitwise_equal), static_cast<long long>(diff.elements),
                            diff.lse_max_abs);
                assert_non_null(std::strstr(zero.kernel.c_str(), "_ws_bias_e4m3_"));
                assert_null(std::strstr(none.kernel.c_str(), "_ws_bias_"));
                if (m.softmax == ZYFA_SOFTMAX_LEAN) {
                    assert_true(same);
                } else {
                    assert_int_equal(diff.lse_mismatched_infinities, 0);
                    assert_true(diff.rel_rms <= kFusedExponentORelRms);
                    assert_true(diff.lse_max_abs <= kFusedExponentLse);
                }
            }
        }
    });
}

// Exact scores and one-hot V (exact_score_inputs.hpp): O[i][j] is row i's P of key j times one
// constant per (row, block), so a P that differs from the CPU model's shows as a jump in the ratio
// O_gpu / O_model. The biased score fma(s, c, z) of an exact s is then the same fp32 on both sides,
// so LEAN's codes must all agree: the per-key constant is the model's (bias + 8z) / 128 exactly.
void test_exact_scores_p_codes(void**) {
    for (const DtypeMode& m : fp8_modes()) {
        for (int64_t d : {128, 64}) {
            CaseShape s = mode_shape(m);
            s.out_dtype = ZYFA_DTYPE_FP32;
            s.batch = 2;
            s.heads_q = 4;
            s.heads_kv = 2;
            s.seqlen_q = s.seqlen_k = d;  // one-hot V needs a dimension per key
            s.head_dim_qk = s.head_dim_v = d;
            s.seed = 7;
            s.key_bias = random_biases(s, 2.0f, 51);
            const GpuCase::Edit edit = [](AttentionCase& c) {
                integer_qk(c, 13);
                one_hot_v(c);
            };
            guarded([&] {
                Session& ss = session();
                GpuCase gpu(*ss.runtime, s, edit);
                assert_int_equal(gpu.run(ss.cuda, *ss.runtime, ss.stream), ZYFA_SUCCESS);
                AttentionCase cpu(s);
                edit(cpu);
                run_on_cpu_as(cpu, ss.cuda, gpu);
                const PComparison p = compare_p_through_one_hot_v(gpu.host, cpu);
                const int64_t compared = p.compared, mismatched = p.mismatched;
                const CpuDiff diff = compare_with_cpu(gpu.host, cpu);
                std::printf("  exact S + bias, one-hot V %-13s %-11s %s: P mismatches %lld of %lld, lse %.1e\n", m.name,
                            head_dims_label(d, d).c_str(), kernel_of(gpu), (long long)mismatched, (long long)compared,
                            diff.lse_max_abs);
                assert_true(compared > 0);
                assert_true(diff.lse_max_abs <= exact_score_lse_tol(m.dtype, m.softmax));
                assert_int_equal(diff.lse_mismatched_infinities, 0);
                if (m.softmax == ZYFA_SOFTMAX_LEAN) {
                    assert_int_equal(mismatched, 0);
                } else {
                    assert_true(mismatched * 200 <= compared);  // an exp2 an ulp away, rarely
                }
            });
        }
    }
}

void test_dropped_and_poisoned_keys(void**) {
    for (const DtypeMode& m : fp8_modes()) {
        CaseShape s = mode_shape(m);
        s.mask = ZYFA_MASK_CAUSAL;
        s.seqlen_q = s.seqlen_k = 300;
        s.heads_q = s.heads_kv = 2;
        s.head_dim_qk = s.head_dim_v = 128;
        s.key_bias = random_biases(s, 1.5f, 31);
        for (int64_t j = 0; j < s.seqlen_k; j += 3) s.key_bias[static_cast<size_t>(j)] = -kInf;  // head 0
        check_gpu_case(s, std::string("bias -inf on every third key of head 0 ") + m.name);
        guarded([&] {
            CaseShape p = s;
            p.key_bias.assign(static_cast<size_t>(p.heads_q * p.seqlen_k), 0.25f);
            p.key_bias[140] = std::numeric_limits<float>::quiet_NaN();      // head 0, key 140
            p.key_bias[static_cast<size_t>(p.seqlen_k + 270)] = kInf;       // head 1, key 270
            GpuRun poisoned(p);
            int64_t wrong = 0;
            for (int64_t h = 0; h < 2; ++h)
                for (int64_t i = 0; i < p.seqlen_q; ++i) {
                    const bool sees = i >= (h == 0 ? 140 : 270);
                    const float lse = poisoned.gpu.host.lse[static_cast<size_t>(h * p.seqlen_q + i)];
                    const float o = poisoned.gpu.host.out((i * p.heads_q + h) * p.head_dim_v);
                    wrong += std::isnan(lse) != sees || std::isnan(o) != sees;
                }
            std::printf("  %-13s NaN and +inf biases: %lld rows where NaN does not match seeing the key\n", m.name,
                        static_cast<long long>(wrong));
            assert_int_equal(wrong, 0);
        });
    }
}

void test_refusals(void**) {
    guarded([] {
        Session& ss = session();
        struct Refused {
            DtypeMode mode;
            int64_t dqk, dv;
            const char* what;
        };
        for (const Refused& r : {Refused{kBf16, 128, 128, "bf16"}, Refused{kE4m3fnLean, 192, 128, "e4m3 192/128"},
                                 Refused{kE4m3fnLean, 256, 256, "e4m3 256"}}) {
            CaseShape s = mode_shape(r.mode);
            s.head_dim_qk = r.dqk;
            s.head_dim_v = r.dv;
            s.key_bias = random_biases(s, 1.0f, 41);
            GpuCase gpu(*ss.runtime, s);
            const zyfa_status st = zyfa_attn_supported(ss.cuda, &gpu.params, &gpu.tq, &gpu.tk, &gpu.tv, &gpu.to);
            std::printf("  %-13s: %s: %s\n", r.what, zyfa_status_string(st), zyfa_last_error_message());
            assert_int_equal(st, ZYFA_ERROR_NOT_SUPPORTED);
            assert_non_null(std::strstr(zyfa_last_error_message(), "params.key_bias"));
        }
    });
}

}  // namespace

int main() {
    const int status = open_session_or_skip("gpu_key_bias");
    if (status != 0) return status;
    const CMUnitTest tests[] = {
        cmocka_unit_test(test_against_cpu_and_reference),
        cmocka_unit_test(test_zero_bias_is_the_bias_free_kernel),
        cmocka_unit_test(test_exact_scores_p_codes),
        cmocka_unit_test(test_dropped_and_poisoned_keys),
        cmocka_unit_test(test_refusals),
    };
    const int failed = cmocka_run_group_tests(tests, nullptr, nullptr);
    close_session();
    return failed;
}
