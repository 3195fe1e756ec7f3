// The validated, normalised form of a request: what every backend receives. Produced only by
// src/core/validate_*.cpp, so a backend may trust every field (strides non-overlapping, sizes
// free of overflow, softmax and scale resolved, cu_seqlens checked).
#pragma once

#include <cstdint>
#include <vector>

#include "zyfa.h"

namespace zyfa {

struct TensorView {
    void* data = nullptr;
    zyfa_dtype dtype = 0;
    int64_t stride_batch = 0;  // 0 when varlen (packed along seq)
    int64_t stride_seq = 0;
    int64_t stride_head = 0;
};

struct AttnProblem {
    zyfa_mask mask = ZYFA_MASK_NONE;
    int64_t batch = 0;
    int64_t seqlen_q = 0;  // longest sequence when varlen
    int64_t seqlen_k = 0;
    int64_t heads_q = 0;
    int64_t heads_kv = 0;
    int64_t head_dim_qk = 0;
    int64_t head_dim_v = 0;
    float softmax_scale = 0.0f;              // resolved: never 0
    zyfa_softmax softmax = ZYFA_SOFTMAX_EXACT;  // resolved: EXACT or LEAN, never AUTO
    int32_t window_left = -1;
    int32_t window_right = -1;
    const int32_t* cu_seqlens_q = nullptr;  // both set (varlen) or both null
    const int32_t* cu_seqlens_k = nullptr;
    const float* q_descale = nullptr;  // [batch, heads_kv] or null (= 1)
    const float* k_descale = nullptr;
    const float* v_descale = nullptr;
    float* lse = nullptr;
    // Keys per online-softmax step as the caller asked: 0 (the backend's own choice), 64 or 128
    // (validated). Each backend reads it itself: the CPU models either (cpu/numerics_model.hpp),
    // HIP has 64-key kernels only (hip/attention_launch_plan.cpp), and the CUDA plan accepts its
    // chosen kernel's own step only (src/cuda/attention_launch_plan.cpp).
    int key_block = 0;
    // fp32 [heads_q] attention sinks or null (kernels/common/attention_sink.h); host memory on the
    // CPU backend, device memory on GPU backends.
    const float* sinks = nullptr;
    // Paged K/V (include/zyfa.h): k and v are page pools (stride_batch = the page stride) read
    // through block_table; null block_table: contiguous. cu_seqlens_k is then null and
    // cu_seqlens_q may be set (varlen queries). seqused_k, block_table are host memory on the CPU
    // backend (checked entry by entry there), device memory on GPU backends.
    const int32_t* block_table = nullptr;
    const int32_t* seqused_k = nullptr;  // paged only; null = seqlen_k keys per sequence
    int64_t block_table_stride = 0;
    int64_t num_pages = 0;
    int64_t page_size = 0;  // 0 when contiguous
    // The INT8 Q/K mode (q and k INT8, v FP8): per-token and per-64-key-block descales, each
    // null (= 1) or an fp32 array in the padded layouts of include/zyfa.h.
    const float* q_descale_per_token = nullptr;  // [batch, heads_q, seqlen_q]
    const float* k_descale_per_block = nullptr;  // [batch, heads_kv, int8_key_blocks()]
    // Split-KV (0.1.5): the caller's device workspace (null, 0 bytes: none) and split request
    // (0 = heuristic, 1 = never, n > 1 = at most n). Only GPU backends read them.
    void* workspace = nullptr;
    int64_t workspace_bytes = 0;
    int32_t num_splits = 0;
    // Per-key score bias (0.1.6) or null: fp32 logits added to every scaled score of key j in query
    // head h (common/key_bias.h), at key_bias_index(b, h, j). Host memory; only the CPU backend
    // takes it (GPU backends refuse it).
    const float* key_bias = nullptr;
    // ZYFA_ATTN_V_TRANSPOSED: v is FP8 in the transposed layout (kernels/common/v_transposed.h), its
    // stride_seq the distance between 16-key groups; contiguous keys only (validated).
    bool v_transposed = false;
    TensorView q, k, v, o;

    bool paged() const { return block_table != nullptr; }
    bool varlen() const { return cu_seqlens_q != nullptr; }
    // No query row: nothing to write. seqlen_k == 0 is not empty: every row then sees no key and
    // gets O = 0, lse = -inf (include/zyfa.h).
    bool empty() const { return batch == 0 || seqlen_q == 0; }
    bool fp8() const { return q.dtype == ZYFA_DTYPE_FP8_E4M3FN || q.dtype == ZYFA_DTYPE_FP8_E4M3FNUZ; }
    // q and k INT8, v FP8 (validated together).
    bool int8_qk() const { return q.dtype == ZYFA_DTYPE_INT8; }
    // P is rounded to FP8 (v's format) before P.V: FP8 inputs and the INT8 Q/K mode.
    bool fp8_p() const { return fp8() || int8_qk(); }
    int64_t int8_key_blocks() const { return seqlen_k / ZYFA_INT8_KEY_BLOCK + (seqlen_k % ZYFA_INT8_KEY_BLOCK != 0); }
    // The INT8 descales of query token s (of sequence b, head h) and of key j's block (kv head hk).
    float q_token_descale(int64_t b, int64_t h, int64_t s) const {
        return q_descale_per_token ? q_descale_per_token[(b * heads_q + h) * seqlen_q + s] : 1.0f;
    }
    float k_block_descale(int64_t b, int64_t hk, int64_t j) const {
        return k_descale_per_block ? k_descale_per_block[(b * heads_kv + hk) * int8_key_blocks() + j / ZYFA_INT8_KEY_BLOCK]
                                   : 1.0f;
    }
    // Per-sequence lengths and first packed row (row offsets are 0 when not varlen).
    int64_t len_q(int64_t b) const { return varlen() ? cu_seqlens_q[b + 1] - cu_seqlens_q[b] : seqlen_q; }
    // Host memory only (the CPU backend): cu_seqlens_k and seqused_k are read.
    int64_t len_k(int64_t b) const {
        if (paged()) return seqused_k ? seqused_k[b] : seqlen_k;
        return varlen() ? cu_seqlens_k[b + 1] - cu_seqlens_k[b] : seqlen_k;
    }
    int64_t first_q(int64_t b) const { return varlen() ? cu_seqlens_q[b] : 0; }
    int64_t first_k(int64_t b) const { return cu_seqlens_k ? cu_seqlens_k[b] : 0; }
    int64_t total_q() const { return varlen() ? cu_seqlens_q[batch] : batch * seqlen_q; }
    // Element offset of [b, s, h, 0]; s is relative to the sequence, b selects the packed range.
    static int64_t offset(const TensorView& t, int64_t first_row, int64_t b, int64_t s, int64_t h) {
        return b * t.stride_batch + (first_row + s) * t.stride_seq + h * t.stride_head;
    }
    // lse index of (b, h, s) per docs/api.md: [batch, heads_q, seqlen_q] or [heads_q, total_q].
    int64_t lse_index(int64_t b, int64_t h, int64_t s) const {
        return varlen() ? h * total_q() + first_q(b) + s : (b * heads_q + h) * seqlen_q + s;
    }
    int64_t kv_head(int64_t h) const { return h / (heads_q / heads_kv); }
    // key_bias index of (b, h, key j of the sequence) per include/zyfa.h: [batch, heads_q, seqlen_k],
    // or [heads_q, total_k] when cu_seqlens_k packs the keys (host memory: the CPU backend).
    int64_t key_bias_index(int64_t b, int64_t h, int64_t j) const {
        return cu_seqlens_k ? h * cu_seqlens_k[batch] + cu_seqlens_k[b] + j : (b * heads_q + h) * seqlen_k + j;
    }
};

struct QuantProblem {
    bool hadamard = false;
    bool smooth = false;  // ZYFA_QUANT_SMOOTH: subtract each channel's mean first (common/smooth_mean.h)
    // ZYFA_QUANT_V_TRANSPOSED: out in the transposed V layout (kernels/common/v_transposed.h), its
    // padding keys written as zero; fixed length only (validated).
    bool v_transposed = false;
    int64_t batch = 0;
    int64_t seqlen = 0;  // longest sequence when varlen
    int64_t heads = 0;
    int64_t head_dim = 0;
    const int32_t* cu_seqlens = nullptr;
    TensorView in, out;
    // Rows of a sequence per scale: 0 = one scale per (batch, head) (FP8); 1 or 64 (INT8).
    int scale_rows = 0;
    float* descale = nullptr;  // [batch, heads, scale_groups()]
    float* smooth_mean = nullptr;  // [batch, heads, head_dim] when smooth, else null
    // ZYFA_QUANT_KEY_BIAS (0.1.6), else null and 0: Q smoothing's per-key bias (common/key_bias.h)
    // from query_mean [batch, query_heads, head_dim] into key_bias, at key_bias_index.
    const float* query_mean = nullptr;
    float* key_bias = nullptr;
    int64_t query_heads = 0;
    float key_bias_scale = 0.0f;  // resolved: never 0 when key_bias is set

    bool varlen() const { return cu_seqlens != nullptr; }
    bool empty() const { return batch == 0 || seqlen == 0; }
    int64_t len(int64_t b) const { return varlen() ? cu_seqlens[b + 1] - cu_seqlens[b] : seqlen; }
    int64_t first(int64_t b) const { return varlen() ? cu_seqlens[b] : 0; }
    bool int8() const { return out.dtype == ZYFA_DTYPE_INT8; }
    // key_bias index of (b, query head h, row s of the sequence): [batch, query_heads, seqlen], or
    // [query_heads, total] when varlen (host memory: the CPU backend).
    int64_t key_bias_index(int64_t b, int64_t h, int64_t s) const {
        return varlen() ? h * cu_seqlens[batch] + cu_seqlens[b] + s : (b * query_heads + h) * seqlen + s;
    }
    // Descales per (batch, head): 1, or ceil(seqlen / scale_rows) with seqlen the longest sequence.
    int64_t scale_groups() const { return scale_rows == 0 ? 1 : seqlen / scale_rows + (seqlen % scale_rows != 0); }
};

// zyfa_attn_merge: num_parts partial results of the same query rows, merged by lse
// (common/attn_merge.h). Every part's view and lse array, the output and its lse share the row
// layout of AttnProblem's o and lse.
struct MergeProblem {
    int64_t batch = 0;
    int64_t seqlen_q = 0;  // longest sequence when varlen
    int64_t heads = 0;
    int64_t head_dim = 0;
    const int32_t* cu_seqlens_q = nullptr;
    std::vector<TensorView> part_o;         // num_parts entries
    std::vector<const float*> part_lse;     // num_parts entries
    TensorView o;
    float* lse = nullptr;

    int64_t num_parts() const { return static_cast<int64_t>(part_o.size()); }
    bool varlen() const { return cu_seqlens_q != nullptr; }
    bool empty() const { return batch == 0 || seqlen_q == 0; }
    int64_t len_q(int64_t b) const { return varlen() ? cu_seqlens_q[b + 1] - cu_seqlens_q[b] : seqlen_q; }
    int64_t first_q(int64_t b) const { return varlen() ? cu_seqlens_q[b] : 0; }
    int64_t total_q() const { return varlen() ? cu_seqlens_q[batch] : batch * seqlen_q; }
    int64_t lse_index(int64_t b, int64_t h, int64_t s) const {
        return varlen() ? h * total_q() + first_q(b) + s : (b * heads + h) * seqlen_q + s;
    }
};

}  // namespace zyfa
