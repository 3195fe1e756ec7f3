// The fixed geometry of one variant's kernel: LDS layout of the double-buffered K / V^T blocks,
// operand steps, and how the 512 threads split a K or V block into 16-byte chunks.
//
// LDS (per stage; two stages, block i in stage i % 2):
//   K   [64 keys][head_dim_qk + 16 pad]     row-major; lane (col, half) of S^T tile t reads 32
//                                            bytes of key 32t + col at step * 64 + half * 32
//   V^T [head_dim_v][64 + 16 pad]           transposed; column vt_position(key) (attention_fwd.h):
//                                            lane (col, half) of O^T tile dt reads 32 bytes of row
//                                            32 dt + col at half * 32, the keys in P's byte order
#ifndef ZYFA_GFX950_FP8_KERNEL_LAYOUT_HPP
#define ZYFA_GFX950_FP8_KERNEL_LAYOUT_HPP

#include "kernel_variant.hpp"

namespace zyfa {
namespace gfx950_fp8 {

struct KernelLayout {
    explicit KernelLayout(const KernelVariant& v)
        : head_dim_qk(v.head_dim_qk),
          head_dim_v(v.head_dim_v),
          k_row_bytes(v.head_dim_qk + kRowPad),
          vt_row_bytes(kKeysPerBlock + kRowPad),
          k_bytes(kKeysPerBlock * k_row_bytes),
          vt_offset(k_bytes),
          stage_bytes(k_bytes + v.head_dim_v * vt_row_bytes),
          lds_bytes(kStages * stage_bytes),
          qk_steps(v.head_dim_qk / kStepBytes),
          o_tiles(v.head_dim_v / 32),
          k_chunks_per_row(v.head_dim_qk / 16),
          v_chunks_per_row(v.head_dim_v / 16),
          k_chunks_per_thread((kKeysPerBlock * v.head_dim_qk / 16 + kThreadsPerWorkgroup - 1) / kThreadsPerWorkgroup) {}

    static constexpr int kStages = 2;    // LDS stages: block j in stage j % 2 (kernel_body.cpp)
    static constexpr int kRowPad = 16;    // bytes after each LDS row: spreads rows over the banks
    static constexpr int kStepBytes = 64; // K of one v_mfma_scale_f32_32x32x64_f8f6f4 (fp8)
    int head_dim_qk, head_dim_v;
    int k_row_bytes, vt_row_bytes;
    int k_bytes, vt_offset, stage_bytes, lds_bytes;
    int qk_steps;   // MFMAs per S^T tile
    int o_tiles;    // 32-column tiles of O^T
    int k_chunks_per_row, v_chunks_per_row;
    int k_chunks_per_thread;  // 1 (d128) or 2 (d192: the second only for threads < 256)
};

}  // namespace gfx950_fp8
}  // namespace zyfa

#endif
