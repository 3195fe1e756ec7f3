// The one argument struct of every GPU attention kernel, shared by the host launch code
// (src/gpu, src/cuda, src/hip) and the device code (kernels/nvidia, kernels/amd). Passed by value
// as the kernel's single parameter. Plain fixed-width fields only, so host and device agree on its
// layout; kernels never include the public header.
#ifndef ZYFA_KERNELS_COMMON_ATTENTION_KERNEL_ARGS_H
#define ZYFA_KERNELS_COMMON_ATTENTION_KERNEL_ARGS_H

#include <stdint.h>

#include "attention_mask.h"
#include "device_compat.h"

namespace zyfa {

// Bump when a field changes: the host checks it against what the embedded kernels were built with.
constexpr uint32_t kAttnKernelArgsVersion = 2;  // 2: sinks in what were reserved0 and reserved1

enum AttnKernelDtype : int32_t {  // = zyfa_dtype values
    kKernelFp32 = 1,
    kKernelFp16 = 2,
    kKernelBf16 = 3,
    kKernelE4m3fn = 4,
    kKernelE4m3fnuz = 5,
    kKernelInt8 = 6,  // q and k of the INT8 Q/K mode (v FP8)
};

struct AttnKernelArgs {
    const void* q;
    const void* k;
    const void* v;
    void* o;
    float* lse;                  // null: not written
    const int32_t* cu_seqlens_q;  // null: fixed length
    const int32_t* cu_seqlens_k;
    const float* q_descale;  // [batch, heads_kv] or null (= 1); INT8 q/k (in_dtype kKernelInt8): the
                             // per-token [batch, heads_q, seqlen_q] and, in k_descale, the per-64-key
                             // [batch, heads_kv, ceil(seqlen_k / 64)] descales (zyfa_attn_params')
    const float* k_descale;
    const float* v_descale;
    int64_t q_stride_batch, q_stride_seq, q_stride_head;  // elements; batch strides 0 when varlen
    int64_t k_stride_batch, k_stride_seq, k_stride_head;
    int64_t v_stride_batch, v_stride_seq, v_stride_head;
    int64_t o_stride_batch, o_stride_seq, o_stride_head;
    int32_t batch, seqlen_q, seqlen_k;  // seqlens: the longest sequence when varlen
    int32_t heads_q, heads_kv;
    int32_t head_dim_qk, head_dim_v;
    int32_t mask;  // zyfa_mask values
    int32_t window_left, window_right;
    int32_t in_dtype, out_dtype;  // AttnKernelDtype
    int32_t softmax;              // zyfa_softmax values, resolved: 1 EXACT, 2 LEAN
    int32_t max_block_exponent;   // LEAN block-scale cap (numerics::kBlockScaleMaxExponent)
    float softmax_scale;          // resolved, never 0
    float lean_centre;            // the Lean P constant c for this target's conversion
    // fp32 [heads_q] attention sinks or null (none): read once per row, in the epilogue
    // (common/attention_sink.h). The generated gfx950 kernels require null (the plan declines).
    const float* sinks;
};

// One sequence of the batch: where its rows start in the (possibly packed) tensors and how long it
// is. Fixed length: rows start at 0 (stride_batch selects the sequence) and the lengths are the
// problem's; varlen: from cu_seqlens (device memory on GPU backends).
struct SequenceSpan {
    int64_t first_q, first_k;
    int seqlen_q, seqlen_k;
};

// Paged K/V (the CUDA paged kernels): packed queries with unpacked keys, cu_seqlens_k null; the
// kernel then takes each sequence's key count from its block table's seqused_k itself.
ZYFA_HD SequenceSpan sequence_span(const AttnKernelArgs& a, int batch) {
    if (!a.cu_seqlens_q) return SequenceSpan{0, 0, a.seqlen_q, a.seqlen_k};
    if (!a.cu_seqlens_k) {
        return SequenceSpan{a.cu_seqlens_q[batch], 0, a.cu_seqlens_q[batch + 1] - a.cu_seqlens_q[batch], a.seqlen_k};
    }
    return SequenceSpan{a.cu_seqlens_q[batch], a.cu_seqlens_k[batch],
                        a.cu_seqlens_q[batch + 1] - a.cu_seqlens_q[batch],
                        a.cu_seqlens_k[batch + 1] - a.cu_seqlens_k[batch]};
}

// The K/V head a query head reads under GQA/MQA (heads_q is a multiple of heads_kv).
ZYFA_HD int kv_head_of(const AttnKernelArgs& a, int head) { return head / (a.heads_q / a.heads_kv); }

// The dequantisation factors of one (batch, kv head), 1 where a descale pointer is null.
struct HeadDescales {
    float q, k, v;
};

ZYFA_HD HeadDescales head_descales(const AttnKernelArgs& a, int batch, int head_kv) {
    const int index = batch * a.heads_kv + head_kv;
    return HeadDescales{a.q_descale ? a.q_descale[index] : 1.0f, a.k_descale ? a.k_descale[index] : 1.0f,
                        a.v_descale ? a.v_descale[index] : 1.0f};
}

// The keys [begin, end) query `row` of a sequence sees (attention_mask.h; `mask` is a.mask, which
// the kernels convert once); empty (0, 0) for a row past the sequence, as in a tile's partial tail.
struct RowKeys {
    int begin, end;
};

ZYFA_HD RowKeys row_visible_keys(const AttnKernelArgs& a, const SequenceSpan& span, numerics::MaskKind mask,
                                 int row) {
    RowKeys keys{0, 0};
    if (row < span.seqlen_q) {
        const numerics::KeyRange range =
            numerics::visible_keys(row, span.seqlen_q, span.seqlen_k, mask, a.window_left, a.window_right);
        keys.begin = static_cast<int>(range.begin);
        keys.end = static_cast<int>(range.end);
    }
    return keys;
}

}  // namespace zyfa

#endif
