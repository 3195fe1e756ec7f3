// Direct-to-LDS loads (MUBUF ... lds, global_load_lds_*). Two waves; wave w fills LDS bytes
// [4096 w, 4096 w + 4096), waits, meets the other wave at a barrier and copies the other wave's
// region to out[1024 w ...]. Kernarg: out (u32[2048]), in (u32[1024]), params (u32[2]:
// num_records of the first V#, 0). The 12/16-byte forms are gfx950 only.
.include "emu_kernel.inc"
.macro VSHARP first, lo, n
  s_mov_b32 s\first, s\lo
  s_and_b32 s[\first+1], s[\lo+1], 0xffff
  s_mov_b32 s[\first+2], \n
  s_mov_b32 s[\first+3], 0x00020000
.endm
.macro PROLOGUE
  s_load_dwordx4 s[4:7], s[0:1], 0x0
  s_load_dwordx2 s[8:9], s[0:1], 0x10
  v_and_b32 v20, 63, v0             // lane
  v_lshrrev_b32 v21, 6, v0          // wave
  v_lshlrev_b32 v1, 2, v20          // lane * 4
  v_lshlrev_b32 v2, 4, v20          // lane * 16
  v_mul_u32_u24 v3, 12, v20         // lane * 12
  v_readfirstlane_b32 s16, v21
  s_lshl_b32 s17, s16, 12           // this wave's LDS region
  s_waitcnt lgkmcnt(0)
  s_load_dword s12, s[8:9], 0x0
  s_waitcnt lgkmcnt(0)
  VSHARP 20, 6, s12                 // `in`, num_records from params
  VSHARP 24, 6, 4096                // all of `in`
  v_add_u32 v4, s17, v1             // region + lane * 4
.endm

KERNEL_BEGIN lds_dma_ops
  PROLOGUE
  // Bytes [0, 512) of the region start as 0xffffffff: an out-of-range lane writes zeros over them.
  v_mov_b32 v5, -1
  ds_write_b32 v4, v5
  ds_write_b32 v4, v5 offset:256
  s_waitcnt lgkmcnt(0)
  s_mov_b32 m0, s17
  s_nop 0                           // SALU write of m0 -> LDS DMA: 1 wait state
  buffer_load_dword v1, s[20:23], 0 offen offset:16 lds
  s_add_u32 m0, s17, 1536
  s_nop 0
  global_load_lds_dword v1, s[6:7] offset:8
.ifdef GFX950
  s_add_u32 m0, s17, 512
  s_nop 0
  global_load_lds_dwordx4 v2, s[6:7]
  s_add_u32 m0, s17, 2048
  s_nop 0
  buffer_load_dwordx3 v3, s[24:27], 0 offen lds
.endif
  s_waitcnt vmcnt(0)
  s_barrier
  // Copy the other wave's region.
  s_xor_b32 s18, s17, 0x1000
  v_add_u32 v6, s18, v1
  v_lshlrev_b32 v7, 12, v21
  v_add_u32 v7, v7, v1              // out byte offset: 4096 w + 4 lane
  s_mov_b32 s19, 0
.Lcopy:
  ds_read_b32 v8, v6
  s_waitcnt lgkmcnt(0)
  global_store_dword v7, v8, s[4:5]
  v_add_u32 v6, 256, v6
  v_add_u32 v7, 256, v7
  s_add_u32 s19, s19, 1
  s_cmp_lt_u32 s19, 16
  s_cbranch_scc1 .Lcopy
  s_waitcnt vmcnt(0)
  s_endpgm
KERNEL_END lds_dma_ops, 32, 0, 8192

// Reads the loaded LDS bytes before s_waitcnt vmcnt (same wave).
KERNEL_BEGIN fault_dma_vmcnt
  PROLOGUE
  s_mov_b32 m0, s17
  s_nop 0
  buffer_load_dword v1, s[20:23], 0 offen lds
  s_waitcnt lgkmcnt(0)
  ds_read_b32 v8, v4
  s_waitcnt lgkmcnt(0)
  s_endpgm
KERNEL_END fault_dma_vmcnt, 32, 0, 8192

// Waits for lgkmcnt only before the barrier; the other wave then reads the loaded bytes.
KERNEL_BEGIN fault_dma_barrier
  PROLOGUE
  s_mov_b32 m0, s17
  s_nop 0
  global_load_lds_dword v1, s[6:7]
  s_waitcnt lgkmcnt(0)
  s_barrier
  s_xor_b32 s18, s17, 0x1000
  v_add_u32 v6, s18, v1
  ds_read_b32 v8, v6
  s_waitcnt vmcnt(0) lgkmcnt(0)
  s_endpgm
KERNEL_END fault_dma_barrier, 32, 0, 8192

// The load issued right after the SALU write of m0.
KERNEL_BEGIN fault_dma_m0
  PROLOGUE
  s_mov_b32 m0, s17
  global_load_lds_dword v1, s[6:7]
  s_waitcnt vmcnt(0)
  s_endpgm
KERNEL_END fault_dma_m0, 32, 0, 8192

// A DS write to bytes an outstanding direct-to-LDS load of the same wave writes.
KERNEL_BEGIN fault_dma_ds_write
  PROLOGUE
  s_mov_b32 m0, s17
  s_nop 0
  global_load_lds_dword v1, s[6:7]
  ds_write_b32 v4, v1
  s_waitcnt vmcnt(0) lgkmcnt(0)
  s_endpgm
KERNEL_END fault_dma_ds_write, 32, 0, 8192

// m0 past the end of LDS.
KERNEL_BEGIN fault_dma_lds_bounds
  PROLOGUE
  s_add_u32 m0, s17, 8000
  s_nop 0
  global_load_lds_dword v1, s[6:7]
  s_waitcnt vmcnt(0)
  s_endpgm
KERNEL_END fault_dma_lds_bounds, 32, 0, 8192
