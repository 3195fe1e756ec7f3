// Attention sinks (zyfa_attn_params.sinks) on the CPU backend, through the public API:
//  - a sink of -inf gives the same bits as no sinks, in every mode;
//  - the fp64 reference's sink is a key whose V is zero (softmax over [scores..., sink]);
//  - the CPU model with sinks against the fp64 reference, every mode, the usual tolerances;
//  - the rule of kernels/common/attention_sink.h, EXACT and LEAN alike: the sink joins the row sum
//    as its exact fp32 exponential (not a Lean P code), so from the same call without sinks
//    lse' = ln(e^lse + e^sink) and O' = O e^(lse - lse') to fp32 rounding;
//  - rows without keys get O = 0 and lse = the sink; NaN and +inf sinks poison their head's rows
//    only; sinks far above and below every score;
//  - merging: a sink passed to one part only (or merged as a part of its own, O = 0, lse = sink)
//    equals the unsplit call with sinks;
//  - validation: alignment, overlap with the outputs, a caller whose struct ends before the field.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include "cpu/attention_reference.hpp"
#include "reference_check.hpp"
#include "support/attention_modes.hpp"

using namespace zyfa_test;

namespace {

zyfa_context* g_ctx = nullptr;
constexpr float kInf = std::numeric_limits<float>::infinity();

// Sinks around the scores' scale: some below, some near, some above the rows' maxima.
std::vector<float> some_sinks(int64_t heads) {
    const float pattern[] = {0.5f, -2.0f, 3.0f, 1.25f, -0.75f, 6.0f, 2.0f, -5.0f};
    std::vector<float> s;
    for (int64_t h = 0; h < heads; ++h) s.push_back(pattern[h % 8]);
    return s;
}

CaseShape sink_shape(const DtypeMode& m) {
    CaseShape s = mode_shape(m);
    s.mask = ZYFA_MASK_CAUSAL_BOTTOM_RIGHT;
    s.seqlen_q = 90;
    s.seqlen_k = 150;  // three 64-key blocks
    s.heads_q = 4;
    s.heads_kv = 2;
    s.sinks = some_sinks(s.heads_q);
    return s;
}

void run_ok(AttentionCase& c, const char* what) {
    const zyfa_status st = c.run(g_ctx);
    if (st != ZYFA_SUCCESS) {
        std::printf("  %s: %s: %s\n", what, zyfa_status_string(st), zyfa_last_error_message());
        fail();
    }
}

void test_minus_inf_is_no_sink_bitwise(void**) {
    for (const DtypeMode& m : all_modes()) {
        CaseShape s = sink_shape(m);
        s.sinks.clear();
        AttentionCase none(s);
        run_ok(none, "no sinks");
        s.sinks.assign(static_cast<size_t>(s.heads_q), -kInf);
        AttentionCase minus_inf(s);
        run_ok(minus_inf, "sinks -inf");
        // Far below every score: 2^(z - m) flushes to 0, again the same bits.
        s.sinks.assign(static_cast<size_t>(s.heads_q), -1e30f);
        AttentionCase far_below(s);
        run_ok(far_below, "sinks -1e30");
        const bool same = none.o == minus_inf.o && none.o == far_below.o &&
                          std::memcmp(none.lse.data(), minus_inf.lse.data(), none.lse.size() * 4) == 0 &&
                          std::memcmp(none.lse.data(), far_below.lse.data(), none.lse.size() * 4) == 0;
        std::printf("  %-16s sinks -inf and -1e30 vs none: %s\n", m.name, same ? "bitwise equal" : "DIFFERENT");
        assert_true(same);
    }
}

// FP32 MHA, mask NONE, head dim 64 (scale 1/8 exact): the last channel of every q is 1 and of
// every real key 0, so adding a key whose K is c_h in that channel and whose V is 0 adds a score of
// exactly c_h / 8 for every query of head h, the sink the other call passes.
void test_reference_sink_is_a_zero_value_key(void**) {
    CaseShape s;
    s.dtype = ZYFA_DTYPE_FP32;
    s.softmax = ZYFA_SOFTMAX_EXACT;
    s.mask = ZYFA_MASK_NONE;
    s.seqlen_q = 20;
    s.seqlen_k = 33;
    s.heads_q = s.heads_kv = 3;
    s.head_dim_qk = s.head_dim_v = 64;
    const float c_h[] = {8.0f, -12.0f, 40.0f};  // sinks 1, -1.5, 5
    AttentionCase with_sink(s);
    CaseShape s_extra = s;
    s_extra.seqlen_k = s.seqlen_k + 1;
    AttentionCase extra(s_extra);
    const int64_t d = s.head_dim_qk;
    float* q = reinterpret_cast<float*>(with_sink.q.data());
    float* k = reinterpret_cast<float*>(with_sink.k.data());
    float* v = reinterpret_cast<float*>(with_sink.v.data());
    float* qe = reinterpret_cast<float*>(extra.q.data());
    float* ke = reinterpret_cast<float*>(extra.k.data());
    float* ve = reinterpret_cast<float*>(extra.v.data());
    for (int64_t i = 0; i < s.seqlen_q * s.heads_q; ++i) q[i * d + d - 1] = 1.0f;
    std::memcpy(qe, q, with_sink.q.size());
    for (int64_t j = 0; j < s.seqlen_k * s.heads_kv; ++j) k[j * d + d - 1] = 0.0f;
    std::memcpy(ke, k, with_sink.k.size());
    std::memcpy(ve, v, with_sink.v.size());
    for (int64_t h = 0; h < s.heads_kv; ++h) {
        float* krow = ke + (s.seqlen_k * s.heads_kv + h) * d;
        float* vrow = ve + (s.seqlen_k * s.heads_kv + h) * d;
        for (int64_t x = 0; x < d; ++x) krow[x] = 0.0f, vrow[x] = 0.0f;
        krow[d - 1] = c_h[h];
    }
    with_sink.sinks = {c_h[0] / 8.0f, c_h[1] / 8.0f, c_h[2] / 8.0f};
    with_sink.params.sinks = with_sink.sinks.data();
    const auto pa = zyfa::validate_attn(&with_sink.params, &with_sink.tq, &with_sink.tk, &with_sink.tv, &with_sink.to,
                                        ZYFA_BACKEND_CPU);
    const auto pb = zyfa::validate_attn(&extra.params, &extra.tq, &extra.tk, &extra.tv, &extra.to, ZYFA_BACKEND_CPU);
    const auto ra = zyfa::cpu::attention_reference_fp64(pa), rb = zyfa::cpu::attention_reference_fp64(pb);
    double o_diff = 0.0, lse_diff = 0.0, o_max = 0.0;
    for (size_t i = 0; i < ra.o.size(); ++i) {
        o_diff = std::fmax(o_diff, std::fabs(ra.o[i] - rb.o[i]));
        o_max = std::fmax(o_max, std::fabs(ra.o[i]));
    }
    for (size_t i = 0; i < ra.lse.size(); ++i) lse_diff = std::fmax(lse_diff, std::fabs(ra.lse[i] - rb.lse[i]));
    std::printf("  fp64 reference, sink vs zero-V key: max |dO| %.1e (max |O| %.2f), max |dlse| %.1e\n", o_diff, o_max,
                lse_diff);
    assert_true(o_max > 0.05);  // the case is not degenerate
    assert_true(o_diff <= 1e-12 && lse_diff <= 1e-12);
    // And the CPU model (EXACT, fp32) with the sink against the reference with the extra key.
    run_ok(with_sink, "fp32 with sinks");
    const ErrorStats e = compare(with_sink, rb);
    std::printf("  fp32 EXACT with sinks vs reference with the zero-V key: rel_rms %.1e lse %.1e\n", e.rel_rms,
                e.lse_max_abs);
    assert_true(e.rel_rms <= 1e-5 && e.lse_max_abs <= 1e-5);
}

void test_against_reference(void**) {
    for (const DtypeMode& m : all_modes()) {
        check_case(g_ctx, sink_shape(m), (std::string("sinks causal-br 90x150 gqa 4:2 ") + m.name).c_str());
        CaseShape s = sink_shape(m);
        s.lengths_q = {30, 0, 64};
        s.lengths_k = {70, 20, 0};  // the third sequence's rows see only the sink
        s.batch = 3;
        s.seqlen_q = 64;
        s.seqlen_k = 70;
        check_case(g_ctx, s, (std::string("sinks varlen ") + m.name).c_str());
        s = sink_shape(m);
        s.key_block = 128;
        check_case(g_ctx, s, (std::string("sinks key_block 128 ") + m.name).c_str());
    }
}

// lse' = ln(e^lse + e^sink) and O' = O e^(lse - lse') from the same call without sinks: the sink
// enters as its exact exponential in both modes (a Lean P code of it would be off by up to 8%).
void test_sink_joins_the_row_sum_exactly(void**) {
    for (const DtypeMode& m : all_modes()) {
        CaseShape s = sink_shape(m);
        s.out_dtype = ZYFA_DTYPE_FP32;
        s.sinks.clear();
        AttentionCase none(s);
        run_ok(none, "no sinks");
        // Sinks near each head's typical lse, where the sink's share of the sum is largest.
        s.sinks = some_sinks(s.heads_q);
        for (int64_t h = 0; h < s.heads_q; ++h) s.sinks[h] += none.lse[static_cast<size_t>(h * s.seqlen_q + s.seqlen_q - 1)];
        AttentionCase with(s);
        run_ok(with, "sinks");
        double lse_err = 0.0, o_err = 0.0, share_max = 0.0;
        for (int64_t h = 0; h < s.heads_q; ++h)
            for (int64_t i = 0; i < s.seqlen_q; ++i) {
                const size_t at = static_cast<size_t>(h * s.seqlen_q + i);
                const double l0 = none.lse[at], sink = s.sinks[h];
                const double want = std::fmax(l0, sink) + std::log1p(std::exp(-std::fabs(l0 - sink)));
                lse_err = std::fmax(lse_err, std::fabs(with.lse[at] - want) / std::fmax(1.0, std::fabs(want)));
                const double factor = std::exp(l0 - want);
                share_max = std::fmax(share_max, 1.0 - factor);
                for (int64_t x = 0; x < s.head_dim_v; ++x) {
                    const int64_t e = (i * s.heads_q + h) * s.head_dim_v + x;
                    const double a = none.out(e) * factor, b = with.out(e);
                    o_err = std::fmax(o_err, std::fabs(a - b) / std::fmax(1e-3, std::fabs(a)));
                }
            }
        std::printf("  %-16s lse' vs ln(e^lse + e^sink): rel %.1e; O' vs O e^(lse - lse'): rel %.1e; largest sink share %.2f\n",
                    m.name, lse_err, o_err, share_max);
        assert_true(share_max > 0.5);
        assert_true(lse_err <= 2e-6);
        assert_true(o_err <= 1e-5);
    }
}

void test_edge_rows(void**) {
    for (const DtypeMode& m : {kFp32, kBf16, kE4m3fnExact, kE4m3fnLean}) {
        // Bottom-right causal with sq > sk: the first 20 rows see no key.
        CaseShape s = mode_shape(m);
        s.mask = ZYFA_MASK_CAUSAL_BOTTOM_RIGHT;
        s.seqlen_q = 60;
        s.seqlen_k = 40;
        s.heads_q = s.heads_kv = 6;
        s.sinks = {1.5f, -kInf, std::numeric_limits<float>::quiet_NaN(), kInf, 1e30f, -3.0f};
        AttentionCase c(s);
        run_ok(c, "edge sinks");
        for (int64_t h = 0; h < s.heads_q; ++h)
            for (int64_t i = 0; i < s.seqlen_q; ++i) {
                const float lse = c.lse[static_cast<size_t>(h * s.seqlen_q + i)];
                const bool no_key = i < 20;
                bool o_zero = true, o_nan = true;
                for (int64_t x = 0; x < s.head_dim_v; ++x) {
                    const float o = c.out((i * s.heads_q + h) * s.head_dim_v + x);
                    o_zero = o_zero && o == 0.0f;
                    o_nan = o_nan && std::isnan(o);
                }
                const float sink = s.sinks[h];
                if (std::isnan(sink) || sink == kInf) {
                    assert_true(o_nan && std::isnan(lse));  // every row of the head, keys or not
                } else if (sink == 1e30f) {
                    assert_true(o_zero);  // all the mass on the sink
                    assert_true(std::fabs(lse - 1e30f) <= 1e24f);
                } else if (no_key) {
                    assert_true(o_zero);
                    if (sink == -kInf) {
                        assert_true(lse == -kInf);
                    } else {
                        assert_true(std::fabs(lse - sink) <= 1e-6f * std::fabs(sink));
                    }
                } else {
                    assert_false(o_zero || o_nan || std::isnan(lse) || std::isinf(lse));
                }
            }
        std::printf("  %-16s rows without keys: O = 0, lse = sink; NaN/+inf sinks: NaN rows of that head; 1e30: O = 0\n",
                    m.name);
    }
}

// Keys [0, sk) split at `cut` into two calls of mask NONE, merged; the unsplit call has sinks.
void test_merge_with_sinks(void**) {
    for (const DtypeMode& m : {kFp32, kE4m3fnExact, kE4m3fnLean}) {
        CaseShape s = mode_shape(m);
        s.mask = ZYFA_MASK_NONE;
        s.seqlen_q = 40;
        s.seqlen_k = 200;
        s.heads_q = s.heads_kv = 4;
        s.out_dtype = ZYFA_DTYPE_FP32;
        s.sinks = some_sinks(s.heads_q);
        AttentionCase whole(s);
        run_ok(whole, "unsplit");
        const int64_t cut = 128;  // on a key-block boundary
        const size_t elem = zyfa::cpu::dtype_size(s.dtype);
        const int64_t rows = s.seqlen_q * s.heads_q;
        std::vector<float> o_a(rows * s.head_dim_v), o_b(o_a.size()), lse_a(rows), lse_b(rows);
        std::vector<float> o_sink(o_a.size(), 0.0f), lse_sink(rows);
        for (int part = 0; part < 2; ++part) {
            zyfa_attn_params p = whole.params;
            zyfa_tensor tk = whole.tk, tv = whole.tv, to = whole.to;
            p.seqlen_k = part == 0 ? cut : s.seqlen_k - cut;
            tk.data = whole.k.data() + (part == 0 ? 0 : cut * tk.stride_seq * static_cast<int64_t>(elem));
            tv.data = whole.v.data() + (part == 0 ? 0 : cut * tv.stride_seq * static_cast<int64_t>(elem));
            tk.stride_batch = tv.stride_batch = 0;  // batch 1
            to.data = part == 0 ? o_a.data() : o_b.data();
            to.dtype = ZYFA_DTYPE_FP32;
            p.lse = part == 0 ? lse_a.data() : lse_b.data();
            p.sinks = part == 0 ? whole.sinks.data() : nullptr;  // one part carries the sinks
            assert_int_equal(zyfa_attn_fwd(g_ctx, &p, &whole.tq, &tk, &tv, &to, nullptr), ZYFA_SUCCESS);
        }
        auto merge = [&](const std::vector<const float*>& lses, const std::vector<float*>& os, std::vector<float>& out,
                         std::vector<float>& out_lse) {
            zyfa_merge_params mp;
            zyfa_merge_params_init(&mp, sizeof mp);
            mp.num_parts = static_cast<int32_t>(os.size());
            mp.batch = 1;
            mp.seqlen_q = s.seqlen_q;
            mp.heads = s.heads_q;
            mp.head_dim_v = s.head_dim_v;
            mp.lse = out_lse.data();
            std::vector<zyfa_tensor> views;
            for (float* o : os) {
                zyfa_tensor t = whole.to;
                t.data = o;
                t.dtype = ZYFA_DTYPE_FP32;
                views.push_back(t);
            }
            zyfa_tensor to = whole.to;
            to.data = out.data();
            assert_int_equal(zyfa_attn_merge(g_ctx, &mp, views.data(), lses.data(), &to, nullptr), ZYFA_SUCCESS);
        };
        std::vector<float> merged(o_a.size()), merged_lse(rows);
        merge({lse_a.data(), lse_b.data()}, {o_a.data(), o_b.data()}, merged, merged_lse);
        // The same with the sink as a part of its own (O = 0, lse = sink) and neither call carrying it.
        zyfa_attn_params p = whole.params;
        p.sinks = nullptr;
        zyfa_tensor tk = whole.tk, tv = whole.tv, to = whole.to;
        p.seqlen_k = cut;
        tk.stride_batch = tv.stride_batch = 0;
        to.data = o_a.data();
        to.dtype = ZYFA_DTYPE_FP32;
        p.lse = lse_a.data();
        assert_int_equal(zyfa_attn_fwd(g_ctx, &p, &whole.tq, &tk, &tv, &to, nullptr), ZYFA_SUCCESS);
        for (int64_t h = 0; h < s.heads_q; ++h)
            for (int64_t i = 0; i < s.seqlen_q; ++i) lse_sink[static_cast<size_t>(h * s.seqlen_q + i)] = s.sinks[h];
        std::vector<float> merged3(o_a.size()), merged3_lse(rows);
        merge({lse_a.data(), lse_b.data(), lse_sink.data()}, {o_a.data(), o_b.data(), o_sink.data()}, merged3, merged3_lse);
        double o_err = 0.0, o3_err = 0.0, lse_err = 0.0, o_max = 0.0;
        for (size_t i = 0; i < merged.size(); ++i) {
            const double w = whole.out(static_cast<int64_t>(i));
            o_max = std::fmax(o_max, std::fabs(w));
            o_err = std::fmax(o_err, std::fabs(merged[i] - w));
            o3_err = std::fmax(o3_err, std::fabs(merged3[i] - w));
        }
        for (size_t i = 0; i < merged_lse.size(); ++i)
            lse_err = std::fmax(lse_err, std::fmax(std::fabs(merged_lse[i] - whole.lse[i]), std::fabs(merged3_lse[i] - whole.lse[i])));
        // FP32: the same probabilities up to another running maximum, fp32 rounding: 1e-5 of max|O|.
        // FP8: each part rounds its P against its own running maximum, so the bounds of docs/api.md
        // (split keys merged against one call) apply: twice the single-call bound to fp64, EXACT
        // (2^-4 + n_keys 2^-18) max|v|, LEAN 0.0783 max|v|; lse 1e-4 and 0.085 per call.
        double v_max = 0.0;
        for (int64_t i = 0; i < s.seqlen_k * s.heads_kv * s.head_dim_v; ++i)
            v_max = std::fmax(v_max, std::fabs(zyfa::cpu::load_as_float(whole.v.data(), s.dtype, i)));
        const bool lean = m.softmax == ZYFA_SOFTMAX_LEAN, fp8 = zyfa::cpu::dtype_is_fp8(s.dtype);
        const double o_tol = !fp8 ? 1e-5 * std::fmax(1.0, o_max)
                             : 2 * v_max * (lean ? 0.0783 : 1.0 / 16 + s.seqlen_k * 0x1p-18);
        const double lse_tol = lean ? 2 * 0.085 : fp8 ? 2e-4 : 1e-5;
        std::printf("  %-16s merged (sinks on one part | as a part) vs unsplit with sinks: max |dO| %.1e | %.1e (tol %.1e), "
                    "max |dlse| %.1e (tol %.0e)\n", m.name, o_err, o3_err, o_tol, lse_err, lse_tol);
        assert_true(o_err <= o_tol && o3_err <= o_tol && lse_err <= lse_tol);
    }
}

void test_validation(void**) {
    CaseShape s = mode_shape(kBf16);
    s.sinks = some_sinks(s.heads_q);
    AttentionCase c(s);
    // Misaligned.
    std::vector<uint8_t> raw(64);
    c.params.sinks = reinterpret_cast<const float*>(raw.data() + 2);
    assert_int_equal(c.run(g_ctx), ZYFA_ERROR_INVALID_ARGUMENT);
    assert_non_null(std::strstr(zyfa_last_error_message(), "params.sinks"));
    // Overlapping an output: the lse the call writes.
    c.params.sinks = c.lse.data();
    assert_int_equal(c.run(g_ctx), ZYFA_ERROR_INVALID_ARGUMENT);
    assert_non_null(std::strstr(zyfa_last_error_message(), "params.sinks"));
    // A caller whose struct ends before the field: whatever lies there is not read.
    c.params.sinks = reinterpret_cast<const float*>(raw.data() + 1);  // would be refused if read
    c.params.struct_size = static_cast<uint32_t>(offsetof(zyfa_attn_params, sinks));
    assert_int_equal(c.run(g_ctx), ZYFA_SUCCESS);
    // The struct cut inside the field: its default as well.
    c.params.struct_size = static_cast<uint32_t>(offsetof(zyfa_attn_params, sinks) + 4);
    assert_int_equal(c.run(g_ctx), ZYFA_SUCCESS);
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
        cmocka_unit_test(test_minus_inf_is_no_sink_bitwise),
        cmocka_unit_test(test_reference_sink_is_a_zero_value_key),
        cmocka_unit_test(test_against_reference),
        cmocka_unit_test(test_sink_joins_the_row_sum_exactly),
        cmocka_unit_test(test_edge_rows),
        cmocka_unit_test(test_merge_with_sinks),
        cmocka_unit_test(test_validation),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
