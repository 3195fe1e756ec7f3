// One thread's share of one merged row on a GPU: the body of the CUDA and HIP zyfa_attn_merge
// kernels (kernels/nvidia/attention_merge.cu, kernels/amd/attention_merge.hip), which differ only
// in how they name the block and thread. The maths is attn_merge.h's, in part order, as the CPU
// backend (src/cpu/attention_merge.cpp) applies it.
#ifndef ZYFA_KERNELS_COMMON_ATTN_MERGE_ROW_H
#define ZYFA_KERNELS_COMMON_ATTN_MERGE_ROW_H

#include "attention_kernel_args.h"
#include "attn_merge.h"
#include "attn_merge_kernel_args.h"
#include "half_types.h"

namespace zyfa {
namespace numerics {

ZYFA_HD float merge_load(const void* base, int32_t dtype, int64_t index) {
    switch (dtype) {
        case kKernelFp16: return fp16_to_float(static_cast<const uint16_t*>(base)[index]);
        case kKernelBf16: return bf16_to_float(static_cast<const uint16_t*>(base)[index]);
        default: return static_cast<const float*>(base)[index];
    }
}

ZYFA_HD void merge_store(void* base, int32_t dtype, int64_t index, float value) {
    switch (dtype) {
        case kKernelFp16: static_cast<uint16_t*>(base)[index] = float_to_fp16(value); break;
        case kKernelBf16: static_cast<uint16_t*>(base)[index] = float_to_bf16(value); break;
        default: static_cast<float*>(base)[index] = value; break;
    }
}

// Row s of sequence b, head h: thread `thread` of kMergeThreads writes elements thread,
// thread + kMergeThreads, ...; thread 0 also writes the lse. Rows past a packed sequence's end
// return at once.
ZYFA_HD void merge_kernel_row(const MergeKernelArgs& a, int64_t s, int64_t h, int64_t b, int32_t thread) {
    const bool varlen = a.cu_seqlens_q != nullptr;
    const int64_t first = varlen ? a.cu_seqlens_q[b] : 0;
    const int64_t len = varlen ? a.cu_seqlens_q[b + 1] - first : a.seqlen_q;
    if (s >= len) return;
    const int64_t total = varlen ? a.cu_seqlens_q[a.batch] : static_cast<int64_t>(a.batch) * a.seqlen_q;
    const int64_t lse_at = varlen ? h * total + first + s : (b * a.heads + h) * a.seqlen_q + s;

    float max_lse = -__builtin_huge_valf();
    for (int32_t i = 0; i < a.num_parts; ++i) max_lse = merge_max_lse(max_lse, a.parts[i].lse[lse_at]);

    float acc[kMergeElementsPerThread];
    for (int e = 0; e < kMergeElementsPerThread; ++e) acc[e] = 0.0f;
    float weight_sum = 0.0f;
    for (int32_t i = 0; i < a.num_parts; ++i) {
        const MergePartArgs& part = a.parts[i];
        const float part_lse = part.lse[lse_at];
        if (!merge_part_contributes(part_lse, max_lse)) continue;
        const float weight = merge_part_weight(part_lse, max_lse);
        weight_sum += weight;
        // Varlen rows are packed along seq: the batch stride is ignored there, per the ABI.
        const int64_t row = (varlen ? 0 : b * part.stride_batch) + (first + s) * part.stride_seq + h * part.stride_head;
        for (int e = 0; e < kMergeElementsPerThread; ++e) {
            const int32_t d = thread + e * kMergeThreads;
            if (d < a.head_dim) acc[e] = merge_accumulate(acc[e], weight, merge_load(part.o, part.dtype, row + d));
        }
    }

    const int64_t out_row = (varlen ? 0 : b * a.o_stride_batch) + (first + s) * a.o_stride_seq + h * a.o_stride_head;
    const float scale = merge_output_scale(weight_sum, max_lse);
    for (int e = 0; e < kMergeElementsPerThread; ++e) {
        const int32_t d = thread + e * kMergeThreads;
        if (d < a.head_dim) merge_store(a.o, a.o_dtype, out_row + d, merged_output(acc[e], scale, max_lse));
    }
    if (a.lse != nullptr && thread == 0) a.lse[lse_at] = merged_lse(max_lse, weight_sum);
}

}  // namespace numerics
}  // namespace zyfa

#endif
