// gfx942 BF16: the LDS layout of K and V^T and every thread's addresses into it.
//
// Two stages of K [64 keys][256 B] + V^T [128 dims][128 B] fill gfx942's 64 KiB exactly, so the
// rows get no padding. Without it, the 8 lanes a ds_read_b128 serves together (one column of 8
// rows) would read the same 16-byte bank group: 8-way conflicts. So the 16-byte chunk c of row r
// lives at chunk c ^ (r % 8) (K: 16 chunks per row, V^T: 8). Lanes l .. l + 7 read rows whose
// r % 8 are 0..7 at one logical chunk, hence 8 distinct bank groups (LDS: 32 banks of 4 bytes,
// 128 bytes a cycle). The XOR depends on the lane and on the chunk's low three bits, so each
// distinct low part gets its own address register and the rest is the instruction's offset:
//   K read (tile t, step s: chunk 2 s + half of row 32 t + col): register s % 4 holds
//     col 256 + 16 ((2 (s % 4) + half) ^ (col % 8)); offset stage 32 KiB + 8 KiB t + 128 (s / 4);
//   V^T read (tile dt, key step s: chunk 4 half + s of row 32 dt + col): register s holds
//     16 KiB + col 128 + 16 ((4 half + s) ^ (col % 8)); offset stage 32 KiB + 4 KiB dt;
//   K write (row tid / 8, chunks tid % 8 + 8 j): one register, offset stage 32 KiB + 128 j;
//   V^T write (dim d = 64 j + 8 (tid % 8) + k, key column vt_position(tid / 8), 2 bytes): register
//     k = d % 8 holds 16 KiB + 8 (tid % 8) 128 + 16 ((pos / 8) ^ k) + 2 (pos % 8); offset stage
//     32 KiB + (64 j + k) 128.
// The cycle model does not see bank conflicts; this layout is what hardware needs, not a change
// of the estimate.
#include <cstddef>

#include "common/attention_kernel_args.h"
#include "kernel_builder.hpp"

namespace zyfa {
namespace gfx950_fp8 {

void KernelBuilder::lds_addresses_gfx942(const Reg& k_base, const Reg& v_base) {
    const KernelLayout& L = layout_;
    const Reg c = tmp_v("chunk column"), t = tmp_v("address tmp"), x = tmp_v("row % 8 (XOR)"), b = tmp_v("address base");
    const Reg row = tmp_v("chunk key row");
    const Reg k_stride = arg(offsetof(AttnKernelArgs, k_stride_seq), 8), v_stride = arg(offsetof(AttnKernelArgs, v_stride_seq), 8);
    // Global: thread tid loads key row tid / 8, 16-byte columns tid % 8 + 8 j of K and V, at 64-bit
    // addresses from the block's base (lane_address: any stride).
    e_.op("v_lshrrev_b32", {W(row), I(3), R(r_.thread_id)});
    e_.op("v_and_b32", {W(c), I(7), R(r_.thread_id)});
    lane_address(r_.k_global_addr, k_base, row, k_stride, c);
    lane_address(r_.v_global_addr, v_base, row, v_stride, c);
    // K write: row 256 + 16 (c ^ (row % 8)).
    e_.op("v_and_b32", {W(x), I(7), R(row)});
    e_.op("v_xor_b32", {W(x), R(x), R(c)});
    e_.op("v_mul_u32_u24", {W(t), I(L.k_row_bytes), R(row)});
    e_.op("v_lshl_add_u32", {W(r_.k_lds_write), R(x), I(4), R(t)}, "", "K write address (swizzled)");
    // V^T write: pos = vt_position(row) (attention_fwd.h), then one address per dim % 8.
    const Reg pos = x;
    e_.op("v_bfe_u32", {W(pos), R(row), I(2), I(1)});
    e_.op("v_lshlrev_b32", {W(pos), I(5), R(pos)});
    e_.op("v_bfe_u32", {W(t), R(row), I(5), I(1)});
    e_.op("v_lshl_add_u32", {W(pos), R(t), I(4), R(pos)});
    e_.op("v_bfe_u32", {W(t), R(row), I(3), I(2)});
    e_.op("v_lshl_add_u32", {W(pos), R(t), I(2), R(pos)});
    e_.op("v_and_b32", {W(t), I(3), R(row)});
    e_.op("v_add_u32", {W(pos), R(pos), R(t)});
    e_.op("v_and_b32", {W(t), I(7), R(pos)});
    e_.op("v_mul_u32_u24", {W(b), I(8 * L.vt_row_bytes), R(c)});
    e_.op("v_lshl_add_u32", {W(b), R(t), I(1), R(b)}, "", "2 (pos % 8) + 8 c dims");
    e_.op("v_add_u32", {W(b), I(L.vt_offset), R(b)});
    e_.op("v_lshrrev_b32", {W(pos), I(3), R(pos)}, "", "the key chunk pos / 8");
    for (int k = 0; k < 8; ++k) {
        e_.op("v_xor_b32", {W(t), I(k), R(pos)});
        e_.op("v_lshl_add_u32", {W(r_.vt_lds_write.at(k)), R(t), I(4), R(b)}, "", k == 0 ? "V^T write addresses (swizzled)" : "");
    }
    // K reads: col 256 + 16 ((2 q + half) ^ (col % 8)).
    e_.op("v_and_b32", {W(x), I(7), R(r_.col)});
    e_.op("v_mul_u32_u24", {W(b), I(L.k_row_bytes), R(r_.col)});
    for (int q = 0; q < 4; ++q) {
        e_.op("v_add_u32", {W(t), I(2 * q), R(r_.half)});
        e_.op("v_xor_b32", {W(t), R(t), R(x)});
        e_.op("v_lshl_add_u32", {W(r_.k_lds_read.at(q)), R(t), I(4), R(b)}, "", q == 0 ? "K read addresses (swizzled)" : "");
    }
    // V^T reads: 16 KiB + col 128 + 16 ((4 half + s) ^ (col % 8)).
    e_.op("v_mul_u32_u24", {W(b), I(L.vt_row_bytes), R(r_.col)});
    e_.op("v_add_u32", {W(b), I(L.vt_offset), R(b)});
    e_.op("v_lshlrev_b32", {W(c), I(2), R(r_.half)});
    for (int s = 0; s < 4; ++s) {
        e_.op("v_add_u32", {W(t), I(s), R(c)});
        e_.op("v_xor_b32", {W(t), R(t), R(x)});
        e_.op("v_lshl_add_u32", {W(r_.v_lds_read.at(s)), R(t), I(4), R(b)}, "", s == 0 ? "V^T read addresses (swizzled)" : "");
    }
    free(c);
    free(t);
    free(x);
    free(b);
    free(row);
}

}  // namespace gfx950_fp8
}  // namespace zyfa
