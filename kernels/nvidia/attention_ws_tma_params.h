// The second kernel parameter of the warp-specialised sm_90a kernels (attention_fwd_ws.cuh): TMA
// tensor maps of Q, K and V, one definition for the kernels and the host (src/cuda).
//
// Where the maps are used (ws_tma_layout below: FP8, head dims 128/128), a box is a whole tile in
// the 128-byte swizzle of wgmma's K-major operands: 128-byte rows (the FP8 head dim), 16-byte
// chunk c of row r at r * 128 + ((c ^ (r % 8)) * 16) (attention_ws_tile_shape.h). One copy moves
// Q (128 rows), a K block or a V block (64 rows) in 128-byte row requests; boxes of 16-byte
// chunk columns, which keep the unswizzled chunk-major tiles, were measured slower than the
// producer's cp.async copies (H200, 2026-11-29: 344 against 402 TFLOP/s, FP8 LEAN 16K).
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

namespace zyfa {
namespace nvidia {

// The kernels whose tiles the maps fill: 128-byte rows of Q, K and V.
constexpr bool ws_tma_layout(int elem_bytes, int head_dim_qk, int head_dim_v) {
    return elem_bytes == 1 && head_dim_qk == 128 && head_dim_v == 128;
}

struct alignas(64) WsTmaParams {
    static constexpr int kMapBytes = 128;   // sizeof(CUtensorMap), 64-byte aligned
    static constexpr int kRowBytes = 128;   // the box's innermost extent (bytes), the swizzle span
    static constexpr int kQBoxRows = 128;   // WsTileShape::kRows
    static constexpr int kKvBoxRows = 64;   // WsTileShape::kKeys
    alignas(64) unsigned char q_map[kMapBytes];
    alignas(64) unsigned char k_map[kMapBytes];
    alignas(64) unsigned char v_map[kMapBytes];
    int32_t axis[3][3];  // [q, k, v][sequence, head, batch] -> map dim 1..3
    int32_t enabled;
};
enum WsTmaMap { kWsTmaQ = 0, kWsTmaK = 1, kWsTmaV = 2 };

}  // namespace nvidia
}  // namespace zyfa

#endif
