// Lane operations, EXEC masking, global/LDS memory. Kernarg: out, a (64 x u32). Result k of lane
// l goes to out[64 k + l]. Two waves (128 work-items) for the LDS exchange; wave w writes
// out + 64*64*4*w... (each wave offsets its output by 32 KiB).
.include "emu_kernel.inc"
.macro ST k, vreg
  v_add_u32 v10, 256*\k, v1
  global_store_dword v10, \vreg, s[4:5]
.endm
KERNEL_BEGIN lanes_memory
  s_load_dwordx4 s[4:7], s[0:1], 0x0
  v_and_b32 v20, 63, v0             // lane
  v_lshrrev_b32 v21, 6, v0          // wave
  v_lshlrev_b32 v1, 2, v20
  v_readfirstlane_b32 s16, v21
  s_lshl_b32 s17, s16, 15
  s_waitcnt lgkmcnt(0)
  s_add_u32 s4, s4, s17
  s_addc_u32 s5, s5, 0
  global_load_dword v2, v1, s[6:7]
  // LDS[512] = INT_MAX, written by lane 0 of wave 0 before the first barrier.
  v_mov_b32 v14, 0
  v_mov_b32 v19, 0x7fffffff
  v_cmp_eq_u32_e32 vcc, 0, v0
  s_and_saveexec_b64 s[22:23], vcc
  ds_write_b32 v14, v19 offset:512
  s_or_b64 exec, exec, s[22:23]
  s_waitcnt vmcnt(0) lgkmcnt(0)
  s_barrier
  v_readlane_b32 s20, v2, 5
  s_nop 1                         // gfx940+: VALU write of an SGPR -> VALU read, 2 wait states
  v_mov_b32 v5, s20
  ST 0, v5
  v_mov_b32 v5, 0
  v_writelane_b32 v5, s20, 9
  ST 1, v5
  v_mbcnt_lo_u32_b32 v5, -1, 0
  v_mbcnt_hi_u32_b32 v5, -1, v5
  ST 2, v5
  // bpermute: lane l reads lane l ^ 32.
  v_xor_b32 v6, 32, v20
  v_lshlrev_b32 v6, 2, v6
  ds_bpermute_b32 v5, v6, v2
  s_waitcnt lgkmcnt(0)
  ST 3, v5
  // EXEC: only odd lanes write 7 (the rest keep 0).
  v_mov_b32 v5, 0
  v_and_b32 v6, 1, v20
  v_cmp_eq_u32_e32 vcc, 1, v6
  s_and_saveexec_b64 s[22:23], vcc
  s_cbranch_execz .Lno_odd
  v_mov_b32 v5, 7
.Lno_odd:
  s_or_b64 exec, exec, s[22:23]
  ST 4, v5
  // permlane32 swap: v7 = lane, v8 = lane + 100.
  v_mov_b32 v7, v20
  v_add_u32 v8, 100, v20
  s_nop 1
  v_permlane32_swap_b32 v7, v8
  ST 5, v7
  ST 6, v8
  // Global sub-dword loads and d16 stores.
  global_load_ubyte v5, v1, s[6:7] offset:1
  global_load_sshort v6, v1, s[6:7] offset:2
  s_waitcnt vmcnt(0)
  ST 7, v5
  ST 8, v6
  v_mov_b32 v9, 0x12345678
  global_load_short_d16_hi v9, v1, s[6:7]
  s_waitcnt vmcnt(0)
  ST 9, v9
  // LDS: each wave writes its a[lane] * (wave + 1) at [wave][lane]; after the barrier it reads
  // the other wave's row, with ds_read2 (address VGPR = destination) and a 16-bit d16_hi write.
  v_add_u32 v11, 1, v21
  v_mul_lo_u32 v12, v2, v11
  v_lshlrev_b32 v13, 8, v21
  v_add_u32 v13, v13, v1            // byte address wave*256 + lane*4
  ds_write_b32 v13, v12
  ds_min_i32 v14, v12 offset:512    // every lane of both waves: LDS[512] = min
  s_waitcnt lgkmcnt(0)
  s_barrier
  v_xor_b32 v15, 0x100, v13         // the other wave's row
  ds_read_b32 v5, v15
  v_mov_b32 v16, v1                 // the address VGPR is also the first destination, as
  ds_read2_b32 v[16:17], v16 offset1:64  // clang emits: both addresses are read first
  s_waitcnt lgkmcnt(0)
  ST 10, v5
  ST 11, v16
  ST 12, v17
  s_waitcnt lgkmcnt(0)
  s_barrier
  ds_read_b32 v18, v14 offset:512
  s_waitcnt lgkmcnt(0)
  ST 13, v18
  s_waitcnt vmcnt(0)
  s_endpgm
KERNEL_END lanes_memory, 32, 0, 1024
