// Scalar edge cases a hand-scheduled kernel emits. Kernarg: out (u32[128]). Two waves: wave 1
// ends at once; wave 0 then passes an s_barrier alone (a barrier counts the waves that have not
// ended), reads the first active lane under a partial EXEC, and sleeps / changes priority.
.include "emu_kernel.inc"
KERNEL_BEGIN edge_ops
  s_load_dwordx2 s[4:5], s[0:1], 0x0
  v_lshrrev_b32 v21, 6, v0
  s_nop 0                         // gfx940+: VALU write -> v_readfirstlane source, 1 wait state
  v_readfirstlane_b32 s16, v21
  s_cmp_eq_u32 s16, 0
  s_cbranch_scc1 .Lwave0
  s_endpgm
.Lwave0:
  s_setprio 3
  s_sleep 2
  s_barrier
  s_setprio 0
  v_and_b32 v20, 63, v0
  v_lshlrev_b32 v1, 2, v20
  v_add_u32 v2, 100, v20
  s_mov_b64 s[10:11], exec
  s_mov_b32 exec_lo, 0xfffffff0     // lanes 4.. active
  v_readfirstlane_b32 s12, v2
  s_mov_b64 exec, s[10:11]
  s_nop 0                         // gfx940+: VALU write of an SGPR -> VALU read, 2 wait states
  v_mov_b32 v3, s12
  s_waitcnt lgkmcnt(0)
  global_store_dword v1, v3, s[4:5]
  s_waitcnt vmcnt(0)
  s_endpgm
KERNEL_END edge_ops, 32
