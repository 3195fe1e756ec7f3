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
