// The second kernel parameter of the warp-specialised sm_90a kernels (attention_fwd_ws.cuh): TMA
// tensor maps of Q, K and V, one definition for the kernels and the host (src/cuda).
//
// Every warp-specialised kernel's Q, K and V tiles are stored as column slices of 128 bytes
// (ws_tma_slices below: FP8 head dim 128 one slice, 16-bit head dim 128 two, FP8 192 two with the
// second half empty, 16-bit 192 three, FP8 64 one half-empty slice, 16-bit 64 one), each slice rows of 128 bytes in the 128-byte swizzle of
// wgmma: 16-byte chunk c of row r at r * 128 + ((c ^ (r % 8)) * 16) (attention_ws_tile_shape.h).
// A box is one slice of a whole tile: 128 bytes of the head dim (128 FP8 or 64 16-bit elements)
// times Q's 128 rows or a K or V block's rows (ws_key_block: 64 or 128), one copy per slice; columns past the head dim
// (FP8 192's second slice, FP8 64's upper half: a box wider than the tensor) read as zero and
// are never used. Boxes of 16-byte chunk columns, which
// kept the older unswizzled tiles, were measured slower than the producer's cp.async copies
// (H200, 2026-11-29: 344 against 402 TFLOP/s, FP8 LEAN 16K).
//
// Each map is rank 4 over the tensor as the caller laid it out: dim 0 the head dim (contiguous),
// dims 1..3 the sequence, head and batch axes in the order of their strides (smallest first, as
// the driver wants nested strides; axis[map][a] says which dim holds axis a = 0 sequence,
// 1 head, 2 batch); the box has extent 1 on the head and batch axes; elements outside the tensor
// read as zero (a tile's rows past the sequence). With enabled = 0 (other dtypes or head dims,
// varlen, strides or addresses the tensor memory accelerator cannot take, or a driver without
// cuTensorMapEncodeTiled) the maps are unset and the producer copies with cp.async.
#ifndef ZYFA_KERNELS_NVIDIA_ATTENTION_WS_TMA_PARAMS_H
#define ZYFA_KERNELS_NVIDIA_ATTENTION_WS_TMA_PARAMS_H

#include <stdint.h>

#include "common/paged_kv_args.h"

namespace zyfa {
namespace nvidia {

// Consumer warpgroups of the warp-specialised kernels (64 query rows each). Three measured slower
// at 1K and could not keep Q and LEAN's row sums as two do (docs/performance.md); the register
// split of sm90/traits.cuh is sized for two.
constexpr int kWsConsumerWarpgroups = 2;

// The warp-specialised kernels' head dims (64, 128, 192/128 and 256), whose tiles the maps fill.
constexpr bool ws_tma_layout(int elem_bytes, int head_dim_qk, int head_dim_v) {
    return (elem_bytes == 1 || elem_bytes == 2) &&
           ((head_dim_qk == 64 && head_dim_v == 64) ||
            ((head_dim_qk == 128 || head_dim_qk == 192) && head_dim_v == 128) ||
            (head_dim_qk == 256 && head_dim_v == 256));
}
// 128-byte column slices of a tile whose rows hold `head_dim` elements of `elem_bytes`.
constexpr int ws_tma_slices(int elem_bytes, int head_dim) { return (head_dim * elem_bytes + 127) / 128; }

// Paged K/V (the ws_paged kernels of attention_kernel_variants.def; the others never read it):
// PagedKvArgs (kernels/common/paged_kv_args.h). With enabled = 1, k_map and v_map are maps over the
// pools (dims 1..3: the page's rows, heads, pages, in stride order) whose box holds
// tma_box_rows = min(page_size, key block) rows: page_size is then a power of two >= 8, so every
// copy lands at a multiple of 8 rows (1024 bytes) of a tile, where the 128-byte swizzle pattern
// starts over.
struct alignas(64) WsTmaParams {
    static constexpr int kMapBytes = 128;   // sizeof(CUtensorMap), 64-byte aligned
    static constexpr int kRowBytes = 128;   // the box's innermost extent (bytes), one slice, the swizzle span
    static constexpr int kQBoxRows = 64 * kWsConsumerWarpgroups;  // WsTileShape::kRows
    alignas(64) unsigned char q_map[kMapBytes];
    alignas(64) unsigned char k_map[kMapBytes];
    alignas(64) unsigned char v_map[kMapBytes];
    int32_t axis[3][3];  // [q, k, v][sequence, head, batch] -> map dim 1..3 (paged: batch = page)
    int32_t enabled;
    // FP8 V in the transposed layout (ZYFA_ATTN_V_TRANSPOSED, common/v_transposed.h; with enabled = 1,
    // contiguous keys): v_map is unset, each V block is one bulk copy of its 16-key groups from
    // AttnKernelArgs::v straight into its stage (sm90/producer.cuh, copy_transposed_v_block).
    int32_t v_transposed;
    PagedKvArgs paged;
    // zyfa_attn_params.key_bias (common/key_bias.h) for the ws_bias kernels, null for the others:
    // fp32 [batch, heads_q, seqlen_k], or [heads_q, total_k] when cu_seqlens_k packs the keys.
    const float* key_bias;
};
enum WsTmaMap { kWsTmaQ = 0, kWsTmaK = 1, kWsTmaV = 2 };

}  // namespace nvidia
}  // namespace zyfa

#endif
