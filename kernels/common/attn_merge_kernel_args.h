// The argument struct and launch geometry of the GPU zyfa_attn_merge kernels
// (kernels/nvidia/attention_merge.cu, kernels/amd/attention_merge.hip), shared by the kernels and
// the host launch code (src/gpu/gpu_backend.cpp). Passed by value as the kernel's only parameter:
// the parts' descriptors travel in the parameter itself, so a call needs no device memory of its
// own (no allocation, no copy, graph-capture safe); that caps the parts per call at
// kMergeMaxParts (3,144 bytes of parameter, under the 4 KiB every CUDA and HIP target accepts).
//
// One block of kMergeThreads threads per (query row, head, sequence): grid (seqlen_q, heads,
// batch); thread t owns the elements t, t + kMergeThreads, ... of the row, at most
// kMergeElementsPerThread (head_dim_v <= 512).
#ifndef ZYFA_KERNELS_COMMON_ATTN_MERGE_KERNEL_ARGS_H
#define ZYFA_KERNELS_COMMON_ATTN_MERGE_KERNEL_ARGS_H

#include <stdint.h>

namespace zyfa {

constexpr int32_t kMergeMaxParts = 64;
constexpr int32_t kMergeThreads = 128;
constexpr int32_t kMergeElementsPerThread = 4;  // 4 * 128 = 512, the largest head_dim_v

struct MergePartArgs {
    const void* o;    // the part's O, dtype o_dtype
    const float* lse; // [batch, heads, seqlen_q] or [heads, total_q]
    int64_t stride_batch, stride_seq, stride_head;  // elements; batch 0 when varlen
    int32_t dtype;    // AttnKernelDtype: fp32, fp16 or bf16
    int32_t reserved;
};

struct MergeKernelArgs {
    void* o;
    float* lse;                   // null: not written
    const int32_t* cu_seqlens_q;  // null: fixed length
    int64_t o_stride_batch, o_stride_seq, o_stride_head;
    int32_t batch, seqlen_q, heads, head_dim;  // seqlen_q: the longest sequence when varlen
    int32_t num_parts;                         // 1..kMergeMaxParts
    int32_t o_dtype;
    MergePartArgs parts[kMergeMaxParts];       // the first num_parts are used
};

static_assert(sizeof(MergePartArgs) == 48, "MergePartArgs layout");
static_assert(sizeof(MergeKernelArgs) <= 4096, "the merge kernel's parameter must fit 4 KiB");
static_assert(kMergeThreads * kMergeElementsPerThread >= 512, "a block covers the largest head dim");

}  // namespace zyfa

#endif
