// Guards with margin on the accuracy claims of docs/accuracy.md, on zyfa-accuracy's generator:
//   - LEAN's error is at most 1.3x EXACT's on every case (kernel-only);
//   - LEAN's error is at most 0.6x NAIVE's on a long-context sink case (kernel-only);
//   - the Hadamard rotation of Q and K lowers the end-to-end error on the outlier (LLM-like) case.
// The figures each case measured are printed, to compare with the margins.
#include <cstdio>

#include "accuracy_run.hpp"
#include "numerics/cmocka_cpp.hpp"

using namespace zyfa_accuracy;
using zyfa::cpu::NumericsModel;
using zyfa::cpu::SoftmaxScheme;

namespace {

struct Env {
    zyfa_context* ctx = nullptr;
    zyfa::cpu::WorkerPool pool{2};
    Env() {
        zyfa_context_options o;
        zyfa_context_options_init(&o, sizeof o);
        o.backend = ZYFA_BACKEND_CPU;
        o.num_threads = 2;
        assert_int_equal(zyfa_context_create(&o, &ctx), ZYFA_SUCCESS);
    }
    ~Env() { zyfa_context_destroy(ctx); }
};

NumericsModel model(SoftmaxScheme s) {
    NumericsModel m;
    m.scheme = s;
    return m;
}

ActivationShape shape(Distribution d, int64_t seqlen, int64_t dqk, int64_t dv, uint64_t seed) {
    ActivationShape s;
    s.distribution = d;
    s.seqlen = seqlen;
    s.heads = 2;  // one peaked and one flat head in the LLM-like generator
    s.head_dim_qk = dqk;
    s.head_dim_v = dv;
    s.seed = seed;
    return s;
}

double kernel_error(const AccuracyConfig& c, const KernelInputs& in, const TileOutputs& ref, SoftmaxScheme s) {
    return AccuracyConfig::compare(c.run_model(in, model(s)), ref).rel_rms;
}

// Margin 1.3x: the per-element Lean P code spreads 1.19x more than RNE in log2 (0.0455 vs 0.0382,
// zyfa-accuracy --per-element), so on Gaussian inputs (no tiny probabilities) LEAN measures 1.19x
// EXACT; on the LLM-like inputs block scaling and the rounded row sum bring it to about 0.8x
// (docs/accuracy.md). 1.3x fails if Lean P gets coarser or LEAN loses one of its techniques.
void test_lean_within_1_3x_exact(void**) {
    Env env;
    const ActivationShape cases[] = {
        shape(Distribution::Gaussian, 1024, 128, 128, 11),
        shape(Distribution::LlmLike, 1024, 128, 128, 12),
        shape(Distribution::LlmLike, 2048, 192, 128, 13),
    };
    for (const ActivationShape& s : cases) {
        const AccuracyConfig c(s, 16, env.pool, env.ctx);
        const KernelInputs in = c.fp8(ZYFA_DTYPE_FP8_E4M3FN, false);
        const TileOutputs ref = c.reference(in);
        const double exact = kernel_error(c, in, ref, SoftmaxScheme::Exact);
        const double lean = kernel_error(c, in, ref, SoftmaxScheme::Lean);
        std::printf("  %-8s S=%-5lld d=%lld/%lld: EXACT %.3e LEAN %.3e (%.2fx)\n", distribution_name(s.distribution),
                    static_cast<long long>(s.seqlen), static_cast<long long>(s.head_dim_qk),
                    static_cast<long long>(s.head_dim_v), exact, lean, lean / exact);
        assert_true(lean <= 1.3 * exact);
    }
}

// Margin 0.6x: on the LLM-like inputs at 8K NAIVE flushes every probability below 2^-10 of the row
// maximum to zero yet counts it in the denominator; LEAN measured well under 0.2x of NAIVE there.
void test_lean_beats_naive_on_long_sink(void**) {
    Env env;
    const AccuracyConfig c(shape(Distribution::LlmLike, 8192, 128, 128, 14), 8, env.pool, env.ctx);
    const KernelInputs in = c.fp8(ZYFA_DTYPE_FP8_E4M3FN, false);
    const TileOutputs ref = c.reference(in);
    const double naive = kernel_error(c, in, ref, SoftmaxScheme::Naive);
    const double lean = kernel_error(c, in, ref, SoftmaxScheme::Lean);
    std::printf("  llm S=8192 (8 sampled tiles): NAIVE %.3e LEAN %.3e (%.3fx)\n", naive, lean, lean / naive);
    assert_true(lean <= 0.6 * naive);
}

// The outlier channels set each head's amax; the rotation spreads them, so every element keeps more
// of e4m3's range (docs/accuracy.md measures about half the end-to-end error).
void test_hadamard_lowers_end_to_end_error(void**) {
    Env env;
    const AccuracyConfig c(shape(Distribution::LlmLike, 1024, 128, 128, 15), 32, env.pool, env.ctx);
    const TileOutputs ref = c.reference(c.original());
    const double plain = AccuracyConfig::compare(
        c.run_model(c.fp8(ZYFA_DTYPE_FP8_E4M3FN, false), model(SoftmaxScheme::Lean)), ref).rel_rms;
    const double rotated = AccuracyConfig::compare(
        c.run_model(c.fp8(ZYFA_DTYPE_FP8_E4M3FN, true), model(SoftmaxScheme::Lean)), ref).rel_rms;
    std::printf("  llm S=1024 end to end, LEAN: unrotated %.3e, Hadamard %.3e (%.2fx)\n", plain, rotated,
                rotated / plain);
    assert_true(rotated < plain);
}

}  // namespace

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lean_within_1_3x_exact),
        cmocka_unit_test(test_lean_beats_naive_on_long_sink),
        cmocka_unit_test(test_hadamard_lowers_end_to_end_error),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
