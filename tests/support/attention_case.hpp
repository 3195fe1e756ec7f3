// A test attention problem: random inputs exactly representable in the input dtype, the public
// request (params + tensor views) that describes them, and helpers to compare outputs with the
// fp64 reference. Header-only, shared by the test tiers that link zyfa_internal.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "common/fp8_e4m3.h"
#include "common/half_types.h"
#include "cpu/tensor_access.hpp"
#include "zyfa.h"

namespace zyfa_test {

struct CaseShape {
    // q and k's dtype, and v's too except for INT8 (the INT8 Q/K mode), whose v is v_dtype_int8.
    zyfa_dtype dtype = ZYFA_DTYPE_FP8_E4M3FN;
    zyfa_dtype v_dtype_int8 = ZYFA_DTYPE_FP8_E4M3FN;
    zyfa_dtype out_dtype = ZYFA_DTYPE_FP32;
    zyfa_mask mask = ZYFA_MASK_CAUSAL;
    zyfa_softmax softmax = ZYFA_SOFTMAX_AUTO;
    int32_t window_left = -1, window_right = -1;
    int64_t batch = 1, seqlen_q = 64, seqlen_k = 64, heads_q = 2, heads_kv = 2;
    int64_t head_dim_qk = 64, head_dim_v = 64;
    std::vector<int32_t> lengths_q, lengths_k;  // non-empty: varlen with these lengths
    bool descales = false;  // FP8: per head; INT8 q/k: per token and per 64-key block, v per head
    bool with_lse = true;
    int32_t key_block = 0;  // params.key_block: 0 = the backend's own
    float input_scale = 1.0f;  // standard deviation of the generated activations
    uint64_t seed = 1;
    std::vector<float> sinks;  // non-empty: params.sinks, [heads_q]
    // non-empty: params.key_bias, [batch, heads_q, seqlen_k] or [heads_q, total_k] (varlen)
    std::vector<float> key_bias;
};

// Owns the buffers; params/tensors point into them.
struct AttentionCase {
    // What o's bytes and lse hold before a call: an element the call never writes does not pass as
    // a value.
    static constexpr uint8_t kOutputSentinel = 0xA5;
    static constexpr float kLseSentinel = 12345.0f;

    CaseShape shape;
    std::vector<uint8_t> q, k, v, o;
    std::vector<float> q_descale, k_descale, v_descale, lse, sinks, key_bias;
    std::vector<float> q_descale_per_token, k_descale_per_block;  // the INT8 Q/K mode
    std::vector<int32_t> cu_q, cu_k;
    zyfa_attn_params params;
    zyfa_tensor tq, tk, tv, to;

    explicit AttentionCase(const CaseShape& s) : shape(s) {
        std::mt19937_64 rng(s.seed);
        std::normal_distribution<float> normal(0.0f, s.input_scale);
        const bool varlen = !s.lengths_q.empty();
        int64_t rows_q = s.batch * s.seqlen_q, rows_k = s.batch * s.seqlen_k;
        if (varlen) {
            cu_q.push_back(0);
            cu_k.push_back(0);
            for (size_t b = 0; b < s.lengths_q.size(); ++b) {
                cu_q.push_back(cu_q.back() + s.lengths_q[b]);
                cu_k.push_back(cu_k.back() + s.lengths_k[b]);
            }
            rows_q = cu_q.back();
            rows_k = cu_k.back();
        }
        const bool int8 = s.dtype == ZYFA_DTYPE_INT8;
        const zyfa_dtype v_dtype = int8 ? s.v_dtype_int8 : s.dtype;
        const size_t in_size = zyfa::cpu::dtype_size(s.dtype), out_size = zyfa::cpu::dtype_size(s.out_dtype);
        fill(q, s.dtype, rows_q * s.heads_q * s.head_dim_qk, in_size, normal, rng);
        fill(k, s.dtype, rows_k * s.heads_kv * s.head_dim_qk, in_size, normal, rng);
        fill(v, v_dtype, rows_k * s.heads_kv * s.head_dim_v, zyfa::cpu::dtype_size(v_dtype), normal, rng);
        o.assign(static_cast<size_t>(rows_q * s.heads_q * s.head_dim_v) * out_size, kOutputSentinel);
        lse.assign(static_cast<size_t>(rows_q * s.heads_q), kLseSentinel);
        if (s.descales && int8) {
            // INT8 codes are ~kInt8Spread times the activations: descales of about 1 / kInt8Spread.
            std::uniform_real_distribution<float> uniform(0.25f / kInt8Spread, 2.0f / kInt8Spread);
            std::uniform_real_distribution<float> uniform_v(0.25f, 2.0f);
            const int64_t key_blocks = (s.seqlen_k + ZYFA_INT8_KEY_BLOCK - 1) / ZYFA_INT8_KEY_BLOCK;
            for (int64_t i = 0; i < s.batch * s.heads_q * s.seqlen_q; ++i) q_descale_per_token.push_back(uniform(rng));
            for (int64_t i = 0; i < s.batch * s.heads_kv * key_blocks; ++i) k_descale_per_block.push_back(uniform(rng));
            for (int64_t i = 0; i < s.batch * s.heads_kv; ++i) v_descale.push_back(uniform_v(rng));
        } else if (s.descales) {
            std::uniform_real_distribution<float> uniform(0.25f, 2.0f);
            for (int64_t i = 0; i < s.batch * s.heads_kv; ++i) {
                q_descale.push_back(uniform(rng));
                k_descale.push_back(uniform(rng));
                v_descale.push_back(uniform(rng));
            }
        }
        zyfa_attn_params_init(&params, sizeof params);
        params.mask = s.mask;
        params.batch = s.batch;
        params.seqlen_q = s.seqlen_q;
        params.seqlen_k = s.seqlen_k;
        params.heads_q = s.heads_q;
        params.heads_kv = s.heads_kv;
        params.head_dim_qk = s.head_dim_qk;
        params.head_dim_v = s.head_dim_v;
        params.softmax = s.softmax;
        params.window_left = s.window_left;
        params.window_right = s.window_right;
        params.cu_seqlens_q = varlen ? cu_q.data() : nullptr;
        params.cu_seqlens_k = varlen ? cu_k.data() : nullptr;
        params.q_descale = s.descales && !int8 ? q_descale.data() : nullptr;
        params.k_descale = s.descales && !int8 ? k_descale.data() : nullptr;
        params.v_descale = s.descales ? v_descale.data() : nullptr;
        params.q_descale_per_token = s.descales && int8 ? q_descale_per_token.data() : nullptr;
        params.k_descale_per_block = s.descales && int8 ? k_descale_per_block.data() : nullptr;
        params.lse = s.with_lse ? lse.data() : nullptr;
        params.key_block = s.key_block;
        sinks = s.sinks;
        params.sinks = sinks.empty() ? nullptr : sinks.data();
        key_bias = s.key_bias;
        params.key_bias = key_bias.empty() ? nullptr : key_bias.data();
        tq = view(q.data(), s.dtype, s.seqlen_q, s.heads_q, s.head_dim_qk, varlen);
        tk = view(k.data(), s.dtype, s.seqlen_k, s.heads_kv, s.head_dim_qk, varlen);
        tv = view(v.data(), v_dtype, s.seqlen_k, s.heads_kv, s.head_dim_v, varlen);
        to = view(o.data(), s.out_dtype, s.seqlen_q, s.heads_q, s.head_dim_v, varlen);
    }
    AttentionCase(const AttentionCase&) = delete;
    AttentionCase& operator=(const AttentionCase&) = delete;

    zyfa_status run(zyfa_context* ctx) { return zyfa_attn_fwd(ctx, &params, &tq, &tk, &tv, &to, nullptr); }

    float out(int64_t index) const { return zyfa::cpu::load_as_float(o.data(), shape.out_dtype, index); }

private:
    static zyfa_tensor view(void* data, zyfa_dtype dtype, int64_t seqlen, int64_t heads, int64_t dim, bool varlen) {
        zyfa_tensor t;
        std::memset(&t, 0, sizeof t);
        t.data = data;
        t.dtype = dtype;
        t.stride_head = dim;
        t.stride_seq = heads * dim;
        t.stride_batch = varlen ? 0 : seqlen * heads * dim;
        return t;
    }

    static constexpr float kInt8Spread = 32.0f;  // INT8 codes per unit of the generated activations

    template <class Dist>
    void fill(std::vector<uint8_t>& buf, zyfa_dtype dtype, int64_t count, size_t elem, Dist& normal,
              std::mt19937_64& rng) {
        buf.assign(static_cast<size_t>(count) * elem, 0);
        for (int64_t i = 0; i < count; ++i) {
            if (dtype == ZYFA_DTYPE_INT8) {  // codes of the whole range, -128 included
                const float code = std::fmax(-128.0f, std::fmin(127.0f, std::nearbyint(normal(rng) * kInt8Spread)));
                buf[static_cast<size_t>(i)] = static_cast<uint8_t>(static_cast<int8_t>(code));
            } else {
                zyfa::cpu::store_from_float(buf.data(), dtype, i, normal(rng));  // rounds to the dtype
            }
        }
    }
};

// Relative RMS error and max abs error of the output against the reference's o array.
struct ErrorStats {
    double rel_rms = 0.0;
    double max_abs = 0.0;
    double lse_max_abs = 0.0;
    int64_t lse_mismatched_infinities = 0;
};

template <class Reference>
ErrorStats compare(const AttentionCase& c, const Reference& ref) {
    ErrorStats e;
    double err2 = 0.0, ref2 = 0.0;
    for (size_t i = 0; i < ref.o.size(); ++i) {
        const double diff = static_cast<double>(c.out(static_cast<int64_t>(i))) - ref.o[i];
        err2 += diff * diff;
        ref2 += ref.o[i] * ref.o[i];
        e.max_abs = std::fmax(e.max_abs, std::fabs(diff));
        if (std::isnan(diff)) e.max_abs = INFINITY;
    }
    e.rel_rms = ref2 > 0.0 ? std::sqrt(err2 / ref2) : std::sqrt(err2);
    if (c.shape.with_lse) {
        for (size_t i = 0; i < ref.lse.size(); ++i) {
            const double got = c.lse[i], want = ref.lse[i];
            if (std::isinf(want) || std::isinf(got)) {
                if (got != want) ++e.lse_mismatched_infinities;
                continue;
            }
            e.lse_max_abs = std::fmax(e.lse_max_abs, std::fabs(got - want));
        }
    }
    return e;
}

}  // namespace zyfa_test
