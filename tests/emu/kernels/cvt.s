// fp8 / bf8 conversions, and fp32 -> fp16 pairs. Kernarg: out (u32[64 x 13]), a, b (f32[64]), c (u32[64] of 8-bit codes),
// s (f32[64] scales). Result k of lane l goes to out[64 k + l].
.include "emu_kernel.inc"
.macro ST k, vreg
  v_add_u32 v30, 256*\k, v1
  global_store_dword v30, \vreg, s[4:5]
.endm
.macro PRESET
  v_mov_b32 v3, 0x12345678
.endm
KERNEL_BEGIN cvt_ops
  s_load_dwordx8 s[4:11], s[0:1], 0x0
  s_load_dwordx2 s[12:13], s[0:1], 0x20
  v_and_b32 v20, 63, v0
  v_lshlrev_b32 v1, 2, v20
  s_waitcnt lgkmcnt(0)
  global_load_dword v10, v1, s[6:7]     // a
  global_load_dword v11, v1, s[8:9]     // b
  global_load_dword v12, v1, s[10:11]   // c
  global_load_dword v13, v1, s[12:13]   // s
  s_waitcnt vmcnt(0)
  PRESET
  v_cvt_pk_fp8_f32 v3, v10, v11
  ST 0, v3
  PRESET
  v_cvt_pk_fp8_f32 v3, v10, v11 op_sel:[0,0,1]
  ST 1, v3
  PRESET
  v_cvt_pk_bf8_f32 v3, v10, v11
  ST 2, v3
  PRESET
  v_cvt_pk_fp8_f32 v3, -v10, |v11| op_sel:[0,0,1]
  ST 3, v3
  v_cvt_f32_fp8 v3, v12
  ST 4, v3
  v_cvt_f32_fp8_sdwa v3, v12 src0_sel:BYTE_2
  ST 5, v3
  v_cvt_pk_f32_fp8_sdwa v[6:7], v12 src0_sel:WORD_1
  ST 6, v6
  ST 7, v7
  v_cvt_f32_bf8 v3, v12
  ST 8, v3
.ifdef GFX950
  PRESET
  v_cvt_scalef32_pk_fp8_f32 v3, v10, v11, v13
  ST 9, v3
  PRESET
  v_cvt_scalef32_pk_fp8_f32 v3, v10, v11, v13 op_sel:[0,0,0,1]
  ST 10, v3
  v_cvt_pk_f16_f32 v3, v10, v11
  ST 12, v3
.endif
  v_cvt_pk_f32_bf8 v[6:7], v12
  ST 11, v7
  s_waitcnt vmcnt(0)
  s_endpgm
KERNEL_END cvt_ops, 32
