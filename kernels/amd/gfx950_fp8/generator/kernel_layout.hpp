// The fixed geometry of one variant's kernel: LDS layout of the double-buffered K / V^T blocks,
// operand steps, and how the 512 threads split a K or V block into 16-byte chunks.
//
// LDS (per stage; FP8 two stages, BF16 three, block i in stage i % stages):
//   K   [64 keys][head_dim_qk + 16 pad]     row-major; lane (col, half) of S^T tile t reads 32
//                                            bytes of key 32t + col at step * 64 + half * 32
//                                            (BF16: 16 bytes at step * 32 + half * 16)
//   V^T [head_dim_v][64 + 16 pad]           transposed; column vt_position(key) (attention_fwd.h):
//                                            lane (col, half) of O^T tile dt reads 32 bytes of row
//                                            32 dt + col at half * 32, the keys in P's byte order
//                                            (BF16: elements of 2 bytes, 16 bytes per MFMA step s
//                                            at half * 64 + s * 16)
#ifndef ZYFA_GFX950_FP8_KERNEL_LAYOUT_HPP
#define ZYFA_GFX950_FP8_KERNEL_LAYOUT_HPP

#include "kernel_variant.hpp"

namespace zyfa {
namespace gfx950_fp8 {

struct KernelLayout {
    explicit KernelLayout(const KernelVariant& v)
        : bf16(v.input == VariantInput::Bf16),
          elem_bytes(bf16 ? 2 : 1),
          gfx942(v.arch == VariantArch::Gfx942),
          row_pad(gfx942 && bf16 ? 0 : kRowPad),
          stages(bf16 && !gfx942 ? 3 : 2),
          step_bytes(bf16 ? 32 : 64),
          op_regs(bf16 ? 4 : 8),
          head_dim_qk(v.head_dim_qk),
          head_dim_v(v.head_dim_v),
          k_row_bytes(v.head_dim_qk * elem_bytes + row_pad),
          vt_row_bytes(kKeysPerBlock * elem_bytes + row_pad),
          k_bytes(kKeysPerBlock * k_row_bytes),
          vt_offset(k_bytes),
          stage_bytes(k_bytes + v.head_dim_v * vt_row_bytes),
          lds_bytes(stages * stage_bytes),
          qk_steps(v.head_dim_qk * elem_bytes / step_bytes),
          pv_steps(bf16 ? kKeysPerBlock / 16 : 1),
          o_tiles(v.head_dim_v / 32),
          k_chunks_per_row(v.head_dim_qk * elem_bytes / 16),
          v_chunks_per_row(v.head_dim_v * elem_bytes / 16),
          k_chunks_per_thread((kKeysPerBlock * k_chunks_per_row + kThreadsPerWorkgroup - 1) / kThreadsPerWorkgroup),
          v_chunks_per_thread(kKeysPerBlock * v_chunks_per_row / kThreadsPerWorkgroup) {}

    static constexpr int kMaxStages = 3;
    static constexpr int kRowPad = 16;    // bytes after each LDS row: spreads rows over the banks
    bool bf16;       // VariantInput::Bf16
    int elem_bytes;  // of Q, K, V: 1 (e4m3fn) or 2 (bf16)
    // gfx942 (BF16 d128): 64 KiB of LDS hold exactly two stages of unpadded K [64][256 B] + V^T
    // [128][128 B]; V of block j is stored one block after K of block j (kernel_body_gfx942.cpp), so
    // two stages suffice. No row padding: the cycle model does not see LDS bank conflicts, hardware
    // would (README.md, "gfx942", says so).
    bool gfx942;
    int row_pad;
    // LDS stages: block j in stage j % stages (kernel_body.cpp). FP8: 2 (V^T operands of a block
    // are read into registers before the barrier); BF16: 3 (a block's 16 V^T operands do not fit
    // in registers, so PV of block j - 1 reads stage (j - 1) % 3 while block j + 1 is stored).
    int stages;
    int step_bytes;  // K (bytes) of one MFMA per operand row: 64 (32x32x64 f8f6f4) or 32 (32x32x16 bf16)
    int op_regs;     // VGPRs of one A/B operand: 8 (32 bytes) or 4 (16 bytes)
    int head_dim_qk, head_dim_v;
    int k_row_bytes, vt_row_bytes;
    int k_bytes, vt_offset, stage_bytes, lds_bytes;
    int qk_steps;   // MFMAs per S^T tile
    int pv_steps;   // MFMAs per O^T tile and key block
    int o_tiles;    // 32-column tiles of O^T
    int k_chunks_per_row, v_chunks_per_row;
    int k_chunks_per_thread;  // FP8: 1 (d128) or 2 (d192: the second only for threads < 256); BF16: 2 or 3
    int v_chunks_per_thread;  // FP8 1, BF16 2
};

}  // namespace gfx950_fp8
}  // namespace zyfa

#endif
