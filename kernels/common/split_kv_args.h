// Split-KV (short query chunks and decode steps against long keys): the second kernel parameter
// of the NVIDIA split kernels (kernels/nvidia/attention_fwd_split.cuh) and the layout of the
// caller's workspace (zyfa_attn_params.workspace) that they write and the merge launch reads.
// Shared by the host launch code (src/gpu/gpu_backend.cpp, src/cuda/split_kv_plan.cpp) and the
// device code; plain fixed-width fields only.
//
// Workspace: num_splits parts of fp32 O, then num_splits parts of fp32 lse, each part starting on
// a 256-byte boundary. Part i holds split i's partial result in the layouts of zyfa_attn_fwd's
// o (an FP32 [batch, seqlen_q, heads_q, head_dim_v] tensor, or [total_q, heads_q, head_dim_v]
// packed) and lse ([batch, heads_q, seqlen_q], or [heads_q, total_q] packed), so that the merge is
// zyfa_attn_merge's kernel (common/attn_merge_row.h) over num_splits parts, unchanged.
#ifndef ZYFA_KERNELS_COMMON_SPLIT_KV_ARGS_H
#define ZYFA_KERNELS_COMMON_SPLIT_KV_ARGS_H

#include <stdint.h>

#include "attn_merge_kernel_args.h"
#include "device_compat.h"

namespace zyfa {

constexpr int32_t kSplitRows = 16;        // packed query rows per CTA: one m16 MMA tile
constexpr int32_t kSplitWarps = 4;        // each takes 16 of a stage's 64 keys
constexpr int32_t kSplitThreads = kSplitWarps * 32;
constexpr int32_t kSplitStages = 3;       // cp.async ring of 64-key K/V blocks
constexpr int32_t kSplitKeyBlock = 64;    // keys per stage; split boundaries fall on these blocks
constexpr int32_t kSplitMaxParts = kMergeMaxParts;  // the merge launch takes at most this many
constexpr int64_t kSplitPartAlign = 256;  // bytes

struct SplitKvArgs {
    float* part_o;             // part i at part_o + i * part_o_stride
    float* part_lse;           // part i at part_lse + i * part_lse_stride
    int64_t part_o_stride;     // fp32 elements between parts
    int64_t part_lse_stride;
    int32_t num_splits;        // >= 2
    int32_t row_tiles;         // ceil(heads_q / heads_kv * seqlen_q / kSplitRows): CTAs per kv head
};

// Per part: elements of its O (batch * seqlen_q rows, the packed bound) and of its lse, and the
// part strides in fp32 elements after rounding each part up to kSplitPartAlign bytes. Sizes are
// validated by the host before (no overflow here).
struct SplitKvLayout {
    int64_t o_elements, lse_elements;
    int64_t o_stride, lse_stride;
    int64_t total_bytes;
};

ZYFA_HD SplitKvLayout split_kv_layout(int64_t batch, int64_t seqlen_q, int64_t heads_q, int64_t head_dim_v,
                                      int64_t splits) {
    SplitKvLayout layout;
    const int64_t per_float = kSplitPartAlign / 4;
    layout.lse_elements = batch * seqlen_q * heads_q;
    layout.o_elements = layout.lse_elements * head_dim_v;
    layout.o_stride = (layout.o_elements + per_float - 1) / per_float * per_float;
    layout.lse_stride = (layout.lse_elements + per_float - 1) / per_float * per_float;
    layout.total_bytes = splits * (layout.o_stride + layout.lse_stride) * 4;
    return layout;
}

// The keys split `split` of `num_splits` takes from a tile whose rows see the keys
// [keys_begin, keys_end) of their sequence: whole kSplitKeyBlock blocks, aligned to the sequence
// start, ceil(blocks / num_splits) per split in order; the last splits may get none. Every block
// of the tile's range lies in exactly one split (tests/unit/split_kv_plan_test.cpp).
struct SplitKeyRange {
    int32_t first_key;  // the first key of the split's first block
    int32_t blocks;     // 0: the split sees no key (it writes O = 0, lse = -inf)
};

ZYFA_HD SplitKeyRange split_key_range(int32_t keys_begin, int32_t keys_end, int32_t split, int32_t num_splits) {
    const int32_t origin = keys_begin - keys_begin % kSplitKeyBlock;
    const int32_t tile_blocks = keys_end > keys_begin ? (keys_end - origin + kSplitKeyBlock - 1) / kSplitKeyBlock : 0;
    const int32_t per_split = (tile_blocks + num_splits - 1) / num_splits;
    const int32_t first = split * per_split < tile_blocks ? split * per_split : tile_blocks;
    const int32_t last = first + per_split < tile_blocks ? first + per_split : tile_blocks;
    return SplitKeyRange{origin + first * kSplitKeyBlock, last - first};
}

// Packed row `packed` of kv head `head_kv`: query token packed / G of head head_kv * G + packed % G
// (G = heads_q / heads_kv), the pack-GQA layout of the split kernels' tiles.
struct PackedRow {
    int32_t token, head;
};

ZYFA_HD PackedRow packed_row(int32_t packed, int32_t head_kv, int32_t group_size) {
    return PackedRow{packed / group_size, head_kv * group_size + packed % group_size};
}

// Where a part holds (sequence b, token, head): the element index of O's first value (FP32
// [batch, seqlen_q, heads_q, head_dim_v], or packed rows first_q + token) and the lse index, as
// zyfa_attn_merge's kernel (common/attn_merge_row.h) reads them with the part strides
// (head_dim_v, heads_q * head_dim_v, seqlen_q * heads_q * head_dim_v) the host passes.
ZYFA_HD int64_t split_part_o_index(bool varlen, int64_t first_q, int32_t batch, int32_t seqlen_q, int32_t heads_q,
                                   int32_t head_dim_v, int32_t token, int32_t head) {
    const int64_t row = varlen ? first_q + token : static_cast<int64_t>(batch) * seqlen_q + token;
    return (row * heads_q + head) * head_dim_v;
}

ZYFA_HD int64_t split_part_lse_index(bool varlen, int64_t total_q, int64_t first_q, int32_t batch, int32_t seqlen_q,
                                     int32_t heads_q, int32_t token, int32_t head) {
    return varlen ? head * total_q + first_q + token : (static_cast<int64_t>(batch) * heads_q + head) * seqlen_q + token;
}

}  // namespace zyfa

#endif
