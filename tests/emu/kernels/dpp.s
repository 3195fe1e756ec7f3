// DPP lane controls on VALU operations. Kernarg: out (u32[64 x 20]), in (u32[64]). Result k of
// lane l goes to out[64 k + l]; before each DPP instruction v3 holds 0xdead0000 + lane, the value
// lanes that are not written keep.
.include "emu_kernel.inc"
.macro ST k, vreg
  v_add_u32 v30, 256*\k, v1
  global_store_dword v30, \vreg, s[4:5]
.endm
.macro OLD
  v_or_b32 v3, 0xdead0000, v20
  s_nop 1                           // DPP reads v3 as its old value: 2 wait states
.endm
.macro CASE k, op:vararg
  OLD
  \op
  ST \k, v3
.endm
.macro PROLOGUE
  s_load_dwordx4 s[4:7], s[0:1], 0x0
  v_and_b32 v20, 63, v0             // lane
  v_lshlrev_b32 v1, 2, v20
  s_waitcnt lgkmcnt(0)
  global_load_dword v2, v1, s[6:7]
  s_waitcnt vmcnt(0)
.endm

KERNEL_BEGIN dpp_ops
  PROLOGUE
  v_and_b32 v6, 0xffff, v2
  v_cvt_f32_u32 v4, v6              // a float per lane
  v_cvt_f32_u32 v5, v20
  CASE 0, v_mov_b32_dpp v3, v2 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf
  CASE 1, v_mov_b32_dpp v3, v2 row_shl:1
  CASE 2, v_mov_b32_dpp v3, v2 row_shr:3 bound_ctrl:0
  CASE 3, v_mov_b32_dpp v3, v2 row_ror:4
  CASE 4, v_mov_b32_dpp v3, v2 row_mirror
  CASE 5, v_mov_b32_dpp v3, v2 row_half_mirror
  CASE 6, v_mov_b32_dpp v3, v2 row_bcast:15 row_mask:0xa
  CASE 7, v_mov_b32_dpp v3, v2 row_bcast:31 row_mask:0xc
  CASE 8, v_mov_b32_dpp v3, v2 wave_shl:1
  CASE 9, v_mov_b32_dpp v3, v2 wave_shr:1
  CASE 10, v_mov_b32_dpp v3, v2 wave_rol:1
  CASE 11, v_mov_b32_dpp v3, v2 wave_ror:1
  CASE 12, v_mov_b32_dpp v3, v2 row_newbcast:5
  CASE 13, v_add_f32_dpp v3, -v4, v5 row_shr:1 bank_mask:0x5
  // Even lanes only: a source lane that is inactive is out of range.
  s_mov_b64 s[10:11], exec
  s_mov_b32 s12, 0x55555555
  s_mov_b32 s13, 0x55555555
  OLD
  s_mov_b64 exec, s[12:13]
  v_mov_b32_dpp v3, v2 quad_perm:[1,1,0,0]
  s_mov_b64 exec, s[10:11]
  ST 14, v3
  OLD
  s_mov_b64 exec, s[12:13]
  v_mov_b32_dpp v3, v2 quad_perm:[1,1,0,0] bound_ctrl:0
  s_mov_b64 exec, s[10:11]
  ST 15, v3
  CASE 16, v_max_u32_dpp v3, v2, v20 row_shl:15 row_mask:0x3 bound_ctrl:0
  s_waitcnt vmcnt(0)
  s_endpgm
KERNEL_END dpp_ops, 40

// A VALU result read by DPP one instruction later (2 wait states required).
KERNEL_BEGIN fault_dpp_hazard
  PROLOGUE
  v_mov_b32 v3, 0
  s_nop 1
  v_add_u32 v4, 1, v2
  v_mov_b32_dpp v3, v4 row_shr:1
  ST 0, v3
  s_endpgm
KERNEL_END fault_dpp_hazard, 40
KERNEL_BEGIN ok_dpp_hazard
  PROLOGUE
  v_mov_b32 v3, 0
  v_add_u32 v4, 1, v2
  s_nop 1
  v_mov_b32_dpp v3, v4 row_shr:1
  ST 0, v3
  s_endpgm
KERNEL_END ok_dpp_hazard, 40
// The destination (DPP's old value) written right before.
KERNEL_BEGIN fault_dpp_old_hazard
  PROLOGUE
  s_nop 1
  v_mov_b32 v3, 0
  v_mov_b32_dpp v3, v2 row_shr:1
  ST 0, v3
  s_endpgm
KERNEL_END fault_dpp_old_hazard, 40
