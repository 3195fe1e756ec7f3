// The shared-memory layout of the NVIDIA attention kernels (attention_fwd_mma.cuh), one definition
// for the kernels and for the host launch plan (src/cuda/attention_launch_plan.cpp), which needs
// the dynamic shared memory size of every launch.
#ifndef ZYFA_KERNELS_NVIDIA_ATTENTION_TILE_SHAPE_H
#define ZYFA_KERNELS_NVIDIA_ATTENTION_TILE_SHAPE_H

#include "common/key_block.h"

namespace zyfa {
namespace nvidia {

using numerics::kKeyBlock;  // keys per online-softmax step (kernels/common/key_block.h)
constexpr int kRowPad = 16;        // bytes after every shared-memory row: conflict-free ldmatrix
constexpr int kHeaderBytes = 128;  // start of dynamic shared memory: the tile's key range

// elem_bytes: 2 (BF16/FP16) or 1 (e4m3). WARPS warps own 16 query rows each.
template <int ELEM_BYTES, int DQK, int DV, int WARPS>
struct TileShape {
    static constexpr int kElem = ELEM_BYTES;
    static constexpr bool kFp8 = ELEM_BYTES == 1;
    static constexpr int kThreads = WARPS * 32;
    static constexpr int kRows = WARPS * 16;
    static constexpr int kQkRowBytes = DQK * kElem + kRowPad;
    static constexpr int kVRowBytes = DV * kElem + kRowPad;
    static constexpr int kVtRowBytes = kKeyBlock + kRowPad;  // FP8 transposed V: one row per column
    static constexpr int kQBytes = kRows * kQkRowBytes;
    static constexpr int kKBytes = kKeyBlock * kQkRowBytes;
    static constexpr int kVBytes = kKeyBlock * kVRowBytes;
    static constexpr int kVtBytes = kFp8 ? DV * kVtRowBytes : 0;
    static constexpr int kQOffset = kHeaderBytes;
    static constexpr int kKOffset = kQOffset + kQBytes;      // two stages
    static constexpr int kVOffset = kKOffset + 2 * kKBytes;  // two stages
    static constexpr int kVtOffset = kVOffset + 2 * kVBytes;
    static constexpr int kSharedBytes = kVtOffset + kVtBytes;
    static constexpr int kKSteps = DQK * kElem / 32;  // 32 bytes of head dim per S MMA k-step
    static_assert(DQK % 32 == 0 && DV % 16 == 0, "head dims must be multiples of 32 and 16");
};

}  // namespace nvidia
}  // namespace zyfa

#endif
