// The shared-memory layout of the sm_90a wgmma attention kernels (attention_fwd_wgmma.cuh), one
// definition for the kernels and for the host launch plan (src/cuda/attention_launch_plan.cpp).
//
// Every operand tile is stored "chunk-major": 16-byte chunk c of row r lives at
//   c * (rows * 16) + r * 16,
// so each wgmma core matrix (8 rows x 16 bytes) is 128 contiguous bytes. Read as a K-major
// operand (rows = M or N, chunks along K) with no swizzle, its descriptor has
//   leading byte offset (next chunk along K) = rows * 16, stride byte offset (next 8 rows) = 128.
// V in BF16/FP16 is used as it is loaded (rows = keys, chunks = 8 output columns): an MN-major B
// operand with no swizzle, leading byte offset (next 8 keys) = 128 and stride byte offset (next 8
// columns) = 64 * 16. FP8 tiles are loaded as they are, then widened to FP16 copies in the same
// layout (16-byte chunks of 8 elements).
#ifndef ZYFA_KERNELS_NVIDIA_ATTENTION_WGMMA_TILE_SHAPE_H
#define ZYFA_KERNELS_NVIDIA_ATTENTION_WGMMA_TILE_SHAPE_H

namespace zyfa {
namespace nvidia {

// elem_bytes: 2 (BF16/FP16) or 1 (e4m3). WARPGROUPS warpgroups of 64 query rows each: 2 (one
// CTA per SM, 128-row tiles) or 1 (64-row tiles, two CTAs per SM that run out of step, so one's
// softmax overlaps the other's wgmma). FP8 tiles are converted (exactly) to FP16 copies that the
// wgmma reads: see attention_fwd_wgmma.cuh.
template <int ELEM_BYTES, int DQK, int DV, int WARPGROUPS>
struct WgmmaTileShape {
    static constexpr int kElem = ELEM_BYTES;
    static constexpr bool kFp8 = ELEM_BYTES == 1;
    static constexpr int kWarpgroups = WARPGROUPS;
    static constexpr int kThreads = kWarpgroups * 128;
    static constexpr int kRows = kWarpgroups * 64;
    static constexpr int kKeys = 64;    // keys per online-softmax step = the CPU model's key_block
    // Blocks in shared memory: K of blocks n, n+1 (being multiplied) and n+2 (loading); V of
    // blocks n (being multiplied) and n+1 (loading).
    static constexpr int kKStages = 3;
    static constexpr int kVStages = 2;
    static constexpr int kHeaderBytes = 128;  // the tile's key ranges
    static constexpr int kQkChunks = DQK * kElem / 16;  // 16-byte chunks of a loaded row
    static constexpr int kVChunks = DV * kElem / 16;
    static constexpr int kQBytes = kRows * DQK * kElem;
    static constexpr int kKBytes = kKeys * DQK * kElem;
    static constexpr int kVBytes = kKeys * DV * kElem;
    // FP16 copies of the FP8 tiles (one K and one V block: converted one block ahead).
    static constexpr int kQ16Bytes = kFp8 ? kRows * DQK * 2 : 0;
    static constexpr int kK16Bytes = kFp8 ? kKeys * DQK * 2 : 0;
    static constexpr int kV16Bytes = kFp8 ? kKeys * DV * 2 : 0;
    static constexpr int kQOffset = kHeaderBytes;
    static constexpr int kKOffset = kQOffset + kQBytes;
    static constexpr int kVOffset = kKOffset + kKStages * kKBytes;
    static constexpr int kQ16Offset = kVOffset + kVStages * kVBytes;
    static constexpr int kK16Offset = kQ16Offset + kQ16Bytes;
    static constexpr int kV16Offset = kK16Offset + kK16Bytes;
    static constexpr int kSharedBytes = kV16Offset + kV16Bytes;
    static_assert(kQkChunks % 4 == 0 && kVChunks % 4 == 0, "the loader moves 4 chunks of 8 rows per warp");
    static_assert(DV == 128, "the P.V wgmma wrappers are written for 128 output columns");
    static_assert(WARPGROUPS == 1 || WARPGROUPS == 2, "one or two warpgroups");
};

}  // namespace nvidia
}  // namespace zyfa

#endif
