// gfx950 transposing LDS reads. Kernarg: out (u32[64 x 8]). Result k of lane l goes to
// out[64 k + l]. LDS bytes 0..511 hold 16-bit elements h = 0..255 (element h = h); bytes
// 512..1023 hold bytes j = 0..511 (byte j = j & 0xff).
.include "emu_kernel.inc"
.macro ST k, vreg
  v_add_u32 v30, 256*\k, v1
  global_store_dword v30, \vreg, s[4:5]
.endm
.macro PROLOGUE
  s_load_dwordx2 s[4:5], s[0:1], 0x0
  v_and_b32 v20, 63, v0             // lane
  v_lshlrev_b32 v1, 2, v20
  v_lshlrev_b32 v10, 3, v20         // lane * 8
  // 16-bit elements 4 l .. 4 l + 3 at byte 8 l.
  v_lshlrev_b32 v4, 2, v20
  v_add_u32 v5, 1, v4
  v_lshl_or_b32 v40, v5, 16, v4
  v_add_u32 v6, 2, v4
  v_add_u32 v7, 3, v4
  v_lshl_or_b32 v41, v7, 16, v6
  ds_write_b64 v10, v[40:41]
  // Bytes 8 l .. 8 l + 7 (mod 256) at byte 512 + 8 l.
  v_and_b32 v4, 0xff, v10
  v_mov_b32 v5, 0x01010101
  v_mul_lo_u32 v4, v5, v4
  v_add_u32 v40, 0x03020100, v4
  v_add_u32 v41, 0x07060504, v4
  ds_write_b64 v10, v[40:41] offset:512
  // Natural addresses: group g = lane / 16, t = lane % 16.
  v_and_b32 v21, 15, v20
  v_lshrrev_b32 v22, 4, v20
  v_lshlrev_b32 v25, 7, v22         // 128 g
  // b16: a 16x4 block, element (m, k) at 2 (m + 16 k); lane t addresses rows 4 (t % 4).. of column t / 4.
  v_and_b32 v23, 3, v21
  v_lshlrev_b32 v23, 3, v23
  v_lshrrev_b32 v24, 2, v21
  v_lshlrev_b32 v24, 5, v24
  v_add3_u32 v26, v23, v24, v25
  // b8: a 16x8 block, element (m, k) at m + 16 k; lane t addresses rows 8 (t % 2).. of column t / 2.
  v_and_b32 v23, 1, v21
  v_lshlrev_b32 v23, 3, v23
  v_lshrrev_b32 v24, 1, v21
  v_lshlrev_b32 v24, 4, v24
  v_add3_u32 v27, v23, v24, v25
  // Any 8-byte aligned addresses: 8 ((5 l + 3) % 64).
  v_mul_u32_u24 v28, 5, v20
  v_add_u32 v28, 3, v28
  v_and_b32 v28, 63, v28
  v_lshlrev_b32 v28, 3, v28
  s_waitcnt lgkmcnt(0)
.endm

KERNEL_BEGIN transpose_ops
  PROLOGUE
  ds_read_b64_tr_b16 v[42:43], v26
  ds_read_b64_tr_b8 v[44:45], v27 offset:512
  ds_read_b64_tr_b16 v[46:47], v28
  ds_read_b64_tr_b8 v[48:49], v28 offset:512
  s_waitcnt lgkmcnt(0)
  ST 0, v42
  ST 1, v43
  ST 2, v44
  ST 3, v45
  ST 4, v46
  ST 5, v47
  ST 6, v48
  ST 7, v49
  s_waitcnt vmcnt(0)
  s_endpgm
KERNEL_END transpose_ops, 64, 0, 1024

KERNEL_BEGIN fault_transpose_lgkmcnt
  PROLOGUE
  ds_read_b64_tr_b16 v[42:43], v26
  ST 0, v42
  s_endpgm
KERNEL_END fault_transpose_lgkmcnt, 64, 0, 1024

KERNEL_BEGIN fault_transpose_exec
  PROLOGUE
  s_mov_b32 exec_lo, 0xfffffff0
  ds_read_b64_tr_b8 v[42:43], v27 offset:512
  s_waitcnt lgkmcnt(0)
  s_endpgm
KERNEL_END fault_transpose_exec, 64, 0, 1024
