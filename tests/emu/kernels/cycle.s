// Loops for the cycle model's own test (emu_unit_test, test_cycle_model): two waves (128
// work-items) run the same loop of 8 trips; the model's MFMA-busy fraction is known in advance.
.include "emu_kernel.inc"
// Two 8-pass MFMAs (64 pipe cycles) and 3 scalar instructions per trip and wave: the two waves
// keep the one matrix pipe busy all the time.
KERNEL_BEGIN cycle_mfma_bound
  s_mov_b32 s10, 8
.Lcycle_mfma_bound_loop:
  v_mfma_f32_32x32x16_bf16 v[0:15], v[32:35], v[36:39], v[0:15]
  v_mfma_f32_32x32x16_bf16 v[16:31], v[32:35], v[36:39], v[16:31]
  s_sub_u32 s10, s10, 1
  s_cmp_lg_u32 s10, 0
  s_cbranch_scc1 .Lcycle_mfma_bound_loop
  s_nop 15
  s_endpgm
KERNEL_END cycle_mfma_bound, 40
// One 8-pass MFMA (32 cycles) and 128 idle cycles (8 x s_nop 15) per trip and wave: a trip takes
// 1 + 128 + 3 = 132 cycles, and the two waves' MFMAs fill 64 of them (48%).
KERNEL_BEGIN cycle_nop_bound
  s_mov_b32 s10, 8
.Lcycle_nop_bound_loop:
  v_mfma_f32_32x32x16_bf16 v[0:15], v[32:35], v[36:39], v[0:15]
  s_nop 15
  s_nop 15
  s_nop 15
  s_nop 15
  s_nop 15
  s_nop 15
  s_nop 15
  s_nop 15
  s_sub_u32 s10, s10, 1
  s_cmp_lg_u32 s10, 0
  s_cbranch_scc1 .Lcycle_nop_bound_loop
  s_endpgm
KERNEL_END cycle_nop_bound, 40
// The VALU cost classes (cycle_model.hpp, docs/emulator.md "Cycle model costs"): per trip and
// wave one 8-pass MFMA (32 cycles) and VALU work of 4 x 4 (v_add_f32) + 2 x 16 (v_exp_f32) +
// 2 x 4 (v_cvt_u32_f32) + 2 x 4 (v_pk_fma_f32) = 64 cycles. The two waves share the VALU pipe:
// 128 cycles per trip, of which the matrix pipe is busy 64.
KERNEL_BEGIN cycle_valu_classes
  s_mov_b32 s10, 8
.Lcycle_valu_classes_loop:
  v_mfma_f32_32x32x16_bf16 v[0:15], v[32:35], v[36:39], v[0:15]
  v_add_f32 v50, v50, v51
  v_add_f32 v50, v50, v51
  v_add_f32 v50, v50, v51
  v_add_f32 v50, v50, v51
  v_exp_f32 v40, v40
  v_exp_f32 v40, v40
  v_cvt_u32_f32 v41, v42
  v_cvt_u32_f32 v41, v42
  v_pk_fma_f32 v[44:45], v[44:45], v[46:47], v[48:49]
  v_pk_fma_f32 v[52:53], v[52:53], v[46:47], v[48:49]
  s_sub_u32 s10, s10, 1
  s_cmp_lg_u32 s10, 0
  s_cbranch_scc1 .Lcycle_valu_classes_loop
  s_endpgm
KERNEL_END cycle_valu_classes, 56
// The packed-fp32 co-execution hold: each wave issues an 8-pass MFMA (16-byte A) and at once two
// v_pk_fma_f32, which may not issue before 8 + 2 + 1 passes (44 cycles) after that wave's MFMA.
// Held per wave, the other wave's MFMA fills the pipe meanwhile (busy ~100%); held for the whole
// SIMD, the pipe idles while the packed instructions wait.
KERNEL_BEGIN cycle_packed_hold
  s_mov_b32 s10, 8
.Lcycle_packed_hold_loop:
  v_mfma_f32_32x32x16_bf16 v[0:15], v[32:35], v[36:39], v[0:15]
  v_pk_fma_f32 v[44:45], v[44:45], v[46:47], v[48:49]
  v_pk_fma_f32 v[52:53], v[52:53], v[46:47], v[48:49]
  s_sub_u32 s10, s10, 1
  s_cmp_lg_u32 s10, 0
  s_cbranch_scc1 .Lcycle_packed_hold_loop
  s_endpgm
KERNEL_END cycle_packed_hold, 56
