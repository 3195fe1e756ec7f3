// The tiling of the AMD attention kernels, one definition for the device code
// (attention_fwd.h) and the host launch plan (src/hip/attention_launch_plan.cpp).
//
// A workgroup of kWaves = 8 wave64s owns kRows = 256 consecutive queries of one (batch, query
// head); each wave owns 32 of them, one per lane pair (lane l and l + 32 hold query l % 32: the columns of a
// 32x32 MFMA accumulator). Keys are visited in blocks of kKeyBlock = 64 aligned to the start of the
// sequence, the CPU model's key_block (LEAN's block scales depend on it). K and V of one block sit
// in LDS: K row-major [key][d], V transposed [d][key] (see attention_fwd.h for the key order).
// Intended occupancy: kWavesPerSimd waves per SIMD, i.e. at most 512 / kWavesPerSimd VGPRs + AGPRs
// per wave (tests/amd checks the code objects against it).
#ifndef ZYFA_KERNELS_AMD_ATTENTION_TILE_SHAPE_H
#define ZYFA_KERNELS_AMD_ATTENTION_TILE_SHAPE_H

#include "common/key_block.h"

namespace zyfa {
namespace amd {

constexpr int kWaveSize = 64;
constexpr int kWaves = 8;
constexpr int kThreads = kWaves * kWaveSize;
constexpr int kRowsPerWave = 32;
constexpr int kRows = kWaves * kRowsPerWave;
using numerics::kKeyBlock;  // kernels/common/key_block.h
constexpr int kWavesPerSimd = 2;
constexpr int kLdsRowPad = 16;  // bytes after every LDS row: spreads rows over the banks
constexpr int kVectorBytes = 16;  // global loads of K/V rows are 16 bytes; Q loads up to 16

// ELEM_BYTES: 2 (BF16) or 1 (FP8).
template <int ELEM_BYTES, int DQK, int DV>
struct TileShape {
    static constexpr int kKRowBytes = DQK * ELEM_BYTES + kLdsRowPad;
    static constexpr int kVtRowBytes = kKeyBlock * ELEM_BYTES + kLdsRowPad;
    static constexpr int kKOffset = 16;  // bytes 0..7: the workgroup's key range
    static constexpr int kVtOffset = kKOffset + kKeyBlock * kKRowBytes;
    // The block's key biases in log2 units (zyfa_attn_params.key_bias; unused without one).
    static constexpr int kBiasOffset = kVtOffset + DV * kVtRowBytes;
    static constexpr int kLdsBytes = kBiasOffset + kKeyBlock * 4;
    static_assert(DQK % 64 == 0 && DV % 32 == 0, "head dims: DQK a multiple of 64, DV of 32");
    static_assert((DQK * ELEM_BYTES) % kVectorBytes == 0 && (DV * ELEM_BYTES) % kVectorBytes == 0,
                  "rows must be whole 16-byte vectors");
};

}  // namespace amd
}  // namespace zyfa

#endif
