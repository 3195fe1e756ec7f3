// The INT8 Q/K mode on the CPU backend (the model of the GPU kernels): the int32 -> fp32 score
// conversion of common/int8_qk.h over its whole range, the Lean P FMA with the conversion folded in,
// scores at the ends of the int8 range, the head-dim bound, zyfa_quantize_int8 (codes, descales,
// layouts, K smoothing, Hadamard, validation) and the whole path quantiser -> attention against
// fp64 on the unquantised inputs, beside the FP8 per-head path. The grid of shapes, masks, output
// dtypes and key blocks runs in attention_vs_reference and key_block (attention_modes.hpp).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "common/hadamard.h"
#include "common/int8_qk.h"
#include "common/lean_p.h"
#include "common/smooth_mean.h"
#include "reference_check.hpp"

using namespace zyfa_test;
namespace numerics = zyfa::numerics;

namespace {

zyfa_context* g_ctx = nullptr;

// Every int32 score a head_dim_qk <= 256 problem can produce converts exactly; one beyond does not.
void test_score_conversion_is_exact_over_its_range(void**) {
    const int32_t bound = 1 << 22;
    int64_t wrong = 0;
    for (int32_t s = -bound; s <= bound; ++s) {
        const float biased = numerics::int8_score_biased(s);
        if (numerics::int8_score_value(biased) != static_cast<float>(s)) ++wrong;
        if (biased != static_cast<float>(s) + numerics::kMagicInteger) ++wrong;
    }
    std::printf("  %lld of %d scores in [-2^22, 2^22] convert inexactly\n", static_cast<long long>(wrong), 2 * bound + 1);
    assert_int_equal(wrong, 0);
    // The bound is real: 2^22 + 1 lands past 2^24, where the fp32 ulp is 2.
    assert_true(numerics::int8_score_value(numerics::int8_score_biased(bound + 1)) != static_cast<float>(bound + 1));
    // The largest |score| of head dim 256: 128 * 128 * 256 = 2^22.
    assert_int_equal(128 * 128 * numerics::kInt8MaxHeadDim, bound);
}

// LEAN's code argument with the bias removal folded into the FMA constant stays within
// 2 * scale8_log2 (+ an ulp of the result) of the unfolded fma(float(s), scale8_log2, bias), and
// the codes differ only where the unfolded argument lies that close to a rounding boundary. The
// scales cover real ones: a code step per 2^6 .. 2^12 units of the integer score (scores of real
// activations spread over ~10^4 units while their codes spread over ~100).
void test_folded_lean_fma_is_within_its_bound(void**) {
    std::mt19937_64 rng(7);
    std::uniform_int_distribution<int32_t> score(-(1 << 22), 1 << 22);
    std::uniform_real_distribution<float> log_scale(-12.0f, -6.0f);
    std::uniform_real_distribution<float> offset(-200.0f, 200.0f);
    double worst_excess = 0.0;
    int64_t codes_differ = 0, near_boundary = 0;
    const int64_t trials = 2000000;
    for (int64_t i = 0; i < trials; ++i) {
        const float a = std::exp2(log_scale(rng));
        const int32_t s = score(rng);
        // A bias that puts the argument in the code range most of the time.
        const float bias = static_cast<float>(60.0 - static_cast<double>(s) * a) + offset(rng) * 0.5f;
        const float folded = std::fma(numerics::int8_score_biased(s), a, numerics::int8_lean_p_bias(bias, a));
        const float unfolded = std::fma(static_cast<float>(s), a, bias);
        const double bound = 2.0 * a + std::fabs(static_cast<double>(unfolded)) * 0x1p-23 + 0x1p-24;
        worst_excess = std::max(worst_excess, std::fabs(static_cast<double>(folded) - unfolded) / bound);
        const auto code = [&](float bias_used, float x) {
            return numerics::lean_p_code(x, a, bias_used, numerics::FloatToIntRounding::NearestEven,
                                         numerics::Fp8Format::E4M3FN);
        };
        const uint8_t c_folded = code(numerics::int8_lean_p_bias(bias, a), numerics::int8_score_biased(s));
        const uint8_t c_unfolded = code(bias, static_cast<float>(s));
        if (c_folded != c_unfolded) {
            ++codes_differ;
            const float frac = unfolded - std::floor(unfolded);
            if (std::fabs(frac - 0.5f) <= static_cast<float>(bound)) ++near_boundary;
        }
    }
    std::printf("  folded vs unfolded: worst |diff| / bound %.3f; codes differ in %lld of %lld (%lld at a rounding "
                "boundary)\n",
                worst_excess, static_cast<long long>(codes_differ), static_cast<long long>(trials),
                static_cast<long long>(near_boundary));
    assert_true(worst_excess <= 1.0);
    assert_int_equal(codes_differ, near_boundary);
    assert_true(codes_differ * 100 < trials);  // under 1%, each by one code at a tie-like boundary
}

// Scores at the ends of the int8 range (|s| = 2^22 at head dim 256, -128 included) are exact: with
// every q and k equal the row is uniform, and O matches fp64 within the P rounding of each mode.
void test_extreme_scores_at_head_dim_256(void**) {
    for (zyfa_softmax softmax : {ZYFA_SOFTMAX_EXACT, ZYFA_SOFTMAX_LEAN}) {
        for (int8_t qv : {int8_t(-128), int8_t(127)}) {
            CaseShape s;
            s.dtype = ZYFA_DTYPE_INT8;
            s.softmax = softmax;
            s.descales = true;
            s.head_dim_qk = 256;
            s.head_dim_v = 64;
            s.seqlen_q = s.seqlen_k = 150;
            AttentionCase c(s);
            std::fill(c.q.begin(), c.q.end(), static_cast<uint8_t>(qv));
            std::fill(c.k.begin(), c.k.end(), static_cast<uint8_t>(int8_t(-128)));
            // Descales that keep the scaled scores finite and the same per row: one q descale per
            // token, one k descale for every block.
            std::fill(c.k_descale_per_block.begin(), c.k_descale_per_block.end(), 1.0f / 4096);
            assert_int_equal(c.run(g_ctx), ZYFA_SUCCESS);
            const zyfa::AttnProblem problem = zyfa::validate_attn(&c.params, &c.tq, &c.tk, &c.tv, &c.to, ZYFA_BACKEND_CPU);
            const ErrorStats e = compare(c, zyfa::cpu::attention_reference_fp64(problem));
            const double tol = o_tolerance(ZYFA_DTYPE_INT8, softmax, s.out_dtype);
            std::printf("  hd 256, q = %4d, k = -128, %s: rel_rms %.2e (tol %.1e), lse_err %.2e\n", qv,
                        softmax == ZYFA_SOFTMAX_LEAN ? "LEAN " : "EXACT", e.rel_rms, tol, e.lse_max_abs);
            assert_true(e.rel_rms <= tol);
            assert_true(e.lse_max_abs <= lse_tolerance(softmax));
        }
    }
}

// Above head dim 256 the scores leave the exact range: NOT_SUPPORTED, naming the limit.
void test_head_dim_above_256_is_not_supported(void**) {
    CaseShape s;
    s.dtype = ZYFA_DTYPE_INT8;
    s.descales = true;
    s.head_dim_qk = 320;
    s.head_dim_v = 64;
    AttentionCase c(s);
    assert_int_equal(c.run(g_ctx), ZYFA_ERROR_NOT_SUPPORTED);
    assert_non_null(std::strstr(zyfa_last_error_message(), "params.head_dim_qk = 320 with INT8 q/k"));
    assert_int_equal(c.o[0], 0xA5);  // nothing written
}

// --- zyfa_quantize_int8 -------------------------------------------------------------------------

// An fp32 [batch, seq, heads, head_dim] input, packed when lengths are given, with head padding.
struct QuantInput {
    int64_t batch, seqlen, heads, head_dim, pad = 5;
    std::vector<int32_t> cu;  // empty = fixed length
    std::vector<float> x;
    std::vector<int8_t> out;
    zyfa_tensor in_view{}, out_view{};

    QuantInput(int64_t b, int64_t s, int64_t h, int64_t d, std::vector<int32_t> lengths, uint64_t seed)
        : batch(b), seqlen(s), heads(h), head_dim(d) {
        if (!lengths.empty()) {
            cu.push_back(0);
            for (int32_t len : lengths) cu.push_back(cu.back() + len);
        }
        std::mt19937_64 rng(seed);
        std::normal_distribution<float> normal(0.0f, 1.0f);
        x.resize(static_cast<size_t>(rows() * heads * (head_dim + pad)));
        for (int64_t r = 0; r < rows(); ++r)
            for (int64_t hh = 0; hh < heads; ++hh)
                for (int64_t dd = 0; dd < head_dim; ++dd)
                    // A per-channel bias and an outlier channel, as real keys have.
                    x[index(r, hh, dd)] = normal(rng) + (dd == 3 ? 12.0f : 0.0f) + 0.5f * static_cast<float>(dd % 7);
        out.assign(x.size(), static_cast<int8_t>(0x5A));
        in_view = view(x.data(), ZYFA_DTYPE_FP32);
        out_view = view(out.data(), ZYFA_DTYPE_INT8);
    }
    int64_t rows() const { return cu.empty() ? batch * seqlen : cu.back(); }
    int64_t len(int64_t b) const { return cu.empty() ? seqlen : cu[b + 1] - cu[b]; }
    int64_t row(int64_t b, int64_t s) const { return cu.empty() ? b * seqlen + s : cu[b] + s; }
    int64_t index(int64_t r, int64_t hh, int64_t dd) const { return (r * heads + hh) * (head_dim + pad) + dd; }
    zyfa_tensor view(void* data, zyfa_dtype dtype) const {
        zyfa_tensor t;
        std::memset(&t, 0, sizeof t);
        t.data = data;
        t.dtype = dtype;
        t.stride_head = head_dim + pad;
        t.stride_seq = heads * t.stride_head;
        t.stride_batch = cu.empty() ? seqlen * t.stride_seq : 0;
        return t;
    }
    zyfa_quant_params params(int32_t scale_rows, uint32_t flags, float* mean) const {
        zyfa_quant_params p;
        zyfa_quant_params_init(&p, sizeof p);
        p.flags = flags;
        p.batch = batch;
        p.seqlen = seqlen;
        p.heads = heads;
        p.head_dim = head_dim;
        p.cu_seqlens = cu.empty() ? nullptr : cu.data();
        p.smooth_mean = mean;
        p.scale_rows = scale_rows;
        return p;
    }
};

constexpr float kDescaleSentinel = -3.0f;

// Codes and descales against the definition (include/zyfa.h), computed here independently: per
// group amax, code = nearest-even(x * (127 / amax)), descale = amax / 127; padded entries untouched.
void check_plain_quantisation(int32_t scale_rows, std::vector<int32_t> lengths) {
    QuantInput in(lengths.empty() ? 2 : static_cast<int64_t>(lengths.size()), 150, 3, 64, lengths, 11);
    const int64_t groups = (in.seqlen + scale_rows - 1) / scale_rows;
    std::vector<float> descale(static_cast<size_t>(in.batch * in.heads * groups), kDescaleSentinel);
    const zyfa_quant_params p = in.params(scale_rows, 0, nullptr);
    assert_int_equal(zyfa_quantize_int8(g_ctx, &p, &in.in_view, &in.out_view, descale.data(), nullptr), ZYFA_SUCCESS);
    int64_t wrong_codes = 0, wrong_descales = 0, written_padding = 0;
    for (int64_t b = 0; b < in.batch; ++b)
        for (int64_t h = 0; h < in.heads; ++h)
            for (int64_t g = 0; g < groups; ++g) {
                const float got = descale[static_cast<size_t>((b * in.heads + h) * groups + g)];
                const int64_t first = g * scale_rows, last = std::min(in.len(b), first + scale_rows);
                if (first >= last) {
                    written_padding += got != kDescaleSentinel;
                    continue;
                }
                float amax = 0.0f;
                for (int64_t s = first; s < last; ++s)
                    for (int64_t d = 0; d < in.head_dim; ++d)
                        amax = std::max(amax, std::fabs(in.x[in.index(in.row(b, s), h, d)]));
                wrong_descales += got != amax / 127.0f;
                const float scale = 127.0f / amax;
                for (int64_t s = first; s < last; ++s)
                    for (int64_t d = 0; d < in.head_dim; ++d) {
                        const int64_t i = in.index(in.row(b, s), h, d);
                        const float want = std::fmin(127.0f, std::fmax(-127.0f, std::nearbyint(in.x[i] * scale)));
                        wrong_codes += in.out[i] != static_cast<int8_t>(want);
                    }
            }
    std::printf("  scale_rows %2d %s: %lld wrong codes, %lld wrong descales, %lld padding entries written\n",
                scale_rows, lengths.empty() ? "fixed " : "varlen", static_cast<long long>(wrong_codes),
                static_cast<long long>(wrong_descales), static_cast<long long>(written_padding));
    assert_int_equal(wrong_codes, 0);
    assert_int_equal(wrong_descales, 0);
    assert_int_equal(written_padding, 0);
}

void test_quantize_per_token_and_per_block(void**) {
    check_plain_quantisation(1, {});
    check_plain_quantisation(ZYFA_INT8_KEY_BLOCK, {});
    check_plain_quantisation(1, {150, 0, 65, 1});
    check_plain_quantisation(ZYFA_INT8_KEY_BLOCK, {150, 0, 65, 1});
}

// With K smoothing and Hadamard: the mean is zyfa_quantize_fp8's (one definition), and every code
// decodes to within half a step of the smoothed, rotated value.
void test_quantize_smooth_and_hadamard(void**) {
    QuantInput in(2, 130, 2, 128, {}, 5);
    const int64_t groups = (in.seqlen + 63) / 64;
    std::vector<float> descale(static_cast<size_t>(in.batch * in.heads * groups));
    std::vector<float> mean(static_cast<size_t>(in.batch * in.heads * in.head_dim));
    const zyfa_quant_params p = in.params(ZYFA_INT8_KEY_BLOCK, ZYFA_QUANT_SMOOTH | ZYFA_QUANT_HADAMARD, mean.data());
    assert_int_equal(zyfa_quantize_int8(g_ctx, &p, &in.in_view, &in.out_view, descale.data(), nullptr), ZYFA_SUCCESS);

    std::vector<uint8_t> fp8(in.x.size());
    std::vector<float> fp8_descale(static_cast<size_t>(in.batch * in.heads)), fp8_mean(mean.size());
    zyfa_tensor fp8_view = in.view(fp8.data(), ZYFA_DTYPE_FP8_E4M3FN);
    zyfa_quant_params pf = in.params(0, ZYFA_QUANT_SMOOTH | ZYFA_QUANT_HADAMARD, fp8_mean.data());
    assert_int_equal(zyfa_quantize_fp8(g_ctx, &pf, &in.in_view, &fp8_view, fp8_descale.data(), nullptr), ZYFA_SUCCESS);
    assert_memory_equal(mean.data(), fp8_mean.data(), mean.size() * sizeof(float));

    double worst = 0.0;
    std::vector<float> row(static_cast<size_t>(in.head_dim));
    for (int64_t b = 0; b < in.batch; ++b)
        for (int64_t h = 0; h < in.heads; ++h)
            for (int64_t s = 0; s < in.seqlen; ++s) {
                const float* m = &mean[static_cast<size_t>((b * in.heads + h) * in.head_dim)];
                for (int64_t d = 0; d < in.head_dim; ++d)
                    row[d] = numerics::smooth_subtract(in.x[in.index(in.row(b, s), h, d)], m[d]);
                assert_true(numerics::hadamard_rotate_row(row.data(), in.head_dim));
                const float step = descale[static_cast<size_t>((b * in.heads + h) * groups + s / 64)];
                for (int64_t d = 0; d < in.head_dim; ++d) {
                    const double err = std::fabs(in.out[in.index(in.row(b, s), h, d)] * static_cast<double>(step) - row[d]);
                    worst = std::max(worst, err / step);
                }
            }
    std::printf("  smooth + Hadamard: worst |decoded - value| = %.4f steps\n", worst);
    assert_true(worst <= 0.5 + 1e-4);
}

void test_quantize_invalid_requests(void**) {
    QuantInput in(1, 70, 2, 64, {}, 3);
    std::vector<float> descale(16, kDescaleSentinel);
    const std::vector<int8_t> before = in.out;
    struct Bad {
        const char* name;
        int32_t scale_rows;
        zyfa_dtype out_dtype;
        int32_t reserved;
        bool int8_entry;
        zyfa_status status;
        const char* needle;
    };
    const Bad cases[] = {
        {"int8 scale_rows 0", 0, ZYFA_DTYPE_INT8, 0, true, ZYFA_ERROR_INVALID_ARGUMENT, "params.scale_rows = 0"},
        {"int8 scale_rows 2", 2, ZYFA_DTYPE_INT8, 0, true, ZYFA_ERROR_INVALID_ARGUMENT, "params.scale_rows = 2"},
        {"int8 scale_rows 128", 128, ZYFA_DTYPE_INT8, 0, true, ZYFA_ERROR_INVALID_ARGUMENT, "params.scale_rows = 128"},
        {"int8 out FP8", 1, ZYFA_DTYPE_FP8_E4M3FN, 0, true, ZYFA_ERROR_INVALID_ARGUMENT, "is not INT8"},
        {"int8 reserved", 1, ZYFA_DTYPE_INT8, 1, true, ZYFA_ERROR_NOT_SUPPORTED, "params.reserved = 1"},
        {"fp8 out INT8", 0, ZYFA_DTYPE_INT8, 0, false, ZYFA_ERROR_INVALID_ARGUMENT, "out.dtype = 6 (INT8) is not FP8"},
        {"fp8 scale_rows 1", 1, ZYFA_DTYPE_FP8_E4M3FN, 0, false, ZYFA_ERROR_NOT_SUPPORTED, "zyfa_quantize_int8's"},
    };
    for (const Bad& c : cases) {
        zyfa_quant_params p = in.params(c.scale_rows, 0, nullptr);
        p.reserved = c.reserved;
        zyfa_tensor out = in.out_view;
        out.dtype = c.out_dtype;
        const zyfa_status st = c.int8_entry ? zyfa_quantize_int8(g_ctx, &p, &in.in_view, &out, descale.data(), nullptr)
                                            : zyfa_quantize_fp8(g_ctx, &p, &in.in_view, &out, descale.data(), nullptr);
        std::printf("  %-20s -> %s: %s\n", c.name, zyfa_status_string(st), zyfa_last_error_message());
        assert_int_equal(st, c.status);
        assert_non_null(std::strstr(zyfa_last_error_message(), c.needle));
        assert_memory_equal(in.out.data(), before.data(), before.size());
        for (float d : descale) assert_true(d == kDescaleSentinel);
    }
}

// --- The whole path ----------------------------------------------------------------------------

// Activations with a per-channel key bias and outlier channels; Q per token and K per 64 keys
// (smoothed and rotated) through zyfa_quantize_int8, V e4m3 per head, then INT8 LEAN and EXACT;
// and the FP8 per-head path on the same data. The INT8 path's O error against fp64 on the
// unquantised inputs must be well below FP8's (the reason the mode exists).
void test_quantised_end_to_end_beats_fp8_per_head(void**) {
    const int64_t seq = 256, heads = 2, dim = 64;
    QuantInput qin(1, seq, heads, dim, {}, 21), kin(1, seq, heads, dim, {}, 22), vin(1, seq, heads, dim, {}, 23);
    // Queries without the key bias: make them zero-mean per channel but keep the outlier.
    for (float& value : qin.x) value *= 0.5f;

    // fp64 reference on the fp32 inputs, through the same validated problem type.
    zyfa_attn_params p;
    zyfa_attn_params_init(&p, sizeof p);
    p.mask = ZYFA_MASK_CAUSAL;
    p.batch = 1;
    p.seqlen_q = p.seqlen_k = seq;
    p.heads_q = p.heads_kv = heads;
    p.head_dim_qk = p.head_dim_v = dim;
    std::vector<float> o(static_cast<size_t>(seq * heads * dim));
    zyfa_tensor to;
    std::memset(&to, 0, sizeof to);
    to.data = o.data();
    to.dtype = ZYFA_DTYPE_FP32;
    to.stride_head = dim;
    to.stride_seq = heads * dim;
    to.stride_batch = seq * heads * dim;
    const zyfa::AttnProblem ref_problem =
        zyfa::validate_attn(&p, &qin.in_view, &kin.in_view, &vin.in_view, &to, ZYFA_BACKEND_CPU);
    const auto ref = zyfa::cpu::attention_reference_fp64(ref_problem);
    auto rel_rms = [&]() {
        double e2 = 0.0, r2 = 0.0;
        for (size_t i = 0; i < ref.o.size(); ++i) {
            e2 += (o[i] - ref.o[i]) * (o[i] - ref.o[i]);
            r2 += ref.o[i] * ref.o[i];
        }
        return std::sqrt(e2 / r2);
    };

    // V e4m3 per head for both paths.
    std::vector<uint8_t> v8(vin.x.size());
    std::vector<float> v_descale(heads);
    zyfa_tensor tv = vin.view(v8.data(), ZYFA_DTYPE_FP8_E4M3FN);
    zyfa_quant_params pv = vin.params(0, 0, nullptr);
    assert_int_equal(zyfa_quantize_fp8(g_ctx, &pv, &vin.in_view, &tv, v_descale.data(), nullptr), ZYFA_SUCCESS);

    // FP8 per head, Q and K as they are.
    std::vector<uint8_t> q8(qin.x.size()), k8(kin.x.size());
    std::vector<float> qd(heads), kd(heads);
    zyfa_tensor tq8 = qin.view(q8.data(), ZYFA_DTYPE_FP8_E4M3FN), tk8 = kin.view(k8.data(), ZYFA_DTYPE_FP8_E4M3FN);
    zyfa_quant_params pq = qin.params(0, 0, nullptr), pk = kin.params(0, 0, nullptr);
    assert_int_equal(zyfa_quantize_fp8(g_ctx, &pq, &qin.in_view, &tq8, qd.data(), nullptr), ZYFA_SUCCESS);
    assert_int_equal(zyfa_quantize_fp8(g_ctx, &pk, &kin.in_view, &tk8, kd.data(), nullptr), ZYFA_SUCCESS);
    zyfa_attn_params pf = p;
    pf.q_descale = qd.data();
    pf.k_descale = kd.data();
    pf.v_descale = v_descale.data();
    pf.softmax = ZYFA_SOFTMAX_LEAN;
    assert_int_equal(zyfa_attn_fwd(g_ctx, &pf, &tq8, &tk8, &tv, &to, nullptr), ZYFA_SUCCESS);
    const double fp8_error = rel_rms();

    // INT8: Q per token, K per 64 keys, both rotated, K smoothed.
    std::vector<float> q_token(static_cast<size_t>(heads * seq)), k_block(static_cast<size_t>(heads * 4));
    std::vector<float> k_mean(static_cast<size_t>(heads * dim));
    zyfa_quant_params pq8 = qin.params(1, ZYFA_QUANT_HADAMARD, nullptr);
    zyfa_quant_params pk8 = kin.params(ZYFA_INT8_KEY_BLOCK, ZYFA_QUANT_HADAMARD | ZYFA_QUANT_SMOOTH, k_mean.data());
    assert_int_equal(zyfa_quantize_int8(g_ctx, &pq8, &qin.in_view, &qin.out_view, q_token.data(), nullptr), ZYFA_SUCCESS);
    assert_int_equal(zyfa_quantize_int8(g_ctx, &pk8, &kin.in_view, &kin.out_view, k_block.data(), nullptr), ZYFA_SUCCESS);
    double int8_error[2] = {0.0, 0.0};
    for (int mode = 0; mode < 2; ++mode) {
        zyfa_attn_params pi = p;
        pi.q_descale_per_token = q_token.data();
        pi.k_descale_per_block = k_block.data();
        pi.v_descale = v_descale.data();
        pi.softmax = mode == 0 ? ZYFA_SOFTMAX_EXACT : ZYFA_SOFTMAX_LEAN;
        assert_int_equal(zyfa_attn_fwd(g_ctx, &pi, &qin.out_view, &kin.out_view, &tv, &to, nullptr), ZYFA_SUCCESS);
        int8_error[mode] = rel_rms();
    }
    std::printf("  end to end rel_rms: FP8 per head LEAN %.3e; INT8 Q/K EXACT %.3e, LEAN %.3e (%.2fx FP8)\n", fp8_error,
                int8_error[0], int8_error[1], int8_error[1] / fp8_error);
    assert_true(int8_error[1] < 0.5 * fp8_error);
    assert_true(int8_error[0] < 0.5 * fp8_error);
}

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
        cmocka_unit_test(test_score_conversion_is_exact_over_its_range),
        cmocka_unit_test(test_folded_lean_fma_is_within_its_bound),
        cmocka_unit_test(test_extreme_scores_at_head_dim_256),
        cmocka_unit_test(test_head_dim_above_256_is_not_supported),
        cmocka_unit_test(test_quantize_per_token_and_per_block),
        cmocka_unit_test(test_quantize_smooth_and_hadamard),
        cmocka_unit_test(test_quantize_invalid_requests),
        cmocka_unit_test(test_quantised_end_to_end_beats_fp8_per_head),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
