// One kernel per MFMA form: lane l loads its A registers from a[8 l ..], B from b[8 l ..], the
// scale VGPRs from scales[2 l], C from c[16 l ..]; stores D to out[16 l ..]. The host builds the
// register images from matrices with the layouts of docs/emulator.md and checks D = C + A.B.
.include "emu_kernel.inc"
.macro LOAD_OPERANDS
  s_load_dwordx8 s[4:11], s[0:1], 0x0
  s_load_dwordx2 s[12:13], s[0:1], 0x20
  v_lshlrev_b32 v1, 5, v0
  v_lshlrev_b32 v2, 3, v0
  v_lshlrev_b32 v3, 6, v0
  s_waitcnt lgkmcnt(0)
  global_load_dwordx4 v[32:35], v1, s[6:7]
  global_load_dwordx4 v[36:39], v1, s[6:7] offset:16
  global_load_dwordx4 v[40:43], v1, s[8:9]
  global_load_dwordx4 v[44:47], v1, s[8:9] offset:16
  global_load_dwordx2 v[64:65], v2, s[10:11]
  global_load_dwordx4 v[48:51], v3, s[12:13]
  global_load_dwordx4 v[52:55], v3, s[12:13] offset:16
  global_load_dwordx4 v[56:59], v3, s[12:13] offset:32
  global_load_dwordx4 v[60:63], v3, s[12:13] offset:48
  s_waitcnt vmcnt(0)
  s_nop 1
.endm
.macro STORE_RESULT
  s_nop 15
  s_nop 7
  global_store_dwordx4 v3, v[48:51], s[4:5]
  global_store_dwordx4 v3, v[52:55], s[4:5] offset:16
  global_store_dwordx4 v3, v[56:59], s[4:5] offset:32
  global_store_dwordx4 v3, v[60:63], s[4:5] offset:48
  s_waitcnt vmcnt(0)
  s_endpgm
.endm
.ifdef GFX950
KERNEL_BEGIN mfma_32x32x16_bf16
  LOAD_OPERANDS
  v_mfma_f32_32x32x16_bf16 v[48:63], v[32:35], v[40:43], v[48:63]
  STORE_RESULT
KERNEL_END mfma_32x32x16_bf16, 72
KERNEL_BEGIN mfma_16x16x32_bf16
  LOAD_OPERANDS
  v_mfma_f32_16x16x32_bf16 v[48:51], v[32:35], v[40:43], v[48:51]
  STORE_RESULT
KERNEL_END mfma_16x16x32_bf16, 72
KERNEL_BEGIN mfma_scale_32x32x64_f8f6f4
  LOAD_OPERANDS
  v_mfma_scale_f32_32x32x64_f8f6f4 v[48:63], v[32:39], v[40:47], v[48:63], v64, v65 op_sel_hi:[0,0,0]
  STORE_RESULT
KERNEL_END mfma_scale_32x32x64_f8f6f4, 72
KERNEL_BEGIN mfma_scale_16x16x128_f8f6f4
  LOAD_OPERANDS
  v_mfma_scale_f32_16x16x128_f8f6f4 v[48:51], v[32:39], v[40:47], v[48:51], v64, v65 op_sel:[1,0,0] op_sel_hi:[0,1,0]
  STORE_RESULT
KERNEL_END mfma_scale_16x16x128_f8f6f4, 72
// The accumulator in AGPRs: D and C in a[0:15], results copied back with v_accvgpr_read.
KERNEL_BEGIN mfma_32x32x64_f8f6f4_agpr
  LOAD_OPERANDS
  .irp i, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
  v_accvgpr_write_b32 a\i, v[48+\i]
  .endr
  s_nop 1
  v_mfma_f32_32x32x64_f8f6f4 a[0:15], v[32:39], v[40:47], a[0:15]
  s_nop 15
  s_nop 7
  .irp i, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
  v_accvgpr_read_b32 v[48+\i], a\i
  .endr
  STORE_RESULT
KERNEL_END mfma_32x32x64_f8f6f4_agpr, 72, 16
KERNEL_BEGIN mfma_i32_32x32x32_i8
  LOAD_OPERANDS
  v_mfma_i32_32x32x32_i8 v[48:63], v[32:35], v[40:43], v[48:63]
  STORE_RESULT
KERNEL_END mfma_i32_32x32x32_i8, 72
KERNEL_BEGIN mfma_i32_16x16x64_i8
  LOAD_OPERANDS
  v_mfma_i32_16x16x64_i8 v[48:51], v[32:35], v[40:43], v[48:51]
  STORE_RESULT
KERNEL_END mfma_i32_16x16x64_i8, 72
.endif
KERNEL_BEGIN mfma_i32_32x32x16_i8
  LOAD_OPERANDS
  v_mfma_i32_32x32x16_i8 v[48:63], v[32:33], v[40:41], v[48:63]
  STORE_RESULT
KERNEL_END mfma_i32_32x32x16_i8, 72
KERNEL_BEGIN mfma_i32_16x16x32_i8
  LOAD_OPERANDS
  v_mfma_i32_16x16x32_i8 v[48:51], v[32:33], v[40:41], v[48:51]
  STORE_RESULT
KERNEL_END mfma_i32_16x16x32_i8, 72
KERNEL_BEGIN mfma_32x32x8bf16_1k
  LOAD_OPERANDS
  v_mfma_f32_32x32x8bf16_1k v[48:63], v[32:33], v[40:41], v[48:63]
  STORE_RESULT
KERNEL_END mfma_32x32x8bf16_1k, 72
KERNEL_BEGIN mfma_32x32x16_fp8_fp8
  LOAD_OPERANDS
  v_mfma_f32_32x32x16_fp8_fp8 v[48:63], v[32:33], v[40:41], v[48:63]
  STORE_RESULT
KERNEL_END mfma_32x32x16_fp8_fp8, 72
KERNEL_BEGIN mfma_16x16x32_fp8_fp8
  LOAD_OPERANDS
  v_mfma_f32_16x16x32_fp8_fp8 v[48:51], v[32:33], v[40:41], v[48:51]
  STORE_RESULT
KERNEL_END mfma_16x16x32_fp8_fp8, 72
