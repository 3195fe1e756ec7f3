// Kernels the emulator must reject (and their corrected twins, which must pass).
// Kernarg: out (64 x 16 x u32), in (64 x 16 x u32).
.include "emu_kernel.inc"
.macro PROLOGUE
  s_load_dwordx4 s[4:7], s[0:1], 0x0
  v_lshlrev_b32 v1, 6, v0
  s_waitcnt lgkmcnt(0)
  global_load_dwordx4 v[32:35], v1, s[6:7]
  global_load_dwordx4 v[36:39], v1, s[6:7] offset:16
  s_waitcnt vmcnt(0)
.endm

// MFMA result read by a VALU too early (32x32x16 bf16: 8 passes, gfx950 needs 12 wait states).
KERNEL_BEGIN fault_mfma_read
  PROLOGUE
  v_mfma_f32_32x32x16_bf16 v[16:31], v[32:35], v[36:39], 0
  s_nop 7
  s_nop 2
  v_mov_b32 v2, v16
  global_store_dword v1, v2, s[4:5]
  s_endpgm
KERNEL_END fault_mfma_read, 40
KERNEL_BEGIN ok_mfma_read
  PROLOGUE
  v_mfma_f32_32x32x16_bf16 v[16:31], v[32:35], v[36:39], 0
  s_nop 7
  s_nop 3
  v_mov_b32 v2, v16
  global_store_dword v1, v2, s[4:5]
  s_endpgm
KERNEL_END ok_mfma_read, 40
// MFMA inside a divergent `if` (lanes 0..39 active): what the matrix unit does with a partial
// EXEC is undocumented, so the strict default rejects it; the twin restores EXEC first.
KERNEL_BEGIN fault_mfma_partial_exec
  PROLOGUE
  v_cmp_gt_u32_e32 vcc, 40, v0
  s_and_saveexec_b64 s[8:9], vcc
  s_cbranch_execz .Lfault_mfma_partial_exec_join
  v_mfma_f32_32x32x16_bf16 v[16:31], v[32:35], v[36:39], 0
  s_nop 15
.Lfault_mfma_partial_exec_join:
  s_or_b64 exec, exec, s[8:9]
  s_endpgm
KERNEL_END fault_mfma_partial_exec, 40
KERNEL_BEGIN ok_mfma_full_exec
  PROLOGUE
  v_cmp_gt_u32_e32 vcc, 40, v0
  s_and_saveexec_b64 s[8:9], vcc
  s_or_b64 exec, exec, s[8:9]
  v_mfma_f32_32x32x16_bf16 v[16:31], v[32:35], v[36:39], 0
  s_nop 15
  s_endpgm
KERNEL_END ok_mfma_full_exec, 40
// VALU write feeding an MFMA operand with one wait state (2 required).
KERNEL_BEGIN fault_valu_to_mfma
  PROLOGUE
  v_mov_b32 v32, 0
  s_nop 0
  v_mfma_f32_32x32x16_bf16 v[16:31], v[32:35], v[36:39], 0
  s_nop 15
  s_endpgm
KERNEL_END fault_valu_to_mfma, 40
// MFMA result as the next MFMA's A operand too early.
KERNEL_BEGIN fault_mfma_to_mfma
  PROLOGUE
  v_mfma_f32_32x32x16_bf16 v[16:31], v[32:35], v[36:39], 0
  s_nop 3
  v_mfma_f32_32x32x16_bf16 v[16:31], v[16:19], v[36:39], 0
  s_nop 15
  s_endpgm
KERNEL_END fault_mfma_to_mfma, 40
// Back-to-back accumulation into the same registers is allowed.
KERNEL_BEGIN ok_mfma_chain
  PROLOGUE
  v_mfma_f32_32x32x16_bf16 v[16:31], v[32:35], v[36:39], 0
  v_mfma_f32_32x32x16_bf16 v[16:31], v[32:35], v[36:39], v[16:31]
  s_nop 15
  s_endpgm
KERNEL_END ok_mfma_chain, 40
// A global load's result used before s_waitcnt vmcnt.
KERNEL_BEGIN fault_vmcnt
  s_load_dwordx4 s[4:7], s[0:1], 0x0
  v_lshlrev_b32 v1, 2, v0
  s_waitcnt lgkmcnt(0)
  global_load_dword v2, v1, s[6:7]
  global_load_dword v3, v1, s[6:7] offset:256
  s_waitcnt vmcnt(1)
  v_add_u32 v4, v2, v3
  global_store_dword v1, v4, s[4:5]
  s_endpgm
KERNEL_END fault_vmcnt
// vmcnt(1) covers the older load only: this reads just that one.
KERNEL_BEGIN ok_vmcnt
  s_load_dwordx4 s[4:7], s[0:1], 0x0
  v_lshlrev_b32 v1, 2, v0
  s_waitcnt lgkmcnt(0)
  global_load_dword v2, v1, s[6:7]
  global_load_dword v3, v1, s[6:7] offset:256
  s_waitcnt vmcnt(1)
  v_add_u32 v4, v2, v2
  s_waitcnt vmcnt(0)
  v_add_u32 v4, v4, v3
  global_store_dword v1, v4, s[4:5]
  s_endpgm
KERNEL_END ok_vmcnt
// A scalar load's result used with a non-zero lgkmcnt while an LDS read is also outstanding
// (scalar loads complete out of order: only lgkmcnt(0) covers them).
KERNEL_BEGIN fault_lgkmcnt
  s_load_dwordx4 s[4:7], s[0:1], 0x0
  v_mov_b32 v2, 0
  ds_read_b32 v3, v2
  s_waitcnt lgkmcnt(1)
  v_lshlrev_b32 v1, 2, v0
  global_store_dword v1, v1, s[4:5]
  s_endpgm
KERNEL_END fault_lgkmcnt, 32, 0, 64
// Two waves: wave 0 writes LDS, wave 1 reads it without a barrier.
KERNEL_BEGIN fault_barrier
  s_load_dwordx4 s[4:7], s[0:1], 0x0
  v_and_b32 v1, 63, v0
  v_lshlrev_b32 v1, 2, v1
  v_cmp_gt_u32_e32 vcc, 64, v0
  s_and_saveexec_b64 s[10:11], vcc
  ds_write_b32 v1, v0
  s_waitcnt lgkmcnt(0)
  s_andn2_saveexec_b64 s[10:11], s[10:11]
  ds_read_b32 v2, v1
  s_waitcnt lgkmcnt(0)
  s_or_b64 exec, exec, s[10:11]
  s_waitcnt lgkmcnt(0)
  v_lshlrev_b32 v3, 2, v0
  global_store_dword v3, v2, s[4:5]
  s_endpgm
KERNEL_END fault_barrier, 32, 0, 256
KERNEL_BEGIN ok_barrier
  s_load_dwordx4 s[4:7], s[0:1], 0x0
  v_and_b32 v1, 63, v0
  v_lshlrev_b32 v1, 2, v1
  v_mov_b32 v2, 0
  v_cmp_gt_u32_e32 vcc, 64, v0
  s_and_saveexec_b64 s[10:11], vcc
  ds_write_b32 v1, v0
  s_or_b64 exec, exec, s[10:11]
  s_waitcnt lgkmcnt(0)
  s_barrier
  v_cmp_le_u32_e32 vcc, 64, v0
  s_and_saveexec_b64 s[10:11], vcc
  ds_read_b32 v2, v1
  s_waitcnt lgkmcnt(0)
  s_or_b64 exec, exec, s[10:11]
  v_lshlrev_b32 v3, 2, v0
  global_store_dword v3, v2, s[4:5]
  s_waitcnt vmcnt(0)
  s_endpgm
KERNEL_END ok_barrier, 32, 0, 256
// The barrier is there but the LDS write was not waited for before it.
KERNEL_BEGIN fault_barrier_nowait
  s_load_dwordx4 s[4:7], s[0:1], 0x0
  v_and_b32 v1, 63, v0
  v_lshlrev_b32 v1, 2, v1
  v_mov_b32 v2, 0
  v_cmp_gt_u32_e32 vcc, 64, v0
  s_and_saveexec_b64 s[10:11], vcc
  ds_write_b32 v1, v0
  s_or_b64 exec, exec, s[10:11]
  s_barrier
  v_cmp_le_u32_e32 vcc, 64, v0
  s_and_saveexec_b64 s[10:11], vcc
  ds_read_b32 v2, v1
  s_waitcnt lgkmcnt(0)
  s_or_b64 exec, exec, s[10:11]
  s_waitcnt lgkmcnt(0)
  v_lshlrev_b32 v3, 2, v0
  global_store_dword v3, v2, s[4:5]
  s_endpgm
KERNEL_END fault_barrier_nowait, 32, 0, 256
// Out of bounds: a global store one element past the buffer; an LDS read past the allocation.
KERNEL_BEGIN fault_oob_global
  s_load_dwordx4 s[4:7], s[0:1], 0x0
  v_lshlrev_b32 v1, 2, v0
  s_waitcnt lgkmcnt(0)
  global_store_dword v1, v1, s[4:5] offset:4
  s_endpgm
KERNEL_END fault_oob_global
KERNEL_BEGIN fault_oob_lds
  v_lshlrev_b32 v1, 2, v0
  ds_read_b32 v2, v1 offset:16
  s_waitcnt lgkmcnt(0)
  s_endpgm
KERNEL_END fault_oob_lds, 32, 0, 256
// An instruction the emulator does not implement.
KERNEL_BEGIN fault_unknown
  v_sin_f32 v1, v0
  s_endpgm
KERNEL_END fault_unknown
// A VGPR beyond the descriptor's allocation.
KERNEL_BEGIN fault_vgpr_range
  v_mov_b32 v40, 0
  s_endpgm
KERNEL_END fault_vgpr_range, 32
