// A split of the keys for zyfa_attn_merge's tests: FP8 inputs, the unsplit zyfa_attn_fwd request
// over all keys, one request per key range [cuts[i], cuts[i+1]) on slices of the same K/V, and
// the zyfa_attn_merge request over their outputs. Buffers are the caller's (host for the CPU
// backend, device for a GPU one); this header only builds the requests and the host inputs, and
// derives the bounds (tests/cpu/attention_merge_test.cpp, tests/gpu/attention_merge_gpu_test.cpp).
//
// Masks: with ZYFA_MASK_NONE every part is NONE. With ZYFA_MASK_CAUSAL_BOTTOM_RIGHT (a chunk of
// seqlen_q queries at the end of seqlen_k keys, as in chunked prefill over a prefix cache) every
// part but the last must end at or before key seqlen_k - seqlen_q + 1, so all its keys are visible
// to every query (mask NONE), and the last part keeps the bottom-right mask on its own slice.
//
// shared_row_max: the first key of every part is one "peak" key, the same vector in each, whose
// score is every query's strict maximum (q > 0 elementwise, peak = 0.5 everywhere, all other keys
// in [-0.4375, 0.4375]). Then the unsplit call and every part hold the same running maximum from
// their first key block on, so with cuts at multiples of the key block both modes round every P
// exactly alike, and the merged result differs from the unsplit one only by fp32 rounding.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "common/fp8_e4m3.h"
#include "common/half_types.h"
#include "zyfa.h"

namespace zyfa_test {

struct MergeSplitShape {
    int64_t batch = 2, seqlen_q = 48, seqlen_k = 320, heads_q = 4, heads_kv = 2, head_dim = 64;
    zyfa_mask mask = ZYFA_MASK_NONE;
    zyfa_softmax softmax = ZYFA_SOFTMAX_LEAN;
    std::vector<int64_t> cuts{0, 128, 192, 320};  // part i is keys [cuts[i], cuts[i+1])
    bool shared_row_max = false;
    int32_t key_block = 64;
    uint64_t seed = 1;

    int64_t parts() const { return static_cast<int64_t>(cuts.size()) - 1; }
    int64_t q_elems() const { return batch * seqlen_q * heads_q * head_dim; }
    int64_t kv_elems() const { return batch * seqlen_k * heads_kv * head_dim; }
    int64_t o_elems() const { return batch * seqlen_q * heads_q * head_dim; }
    int64_t lse_elems() const { return batch * heads_q * seqlen_q; }
};

// e4m3fn codes of q, k, v, contiguous [batch, seq, head, dim].
struct MergeSplitInputs {
    std::vector<uint8_t> q, k, v;

    explicit MergeSplitInputs(const MergeSplitShape& s) {
        using zyfa::numerics::Fp8Format;
        using zyfa::numerics::fp8_encode;
        std::mt19937_64 rng(s.seed);
        std::normal_distribution<float> normal(0.0f, 1.0f);
        std::uniform_real_distribution<float> positive(0.25f, 1.0f), small(-0.4375f, 0.4375f);
        q.resize(static_cast<size_t>(s.q_elems()));
        k.resize(static_cast<size_t>(s.kv_elems()));
        v.resize(static_cast<size_t>(s.kv_elems()));
        for (auto& x : q) x = fp8_encode(s.shared_row_max ? positive(rng) : normal(rng), Fp8Format::E4M3FN);
        // |small| <= 0.4375 is a code boundary of e4m3 (0.4375 = 7 * 2^-4), so rounding keeps it.
        for (auto& x : k) x = fp8_encode(s.shared_row_max ? small(rng) : normal(rng), Fp8Format::E4M3FN);
        for (auto& x : v) x = fp8_encode(normal(rng), Fp8Format::E4M3FN);
        if (s.shared_row_max) {
            const uint8_t peak = fp8_encode(0.5f, Fp8Format::E4M3FN);
            for (int64_t b = 0; b < s.batch; ++b)
                for (int64_t p = 0; p < s.parts(); ++p)
                    for (int64_t h = 0; h < s.heads_kv; ++h)
                        for (int64_t d = 0; d < s.head_dim; ++d)
                            k[static_cast<size_t>(((b * s.seqlen_k + s.cuts[p]) * s.heads_kv + h) * s.head_dim + d)] = peak;
        }
    }

    // The largest |v| and, per (batch, kv head, dim), max - min of v: the LEAN bound's scale.
    double max_abs_v() const {
        double m = 0.0;
        for (uint8_t c : v) m = std::fmax(m, std::fabs(zyfa::numerics::fp8_decode(c, zyfa::numerics::Fp8Format::E4M3FN)));
        return m;
    }
};

struct AttnRequest {
    zyfa_attn_params params;
    zyfa_tensor q, k, v, o;
};

inline zyfa_tensor contiguous_view(void* data, zyfa_dtype dtype, int64_t seq, int64_t heads, int64_t dim) {
    zyfa_tensor t;
    std::memset(&t, 0, sizeof t);
    t.data = data;
    t.dtype = dtype;
    t.stride_head = dim;
    t.stride_seq = heads * dim;
    t.stride_batch = seq * heads * dim;
    return t;
}

// The attention call over keys [begin, end) (all keys: 0, seqlen_k) writing fp32 o and lse. q, k,
// v are the bases of the full e4m3fn tensors; a part reads its slice through the same strides.
inline AttnRequest split_request(const MergeSplitShape& s, void* q, void* k, void* v, float* o, float* lse,
                                 int64_t begin, int64_t end) {
    AttnRequest r;
    zyfa_attn_params_init(&r.params, sizeof r.params);
    const bool whole = begin == 0 && end == s.seqlen_k;
    r.params.mask = (whole || end == s.seqlen_k) ? s.mask : ZYFA_MASK_NONE;
    r.params.batch = s.batch;
    r.params.seqlen_q = s.seqlen_q;
    r.params.seqlen_k = end - begin;
    r.params.heads_q = s.heads_q;
    r.params.heads_kv = s.heads_kv;
    r.params.head_dim_qk = s.head_dim;
    r.params.head_dim_v = s.head_dim;
    r.params.softmax = s.softmax;
    r.params.key_block = s.key_block;
    r.params.lse = lse;
    r.q = contiguous_view(q, ZYFA_DTYPE_FP8_E4M3FN, s.seqlen_q, s.heads_q, s.head_dim);
    const int64_t offset = begin * s.heads_kv * s.head_dim;
    r.k = contiguous_view(static_cast<uint8_t*>(k) + offset, ZYFA_DTYPE_FP8_E4M3FN, s.seqlen_k, s.heads_kv, s.head_dim);
    r.v = contiguous_view(static_cast<uint8_t*>(v) + offset, ZYFA_DTYPE_FP8_E4M3FN, s.seqlen_k, s.heads_kv, s.head_dim);
    r.o = contiguous_view(o, ZYFA_DTYPE_FP32, s.seqlen_q, s.heads_q, s.head_dim);
    return r;
}

// Whether the cuts are a valid split for the mask (see the top of this file).
inline bool split_is_valid(const MergeSplitShape& s) {
    if (s.cuts.size() < 2 || s.cuts.front() != 0 || s.cuts.back() != s.seqlen_k) return false;
    for (size_t i = 0; i + 1 < s.cuts.size(); ++i) {
        if (s.cuts[i] >= s.cuts[i + 1]) return false;
        const bool last = i + 2 == s.cuts.size();
        if (!last && s.mask == ZYFA_MASK_CAUSAL_BOTTOM_RIGHT && s.cuts[i + 1] > s.seqlen_k - s.seqlen_q + 1) return false;
    }
    return s.mask == ZYFA_MASK_NONE || s.mask == ZYFA_MASK_CAUSAL_BOTTOM_RIGHT;
}

// The merge of parts whose fp32 O and lse lie at part_o[i] / part_lse[i], into o (fp32) and lse.
struct MergeRequest {
    zyfa_merge_params params;
    std::vector<zyfa_tensor> part_o;
    std::vector<const float*> part_lse;
    zyfa_tensor o;
};

inline MergeRequest merge_request(const MergeSplitShape& s, const std::vector<float*>& part_o,
                                  const std::vector<float*>& part_lse, float* o, float* lse) {
    MergeRequest m;
    zyfa_merge_params_init(&m.params, sizeof m.params);
    m.params.num_parts = static_cast<int32_t>(part_o.size());
    m.params.batch = s.batch;
    m.params.seqlen_q = s.seqlen_q;
    m.params.heads = s.heads_q;
    m.params.head_dim_v = s.head_dim;
    m.params.lse = lse;
    for (size_t i = 0; i < part_o.size(); ++i) {
        m.part_o.push_back(contiguous_view(part_o[i], ZYFA_DTYPE_FP32, s.seqlen_q, s.heads_q, s.head_dim));
        m.part_lse.push_back(part_lse[i]);
    }
    m.o = contiguous_view(o, ZYFA_DTYPE_FP32, s.seqlen_q, s.heads_q, s.head_dim);
    return m;
}

// --- Bounds, derived (u = 2^-24, the fp32 unit roundoff) --------------------------------------

// shared_row_max, cuts at multiples of the key block: the unsplit call and the parts round every
// P alike, so merged and unsplit O differ only by fp32 rounding. The merged path rounds each O_p
// (acc_p * (1 / l_p): 2u), each lse_p = ln2 * (m + log2 l_p) (log2f within 1 ulp, the sum and
// the product 1/2 ulp each: (|lse| + 2) * 2u absolute), the weights exp((lse_p - M)) (the
// difference, the product by log2 e and exp2f: (|lse_p - M| + 2) * 2u relative, plus the two lse
// errors) and their normalised sum (n_parts u); the unsplit call's row sum and P.V accumulate the
// same terms in another association (n_blocks u each, relative to sums of positive P over |v|).
// All relative to max |v| (O and the P.V sums are convex combinations of v). Generously: 
//   |O_merged - O_unsplit| <= (16 (L + 2) + 4 n_parts + 4 n_blocks) u max|v|,   L = max |lse|,
//   |lse_merged - lse_unsplit| <= (8 (L + 2) + 4 n_parts + 4 n_blocks) u.
inline double shared_max_o_bound(double max_abs_lse, int64_t parts, int64_t blocks, double max_abs_v) {
    return (16.0 * (max_abs_lse + 2.0) + 4.0 * parts + 4.0 * blocks) * std::ldexp(1.0, -24) * max_abs_v;
}
inline double shared_max_lse_bound(double max_abs_lse, int64_t parts, int64_t blocks) {
    return (8.0 * (max_abs_lse + 2.0) + 4.0 * parts + 4.0 * blocks) * std::ldexp(1.0, -24);
}

// Any split: each result against the fp64 attention of the same decoded inputs.
//  EXACT (FP8): P * 2^8 is rounded to e4m3 (half an ulp: 2^-4 relative for normal codes, at most
//    2^-18 absolute for the subnormal ones) while the denominator sums the unrounded P, so per
//    element |O - O_ref| <= (2^-4 + n_keys 2^-18) max|v|; the lse sums unrounded fp32 P: 1e-4.
//  LEAN: every P is u_j = 0.9195..1.0635 times the exact one (docs/api.md, lse) and O is divided by
//    their sum, so O's weights a_j = w_j u_j / sum(w u); sum |a_j - w_j| is largest for a two-point
//    split of the mass between the ends: <= (1.0635 - 0.9195) / (2 * 0.9195) = 0.0783, and since
//    both weight sets sum to 1, |O - O_ref| <= 0.0783 / 2 * (max v - min v) <= 0.0783 max|v|; the
//    lse lies within [ln 0.9195, ln 1.0635] = [-0.0840, +0.0616] of the exact one. (Inputs here
//    keep every probability far above LEAN's subnormal codes: scores have standard deviation 1.)
//  Merged and unsplit then differ by at most the sum of their two bounds.
inline double reference_o_bound(zyfa_softmax softmax, int64_t n_keys, double max_abs_v) {
    if (softmax == ZYFA_SOFTMAX_EXACT) return (1.0 / 16 + n_keys * std::ldexp(1.0, -18)) * max_abs_v + 1e-5;
    return 0.0783 * max_abs_v + 1e-5;
}
constexpr double kLeanLseLow = -0.0840, kLeanLseHigh = 0.0616;

}  // namespace zyfa_test
