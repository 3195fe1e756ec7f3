// SALU, SOPP branches and SMEM. Kernarg: out, in. in[0..3] = a, b, c, d (u32). Every result goes
// to out[k] (all lanes store the same value).
.include "emu_kernel.inc"
.macro ST k, sreg
  v_mov_b32 v1, \sreg
  global_store_dword v0, v1, s[4:5] offset:4*\k
.endm
KERNEL_BEGIN scalar_ops
  s_load_dwordx4 s[4:7], s[0:1], 0x0
  v_mov_b32 v0, 0
  s_waitcnt lgkmcnt(0)
  s_load_dwordx4 s[12:15], s[6:7], 0x0
  s_waitcnt lgkmcnt(0)
  s_add_u32 s20, s12, s13
  s_addc_u32 s21, s14, 0
  ST 0, s20
  ST 1, s21
  s_sub_u32 s20, s12, s13
  s_subb_u32 s21, s14, 0
  ST 2, s20
  ST 3, s21
  s_mul_i32 s20, s12, s14
  ST 4, s20
  s_mul_hi_u32 s20, s12, s13
  ST 5, s20
  s_mul_hi_i32 s20, s12, s15
  ST 6, s20
  s_lshl_b32 s20, s12, 5
  ST 7, s20
  s_lshr_b32 s20, s15, 3
  ST 8, s20
  s_ashr_i32 s20, s15, 3
  ST 9, s20
  s_and_b32 s20, s12, s13
  ST 10, s20
  s_or_b32 s20, s12, s13
  ST 11, s20
  s_xor_b32 s20, s12, s13
  ST 12, s20
  s_andn2_b32 s20, s12, s13
  ST 13, s20
  s_min_i32 s20, s14, s15
  ST 14, s20
  s_max_u32 s20, s14, s15
  ST 15, s20
  s_abs_i32 s20, s15
  ST 16, s20
  s_brev_b32 s20, s12
  ST 17, s20
  s_mov_b32 s22, 0
  s_mov_b32 s23, s13
  s_ff1_i32_b64 s20, s[22:23]
  ST 18, s20
  s_cmp_lt_i32 s15, s14
  s_cselect_b32 s20, s12, s13
  ST 19, s20
  s_bfe_u32 s20, s12, 0x80004
  ST 20, s20
  s_lshl_b64 s[22:23], s[12:13], 40
  ST 21, s23
  s_not_b32 s20, s12
  ST 22, s20
  s_movk_i32 s20, 0x8001
  ST 23, s20
  s_bcnt1_i32_b64 s20, s[12:13]
  ST 24, s20
  s_mov_b64 s[22:23], s[12:13]
  s_cmp_eq_u64 s[22:23], s[12:13]
  s_cselect_b32 s20, 7, 9
  ST 25, s20
  // A loop: sum 1..10 with s_cbranch_scc1 (backward branch).
  s_mov_b32 s20, 0
  s_mov_b32 s21, 10
.Lloop:
  s_add_i32 s20, s20, s21
  s_sub_i32 s21, s21, 1
  s_cmp_gt_i32 s21, 0
  s_cbranch_scc1 .Lloop
  ST 26, s20
  // Forward branch over a store: out[27] keeps its old value.
  s_cmp_eq_u32 s12, s12
  s_cbranch_scc0 .Lskip
  s_branch .Lskip
  ST 27, s12
.Lskip:
  s_add_i32 s20, s14, s15
  ST 28, s20
  s_sub_i32 s20, s14, s15
  ST 29, s20
  // s_lshl2_add_u32: (a << 2) + b with the carry out (a's shifted-out bits count) in SCC.
  s_lshl2_add_u32 s20, s12, s13
  s_cselect_b32 s21, 1, 0
  ST 30, s20
  ST 31, s21
  s_waitcnt vmcnt(0)
  s_endpgm
KERNEL_END scalar_ops
