// VALU per lane. Kernarg: out, a, b, c (each 64 x u32/f32). Result k of lane l goes to
// out[64 k + l].
.include "emu_kernel.inc"
.macro ST k, vreg
  v_add_u32 v10, 256*\k, v1
  global_store_dword v10, \vreg, s[4:5]
.endm
KERNEL_BEGIN vector_ops
  s_load_dwordx8 s[4:11], s[0:1], 0x0
  v_lshlrev_b32 v1, 2, v0
  s_waitcnt lgkmcnt(0)
  global_load_dword v2, v1, s[6:7]
  global_load_dword v3, v1, s[8:9]
  global_load_dword v4, v1, s[10:11]
  s_waitcnt vmcnt(0)
  v_add_f32 v5, v2, v3
  ST 0, v5
  v_mul_f32 v5, v2, v3
  ST 1, v5
  v_fma_f32 v5, v2, v3, v4
  ST 2, v5
  v_max_f32 v5, v2, v3
  ST 3, v5
  v_min_f32 v5, v2, v3
  ST 4, v5
  v_sub_f32 v5, v2, v3
  ST 5, v5
  v_exp_f32 v5, v2
  s_nop 0
  ST 6, v5
  v_ldexp_f32 v5, v2, 3
  ST 7, v5
  v_cvt_i32_f32 v5, v2
  ST 8, v5
  v_cvt_u32_f32 v5, v3
  ST 9, v5
  v_cvt_f32_i32 v5, v4
  ST 10, v5
  v_trunc_f32 v5, v2
  ST 11, v5
  v_floor_f32 v5, v2
  ST 12, v5
  v_mul_f32_e64 v5, -v2, |v3|
  ST 13, v5
  v_max3_f32 v5, v2, v3, v4
  ST 14, v5
  v_mov_b32 v5, v2
  v_fmac_f32 v5, v3, v4
  ST 15, v5
  v_pk_mul_f32 v[6:7], v[2:3], v[4:5] op_sel_hi:[1,0]
  ST 16, v6
  ST 17, v7
  v_pk_add_f32 v[6:7], v[2:3], v[2:3]
  ST 18, v6
  ST 19, v7
  // Integer.
  v_add_u32 v5, v2, v3
  ST 20, v5
  v_sub_u32 v5, v2, v3
  ST 21, v5
  v_mul_lo_u32 v5, v2, v3
  ST 22, v5
  v_mul_hi_u32 v5, v2, v3
  ST 23, v5
  v_add3_u32 v5, v2, v3, v4
  ST 24, v5
  v_lshl_add_u32 v5, v2, 3, v3
  ST 25, v5
  v_lshl_or_b32 v5, v2, 4, v3
  ST 26, v5
  v_and_or_b32 v5, v2, v3, v4
  ST 27, v5
  v_bfe_u32 v5, v2, 4, 8
  ST 28, v5
  v_bfe_i32 v5, v2, 4, 8
  ST 29, v5
  v_ashrrev_i32 v5, 5, v2
  ST 30, v5
  v_bitop3_b32 v5, v2, v3, v4 bitop3:0xec
  ST 31, v5
  v_bitop3_b16 v5, v2, v3, v4 bitop3:0x96
  ST 32, v5
  v_or_b32_sdwa v5, v2, v3 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:WORD_1 src1_sel:DWORD
  ST 33, v5
  v_cvt_i32_f32_sdwa v5, v2 dst_sel:BYTE_3 dst_unused:UNUSED_PAD src0_sel:DWORD
  ST 34, v5
  // Compare + cndmask, carries.
  v_cmp_lt_i32_e32 vcc, v2, v3
  s_nop 1                         // gfx940+: VALU write of VCC -> VALU read, 2 wait states
  v_cndmask_b32_e32 v5, v4, v2, vcc
  ST 35, v5
  v_cmp_gt_f32_e64 s[20:21], v2, v3
  s_nop 1                         // gfx940+: VALU write of an SGPR -> VALU read, 2 wait states
  v_cndmask_b32_e64 v5, 1, 2, s[20:21]
  ST 36, v5
  v_add_co_u32_e32 v5, vcc, v2, v3
  s_nop 1                         // gfx940+: VALU write of an SGPR or VCC -> VALU read, 2 wait states
  v_addc_co_u32_e32 v6, vcc, 0, v4, vcc
  ST 37, v5
  ST 38, v6
  v_sub_co_u32_e32 v5, vcc, v2, v3
  s_nop 1                         // gfx940+: VALU write of an SGPR or VCC -> VALU read, 2 wait states
  v_subb_co_u32_e64 v6, s[20:21], v4, 0, vcc
  ST 39, v5
  ST 40, v6
  v_mad_u64_u32 v[6:7], s[20:21], v2, v3, v[4:5]
  ST 41, v6
  ST 42, v7
  v_mov_b32 v5, 0
  v_lshl_add_u64 v[6:7], v[4:5], 2, v[2:3]
  ST 43, v6
  v_mul_lo_u16 v5, v2, v3
  ST 44, v5
  v_cvt_f32_u32 v5, v3
  ST 45, v5
  v_cmp_nge_f32_e64 s[20:21], v2, v3
  s_nop 1                         // gfx940+: VALU write of an SGPR or VCC -> VALU read, 2 wait states
  v_cndmask_b32_e64 v5, 0, 1, s[20:21]
  ST 46, v5
  v_rcp_f32 v5, v3
  s_nop 0
  ST 47, v5
  v_mov_b32 v5, 0x40490fdb
  v_div_scale_f32 v6, s[20:21], v3, v3, v2
  v_div_scale_f32 v7, vcc, v2, v3, v2
  v_rcp_f32 v8, v6
  s_nop 0
  v_fma_f32 v9, -v6, v8, 1.0
  v_fmac_f32 v8, v9, v8
  v_mul_f32 v9, v7, v8
  v_fma_f32 v11, -v6, v9, v7
  v_fmac_f32 v9, v11, v8
  v_fma_f32 v6, -v6, v9, v7
  s_nop 3
  v_div_fmas_f32 v6, v6, v8, v9
  v_div_fixup_f32 v5, v6, v3, v2
  ST 48, v5
  v_max3_u32 v5, v2, v3, v4
  ST 49, v5
  v_min3_u32 v5, v2, v3, v4
  ST 50, v5
  s_waitcnt vmcnt(0)
  s_endpgm
KERNEL_END vector_ops

// gfx950's NaN-propagating v_maximum3_f32 / v_minimum3_f32 against v_max3_f32 (NaN-dropping in
// IEEE mode). Kernarg: out, a, b, c as above; results 0..3.
KERNEL_BEGIN maximum3_ops
  s_load_dwordx8 s[4:11], s[0:1], 0x0
  v_lshlrev_b32 v1, 2, v0
  s_waitcnt lgkmcnt(0)
  global_load_dword v2, v1, s[6:7]
  global_load_dword v3, v1, s[8:9]
  global_load_dword v4, v1, s[10:11]
  s_waitcnt vmcnt(0)
  v_maximum3_f32 v5, v2, v3, v4
  ST 0, v5
  v_max3_f32 v5, v2, v3, v4
  ST 1, v5
  v_minimum3_f32 v5, v2, v3, v4
  ST 2, v5
  v_maximum3_f32 v5, v2, v3, v3
  ST 3, v5
  s_waitcnt vmcnt(0)
  s_endpgm
KERNEL_END maximum3_ops

// f64 (what compiled fp64 sums and divisions use: zyfa_quantize_fp8's K-smoothing means).
// Kernarg: out, a, b, c as above (f32, widened); results 0..12, each f64 as two dwords (low, high).
// The division is clang-22's own sequence for an fp64 a / b.
KERNEL_BEGIN f64_ops
  s_load_dwordx8 s[4:11], s[0:1], 0x0
  v_lshlrev_b32 v1, 2, v0
  s_waitcnt lgkmcnt(0)
  global_load_dword v2, v1, s[6:7]
  global_load_dword v3, v1, s[8:9]
  global_load_dword v4, v1, s[10:11]
  s_waitcnt vmcnt(0)
  v_cvt_f64_f32 v[6:7], v2
  v_cvt_f64_f32 v[8:9], v3
  v_cvt_f64_f32 v[12:13], v4
  v_add_f64 v[14:15], v[6:7], v[8:9]
  ST 0, v14
  ST 1, v15
  v_mul_f64 v[14:15], v[6:7], v[12:13]
  ST 2, v14
  ST 3, v15
  v_fma_f64 v[14:15], -v[6:7], v[8:9], v[12:13]
  ST 4, v14
  ST 5, v15
  v_div_scale_f64 v[16:17], s[12:13], v[8:9], v[8:9], v[6:7]
  v_rcp_f64 v[18:19], v[16:17]
  s_nop 0
  v_fma_f64 v[20:21], -v[16:17], v[18:19], 1.0
  v_fmac_f64 v[18:19], v[18:19], v[20:21]
  v_fma_f64 v[20:21], -v[16:17], v[18:19], 1.0
  v_fmac_f64 v[18:19], v[18:19], v[20:21]
  v_div_scale_f64 v[20:21], vcc, v[6:7], v[8:9], v[6:7]
  v_mul_f64 v[22:23], v[20:21], v[18:19]
  v_fma_f64 v[16:17], -v[16:17], v[22:23], v[20:21]
  s_nop 3
  v_div_fmas_f64 v[16:17], v[16:17], v[18:19], v[22:23]
  v_div_fixup_f64 v[14:15], v[16:17], v[8:9], v[6:7]
  ST 6, v14
  ST 7, v15
  v_cvt_f32_f64 v5, v[14:15]
  ST 8, v5
  v_cvt_f64_u32 v[14:15], v0
  ST 9, v14
  ST 10, v15
  v_ldexp_f64 v[14:15], v[6:7], -3
  ST 11, v14
  ST 12, v15
  s_waitcnt vmcnt(0)
  s_endpgm
KERNEL_END f64_ops
