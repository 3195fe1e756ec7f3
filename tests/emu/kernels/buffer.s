// MUBUF buffer loads and stores through a raw V# (stride 0). Kernarg: out (u32[64 x 32], plus
// store areas at byte 0x8000, 0x9000, 0xa000, 0xb000), in (u32[256]), params (u32[4]: num_records
// of `in`, num_records of each store area). Result k of lane l goes to out[64 k + l].
.include "emu_kernel.inc"
.macro ST k, vreg
  v_add_u32 v30, 256*\k, v1
  global_store_dword v30, \vreg, s[4:5]
.endm
// V# in s[\first:\first+3] for the buffer at s[\lo:\lo+1] + \add bytes, num_records in s\n.
.macro VSHARP first, lo, add, n
  s_add_u32 s\first, s\lo, \add
  s_addc_u32 s[\first+1], s[\lo+1], 0
  s_and_b32 s[\first+1], s[\first+1], 0xffff     // stride 0, no swizzle
  s_mov_b32 s[\first+2], s\n
  s_mov_b32 s[\first+3], 0x00020000              // data_format 4 (32), as CK builds raw buffers
.endm
.macro PROLOGUE
  s_load_dwordx4 s[4:7], s[0:1], 0x0
  s_load_dwordx2 s[8:9], s[0:1], 0x10
  v_and_b32 v20, 63, v0             // lane
  v_lshlrev_b32 v1, 2, v20          // lane * 4
  v_lshlrev_b32 v2, 4, v20          // lane * 16
  v_lshlrev_b32 v10, 3, v20         // lane * 8
  v_mul_u32_u24 v11, 12, v20        // lane * 12
  v_lshlrev_b32 v12, 1, v20         // lane * 2
  s_waitcnt lgkmcnt(0)
  s_load_dwordx2 s[12:13], s[8:9], 0x0
  s_waitcnt lgkmcnt(0)
  VSHARP 16, 6, 0, 12               // `in`
.endm

KERNEL_BEGIN buffer_ops
  PROLOGUE
  VSHARP 20, 4, 0x8000, 13          // store area A
  VSHARP 24, 4, 0x9000, 13          // B
  VSHARP 28, 4, 0xa000, 13          // C
  VSHARP 32, 4, 0xb000, 13          // D
  s_mov_b32 s36, 8
  s_mov_b32 s37, 16
  buffer_load_dword v3, v1, s[16:19], 0 offen
  buffer_load_dword v4, v1, s[16:19], 0 offen offset:512
  buffer_load_dwordx4 v[40:43], v2, s[16:19], 0 offen
  buffer_load_ubyte v5, v1, s[16:19], 0 offen offset:1
  buffer_load_ushort v6, v1, s[16:19], 0 offen offset:2
  buffer_load_dword v7, v1, s[16:19], s36 offen
  v_mov_b32 v8, 1000                // an index: adds nothing with stride 0
  v_mov_b32 v9, v1
  s_nop 1
  buffer_load_dword v13, v[8:9], s[16:19], 0 idxen offen
  buffer_load_dword v14, off, s[16:19], s37 offset:4
  buffer_load_dwordx2 v[44:45], v10, s[16:19], 0 offen
  buffer_load_dwordx3 v[46:48], v11, s[16:19], 0 offen
  s_waitcnt vmcnt(0)
  ST 0, v3
  ST 1, v4
  ST 2, v40
  ST 3, v41
  ST 4, v42
  ST 5, v43
  ST 6, v5
  ST 7, v6
  ST 8, v7
  ST 9, v13
  ST 10, v14
  ST 11, v44
  ST 12, v45
  ST 13, v46
  ST 14, v47
  ST 15, v48
  // Stores: the data is lane + 1000 + 100 k in component k.
  v_add_u32 v50, 1000, v20
  v_add_u32 v51, 1100, v20
  v_add_u32 v52, 1200, v20
  v_add_u32 v53, 1300, v20
  buffer_store_dword v50, v1, s[20:23], 0 offen
  buffer_store_dwordx4 v[50:53], v2, s[24:27], 0 offen
  buffer_store_short v50, v12, s[28:31], 0 offen
  buffer_store_byte v50, v20, s[32:35], 0 offen offset:3
  buffer_store_dwordx2 v[50:51], v10, s[20:23], 0 offen offset:256
  s_waitcnt vmcnt(0)
  s_endpgm
KERNEL_END buffer_ops, 64

// Reads a buffer load's destination before its s_waitcnt vmcnt.
KERNEL_BEGIN fault_buffer_vmcnt
  PROLOGUE
  buffer_load_dword v3, v1, s[16:19], 0 offen
  v_add_u32 v4, 1, v3
  s_endpgm
KERNEL_END fault_buffer_vmcnt, 64

// soffset 64 and lane offsets up to 252 against num_records 300: lanes 59..63 are in range without
// soffset and out of range with it, the unconfirmed case.
KERNEL_BEGIN fault_buffer_soffset
  PROLOGUE
  s_mov_b32 s36, 64
  buffer_load_dword v3, v1, s[16:19], s36 offen
  s_waitcnt vmcnt(0)
  s_endpgm
KERNEL_END fault_buffer_soffset, 64

// A V# whose num_records reaches past the registered buffer: in range for the V#, out of bounds
// for memory.
KERNEL_BEGIN fault_buffer_memory
  PROLOGUE
  s_mov_b32 s18, 0x100000
  s_mov_b32 s36, 0x20000
  buffer_load_dword v3, v1, s[16:19], s36 offen
  s_waitcnt vmcnt(0)
  s_endpgm
KERNEL_END fault_buffer_memory, 64

// soffset written by a VALU (v_readfirstlane) right before the buffer load: 5 wait states needed.
KERNEL_BEGIN fault_buffer_sgpr_hazard
  PROLOGUE
  v_readfirstlane_b32 s36, v1
  s_nop 3
  buffer_load_dword v3, v1, s[16:19], s36 offen
  s_waitcnt vmcnt(0)
  s_endpgm
KERNEL_END fault_buffer_sgpr_hazard, 64
KERNEL_BEGIN ok_buffer_sgpr_hazard
  PROLOGUE
  v_readfirstlane_b32 s36, v1
  s_nop 4
  buffer_load_dword v3, v1, s[16:19], s36 offen
  s_waitcnt vmcnt(0)
  s_endpgm
KERNEL_END ok_buffer_sgpr_hazard, 64
