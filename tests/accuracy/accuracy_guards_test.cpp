// Guards with margin on the accuracy claims of docs/accuracy.md, on zyfa-accuracy's generator:
//   - LEAN's error is at most 1.3x EXACT's on every case (kernel-only);
//   - LEAN's error is at most 0.6x NAIVE's on a long-context sink case (kernel-only);
//   - the Hadamard rotation of Q and K lowers the end-to-end error on the outlier (LLM-like) case;
//   - zyfa-accuracy --key-block: its sampled tiles give, bit for bit, what zyfa_attn_fwd on the CPU
//     backend gives with that params.key_block (0 = 64), and 128 is a different instance;
//   - on the shipped real layer 2 (tests/data/real-activations), end to end: Hadamard + K smoothing
//     below 0.66x per-head FP8's error, and with Q smoothed and its exact per-key bias
//     (ZYFA_QUANT_KEY_BIAS into zyfa_attn_params.key_bias) below 0.57x, for EXACT and LEAN.
// The figures each case measured are printed, to compare with the margins.
#include <cstdio>
#include <cstring>
#include <vector>

#include "accuracy_run.hpp"
#include "npy.hpp"
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

zyfa_tensor dense(const void* data, zyfa_dtype dtype, int64_t heads, int64_t dim) {
    zyfa_tensor t;
    std::memset(&t, 0, sizeof t);
    t.data = const_cast<void*>(data);
    t.dtype = dtype;
    t.stride_head = dim;
    t.stride_seq = heads * dim;
    return t;
}

// The whole causal problem through the public API, as a user with params.key_block would run it.
TileOutputs full_problem(const Env& env, const ActivationShape& s, const KernelInputs& in, zyfa_softmax softmax,
                         int key_block) {
    const int64_t S = s.seqlen, H = s.heads, DQ = s.head_dim_qk, DV = s.head_dim_v;
    std::vector<float> o(static_cast<size_t>(S * H * DV)), lse(static_cast<size_t>(H * S));
    zyfa_attn_params p;
    zyfa_attn_params_init(&p, sizeof p);
    p.mask = ZYFA_MASK_CAUSAL_BOTTOM_RIGHT;
    p.batch = 1;
    p.seqlen_q = p.seqlen_k = S;
    p.heads_q = p.heads_kv = H;
    p.head_dim_qk = DQ;
    p.head_dim_v = DV;
    p.softmax_scale = make_activations(s).softmax_scale;
    p.softmax = softmax;
    p.q_descale = in.q_descale.data();
    p.k_descale = in.k_descale.data();
    p.v_descale = in.v_descale.data();
    p.lse = lse.data();
    p.key_block = key_block;
    const zyfa_tensor tq = dense(in.q.data(), in.dtype, H, DQ), tk = dense(in.k.data(), in.dtype, H, DQ),
                      tv = dense(in.v.data(), in.dtype, H, DV), to = dense(o.data(), ZYFA_DTYPE_FP32, H, DV);
    assert_int_equal(zyfa_attn_fwd(env.ctx, &p, &tq, &tk, &tv, &to, nullptr), ZYFA_SUCCESS);
    // run_model's layout when every tile is sampled: o as [seq][head][dv], lse [tile][head][32 rows].
    TileOutputs out;
    out.o.assign(o.begin(), o.end());
    for (int64_t t = 0; t < S / kTileRows; ++t)
        for (int64_t h = 0; h < H; ++h)
            for (int64_t r = 0; r < kTileRows; ++r) out.lse.push_back(lse[static_cast<size_t>(h * S + t * kTileRows + r)]);
    return out;
}

// Each sampled tile is its own problem over the key prefix; with 128-key blocks that prefix ends
// mid-block (row_begin + 32), so this checks that the tiles still compute what the full problem does.
void test_key_block_models_the_cpu_backend(void**) {
    Env env;
    const ActivationShape s = shape(Distribution::LlmLike, 1024, 128, 128, 16);
    TileOutputs lean[3];
    const int key_blocks[3] = {0, 64, 128};
    for (int i = 0; i < 3; ++i) {
        const AccuracyConfig c(s, 32, env.pool, env.ctx, key_blocks[i]);  // 32 tiles: every row
        assert_int_equal(c.key_block(), key_blocks[i] == 0 ? 64 : key_blocks[i]);
        const KernelInputs in = c.fp8(ZYFA_DTYPE_FP8_E4M3FN, false);
        for (SoftmaxScheme scheme : {SoftmaxScheme::Exact, SoftmaxScheme::Lean}) {
            const TileOutputs got = c.run_model(in, model(scheme));
            const TileOutputs want =
                full_problem(env, s, in, scheme == SoftmaxScheme::Lean ? ZYFA_SOFTMAX_LEAN : ZYFA_SOFTMAX_EXACT,
                             key_blocks[i]);
            assert_true(got.o == want.o);
            assert_true(got.lse == want.lse);
            if (scheme == SoftmaxScheme::Lean) lean[i] = got;
        }
    }
    assert_true(lean[0].o == lean[1].o);  // 0 is the CPU's own 64
    assert_true(lean[2].o != lean[1].o);  // the block scales moved: the option reached the model
}

// Layer 2 of SmolLM2-135M (docs/accuracy.md), all 32 tiles of its 1,024 rows: measured
// (2026-12-04, zyfa-accuracy --smooth) HS / FP8 0.626 (EXACT) and 0.625 (LEAN), HSQ / FP8 0.540 and
// 0.542 (the same through the ABI's key bias, 2026-12-05). The margins fail if a transform stops
// paying or the bias stops reaching the scores.
void test_q_smoothing_bias_on_real_layer(void**) {
    Env env;
    ActivationShape s;
    Activations act = load_npy_activations(std::string(ZYFA_REAL_ACTIVATIONS_DIR) + "/layer02", 0.0f, s);
    const AccuracyConfig c(s, std::move(act), 32, env.pool, env.ctx);
    const TileOutputs ref = c.reference(c.original());
    const KernelInputs fp8 = c.fp8(ZYFA_DTYPE_FP8_E4M3FN, false);
    const KernelInputs hs = c.fp8(ZYFA_DTYPE_FP8_E4M3FN, true, true);
    const KernelInputs hsq = c.fp8(ZYFA_DTYPE_FP8_E4M3FN, true, true, true);
    assert_true(fp8.key_bias.empty() && hs.key_bias.empty());
    assert_int_equal(hsq.key_bias.size(), static_cast<size_t>(s.heads * s.seqlen));
    for (SoftmaxScheme scheme : {SoftmaxScheme::Exact, SoftmaxScheme::Lean}) {
        // O only: the smoothed lse needs its correction (AccuracyConfig::correct_smoothed_lse).
        const double plain = AccuracyConfig::compare(c.run_model(fp8, model(scheme)), ref).rel_rms;
        const double rotated_smoothed = AccuracyConfig::compare(c.run_model(hs, model(scheme)), ref).rel_rms;
        const double with_q = AccuracyConfig::compare(c.run_model(hsq, model(scheme)), ref).rel_rms;
        std::printf("  layer02 end to end, %s: per-head FP8 %.4e, Hadamard + K smoothing %.4e (%.3fx), + Q smoothing "
                    "and bias %.4e (%.3fx)\n",
                    scheme == SoftmaxScheme::Lean ? "LEAN" : "EXACT", plain, rotated_smoothed, rotated_smoothed / plain,
                    with_q, with_q / plain);
        assert_true(rotated_smoothed < 0.66 * plain);
        assert_true(with_q < 0.57 * plain);
    }
}

}  // namespace

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lean_within_1_3x_exact),
        cmocka_unit_test(test_lean_beats_naive_on_long_sink),
        cmocka_unit_test(test_hadamard_lowers_end_to_end_error),
        cmocka_unit_test(test_key_block_models_the_cpu_backend),
        cmocka_unit_test(test_q_smoothing_bias_on_real_layer),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
