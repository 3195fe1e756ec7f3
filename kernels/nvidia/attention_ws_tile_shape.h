// The shared-memory layout of the warp-specialised sm_90a kernels (attention_fwd_ws.cuh, sm90/), one
// definition for the kernels and for the host launch plan (src/cuda/attention_launch_plan.cpp).
//
// Q and K tiles, and 16-bit V, are column slices of 128 bytes (attention_ws_tma_params.h) in the
// 128-byte swizzle of wgmma, the layout the tensor memory accelerator writes. FP8 Vt is
// "chunk-major": 16-byte chunk c of row r at c * (rows * 16) + r * 16, so a wgmma core matrix
// (8 rows x 16 bytes) is 128 contiguous bytes, which a K-major descriptor without swizzle reads
// with leading byte offset rows * 16 (the next chunk along K) and stride byte offset 128.
// K and V go through a ring of kStages stages, each guarded by mbarriers (full: the producer's
// copies landed; empty: both consumer warpgroups are done with the stage; with two stages K's and
// V's halves of a stage have an empty barrier each, kSeparateEmpty).
// FP8 V is needed K-major by the e4m3 wgmma (keys contiguous per output column): the producer
// loads each V block as it is (kVStagingBuffers raw buffers) and writes its byte transpose Vt
// (rows = output columns, chunks = 16 keys) into the ring stage. 16-bit V is used as loaded
// (an MN-major B operand in the 128-byte swizzle), so it has no staging buffers.
#ifndef ZYFA_KERNELS_NVIDIA_ATTENTION_WS_TILE_SHAPE_H
#define ZYFA_KERNELS_NVIDIA_ATTENTION_WS_TILE_SHAPE_H

#include "common/key_block.h"
#include "nvidia/attention_ws_tma_params.h"

namespace zyfa {
namespace nvidia {

// Keys per online-softmax step (the CPU model's key_block, zyfa_attn_params.key_block): 128 keys
// where O's accumulator leaves the registers for 128 scores (head_dim_v <= 128), which halves the
// per-step work (O's rescale, the row maxima's tails, the barriers); head dim 256 steps 64.
// 16-bit 192/128 fits only two ring stages at 128 keys; with K's and V's halves freed apart
// (WsTileShape::kSeparateEmpty) each copy still has a step to land. The one definition for the
// kernels' instances, the host's launch plan and the tests. `fp8`, `lean` and head_dim_qk are
// kept for the day the choice depends on them.
constexpr int ws_key_block(bool fp8, bool lean, int head_dim_qk, int head_dim_v) {
    return (void)fp8, (void)lean, (void)head_dim_qk, head_dim_v <= 128 ? 2 * numerics::kKeyBlock : numerics::kKeyBlock;
}
template <bool FP8, bool LEAN, int DQK, int DV>
struct WsKeyBlock {  // the same, as a constant device code can read
    static constexpr int kValue = ws_key_block(FP8, LEAN, DQK, DV);
};

template <int ELEM_BYTES, int DQK, int DV, int KEYS>
struct WsTileShape {
    static constexpr int kElem = ELEM_BYTES;
    static constexpr bool kFp8 = ELEM_BYTES == 1;
    static constexpr int kConsumerWarpgroups = kWsConsumerWarpgroups;  // 64 query rows each
    static constexpr int kThreads = 128 * (1 + kConsumerWarpgroups);  // warpgroup 0 is the producer
    static constexpr int kRows = 64 * kConsumerWarpgroups;
    static constexpr int kKeys = KEYS;  // keys per online-softmax step = the CPU model's key_block
    // Three, not two: a staging buffer is rewritten (cp.async) only after a producer barrier that
    // follows its last transpose read (finish_v in sm90/producer.cuh). With two, a fast thread
    // overwrote bytes a slow one was still reading (compute-sanitizer racecheck, H200).
    static constexpr int kVStagingBuffers = kFp8 ? 3 : 0;
    // The paged producer with the tensor memory accelerator (sm90/producer.cuh,
    // produce_paged_with_tma): warp 0 copies K, warp kPagedVWarp copies V, and kPagedTransposeWarps
    // warps from warp 1 on transpose FP8 V.
    static constexpr int kPagedVWarp = 3;
    static constexpr int kPagedTransposeWarps = 2;
    static constexpr int kPagedCopyLanes = 32;  // a copying warp: each lane arrives on its full barriers
    static constexpr int kQkChunks = DQK * kElem / 16;
    static constexpr int kVChunks = DV * kElem / 16;
    // Q and K (and FP8 V's staging buffers, 16-bit V's stages) in kQkSlices (kVSlices) column
    // slices of 128 bytes, each rows x 128 bytes, 16-byte chunk c of row r at
    // r * 128 + ((c ^ (r % 8)) * 16): the 128-byte swizzle of wgmma and of the tensor memory
    // accelerator (attention_ws_tma_params.h). FP8 Vt is chunk-major.
    static constexpr bool kTma = ws_tma_layout(ELEM_BYTES, DQK, DV);
    static constexpr int kQkSlices = ws_tma_slices(ELEM_BYTES, DQK);
    static constexpr int kVSlices = ws_tma_slices(ELEM_BYTES, DV);
    static constexpr int kSliceBytes = 128;
    // FP8: four K-major B operands of 8 rows x 32 keys (chunk h of 16 keys of row r at
    // h * 128 + r * 16, tile t at 256 t, 1 KB after the barriers), tile t e4m3 1.0 in row 2 t and
    // 0 elsewhere, written once: P times tile t (wgmma m64n8k32) puts k-step t's sums of the
    // rounded probabilities in column 2 t alone, so no k-step's sum is added to another's in the
    // tensor core's narrow adder.
    static constexpr bool kOnesTile = kFp8;
    static constexpr int kOnesOffset = 1024;
    static constexpr int kOnesTiles = 4;
    static constexpr int kOnesTileBytes = 8 * 32;
    static constexpr int kOnesBytes = kOnesTiles * kOnesTileBytes;
    static constexpr int kQBytes = kQkSlices * kRows * kSliceBytes;  // FP8 192: the second slice half empty
    static constexpr int kKBytes = kQkSlices * kKeys * kSliceBytes;
    static constexpr int kVBytes = kKeys * DV * kElem;  // a ring stage of V (FP8: the transpose Vt)
    // V as copied (16-bit: the stage itself; FP8: a staging buffer): FP8 head dim 64 has rows of
    // one slice whose second half is empty.
    static constexpr int kVLoadBytes = kVSlices * kKeys * kSliceBytes;
    static constexpr int kHeaderBytes = 2048;  // keeps the tiles 1024-byte aligned
    static constexpr int kSharedLimit = 227 * 1024;  // sm_90's opt-in dynamic shared memory per block
    // Stage n+2 loads while n (P.V) and n+1 (the next scores) are read: three stages; two where
    // three do not fit (16-bit head dim 256: 64 KB of Q and 64 KB of K and V per stage; 16-bit
    // 192/128 at 128 keys: 48 KB of Q, 80 KB per stage).
    static constexpr int kStages =
        kHeaderBytes + kQBytes + 3 * (kKBytes + kVBytes) + kVStagingBuffers * kVLoadBytes <= kSharedLimit ? 3 : 2;
    // Header: the tile's key ranges (4 ints), then the mbarriers (8 bytes each).
    static constexpr int kKeyRangeOffset = 0;
    static constexpr int kQFullOffset = 64;
    static constexpr int kKFullOffset = kQFullOffset + 8;
    static constexpr int kVFullOffset = kKFullOffset + 8 * kStages;
    // With two stages the stage of block n + 2 is block n's: if K and V were freed together (after
    // P(n) V(n)), K(n + 2) would be copied only then, while the next step's S(n + 2) waits for it
    // at once, so the copy's whole latency would stand in every step (16-bit head dim 256). K's
    // half is free once S(n) is done, a step earlier: K and V then have an empty barrier each, and
    // every copy has a step to land. With three stages the one barrier already gives that step.
    static constexpr bool kSeparateEmpty = kStages == 2;
    static constexpr int kKEmptyOffset = kVFullOffset + 8 * kStages;
    // FP8 with the tensor memory accelerator: V's staging buffer `b` landed (attention_ws_tma_params.h).
    static constexpr int kStagingFullOffset = kKEmptyOffset + 8 * kStages;
    // ... and its transpose has been read out of it (the paged producer: sm90/producer.cuh,
    // transpose_v_blocks).
    static constexpr int kStagingFreeOffset = kStagingFullOffset + 8 * 3;
    // V's empty barriers: K's own where the stage is freed as one.
    static constexpr int kVEmptyOffset = kSeparateEmpty ? kStagingFreeOffset + 8 * 3 : kKEmptyOffset;
    static constexpr int kQOffset = kHeaderBytes;
    static constexpr int kKOffset = kQOffset + kQBytes;
    static constexpr int kVOffset = kKOffset + kStages * kKBytes;
    static constexpr int kVStagingOffset = kVOffset + kStages * kVBytes;
    static constexpr int kSharedBytes = kVStagingOffset + kVStagingBuffers * kVLoadBytes;
    static_assert(!kOnesTile || kOnesBytes / 16 <= 32 * kPagedTransposeWarps, "the paged transposers write the ones tile");
    static_assert(kStagingFreeOffset + 8 * 3 <= kOnesOffset && kVEmptyOffset + 8 * kStages <= kOnesOffset &&
                      kOnesOffset + kOnesBytes <= kHeaderBytes,
                  "header");
    static_assert(!(kSeparateEmpty && kFp8), "FP8's transposers free V's half with K's (three stages)");
    static_assert(kHeaderBytes % 1024 == 0, "tiles 1024-byte aligned (128-byte swizzle)");
    static_assert(kTma, "the warp-specialised kernels' head dims (ws_tma_layout)");
    static_assert(kKeys == 64 || kKeys == 128, "key blocks of 64 or 128 (the TMA box, the transpose's groups)");
    static_assert(kFp8 || kVBytes == kVLoadBytes, "16-bit V rows are whole slices");
    static_assert(DV == 64 || DV == 128 || DV == 256, "the P.V wgmma wrappers: 64 or 128 output columns, 256 as two 128s");
    // sm_90's opt-in dynamic shared memory per block (227 KB). Head dim 256 (64-key blocks): FP8
    // 182,272 (three stages), 16-bit 198,656 (two stages). 128-key blocks: FP8 head dim 128
    // 165,888, 192/128 231,424, 64 141,312 (three stages); 16-bit 128 231,424 (three), 64 116,736
    // (three), 192/128 215,040 (two: Q and K in three slices, 80 KB a stage).
    static_assert(kSharedBytes <= kSharedLimit, "shared memory beyond sm_90's per-block limit");
};

}  // namespace nvidia
}  // namespace zyfa

#endif
