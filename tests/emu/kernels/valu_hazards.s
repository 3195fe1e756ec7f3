// gfx940+ VALU hazards that LLVM's GCNHazardRecognizer separates with wait states (runner.cpp,
// check_valu_hazards): each fault_* kernel is one wait state short of the rule, its ok_* twin has
// exactly the wait states the rule requires and stores results the test checks.
// Kernarg: out (u32[64 x 8]); result k of lane l goes to out[64 k + l].
.include "emu_kernel.inc"
.macro PROLOGUE
  s_load_dwordx2 s[4:5], s[0:1], 0x0
  v_and_b32 v20, 63, v0             // lane
  v_lshlrev_b32 v21, 2, v20
  s_waitcnt lgkmcnt(0)
.endm
.macro ST k, vreg
  v_add_u32 v30, 256*\k, v21
  global_store_dword v30, \vreg, s[4:5]
.endm

// VALU write of an SGPR pair -> VALU read of it (v_cndmask's mask): 2 wait states.
.macro SGPR_MASK name, nops
KERNEL_BEGIN \name
  PROLOGUE
  v_cmp_gt_u32_e64 s[10:11], v20, 5
  .if \nops >= 0
  s_nop \nops
  .endif
  v_cndmask_b32_e64 v1, 0, 1, s[10:11]
  ST 0, v1
  s_endpgm
KERNEL_END \name
.endm
SGPR_MASK fault_valu_sgpr_mask, 0
SGPR_MASK ok_valu_sgpr_mask, 1

// VALU write of VCC (carry-out) -> VALU read of VCC (carry-in): 2 wait states.
.macro VCC_CARRY name, nops
KERNEL_BEGIN \name
  PROLOGUE
  v_mov_b32 v2, -1
  v_add_co_u32_e32 v1, vcc, v2, v20  // carry out for every lane but 0
  .if \nops >= 0
  s_nop \nops
  .endif
  v_addc_co_u32_e32 v3, vcc, 0, v20, vcc
  ST 0, v3
  s_endpgm
KERNEL_END \name
.endm
VCC_CARRY fault_valu_vcc_carry, -1
VCC_CARRY ok_valu_vcc_carry, 1

// VALU write of the VGPR v_readlane reads: 1 wait state.
.macro READLANE_SRC name, nops
KERNEL_BEGIN \name
  PROLOGUE
  v_add_u32 v1, 100, v20
  .if \nops >= 0
  s_nop \nops
  .endif
  v_readlane_b32 s10, v1, 3
  s_nop 1                           // the SGPR rule for the v_mov below
  v_mov_b32 v2, s10
  ST 0, v2
  s_endpgm
KERNEL_END \name
.endm
READLANE_SRC fault_valu_readlane_src, -1
READLANE_SRC ok_valu_readlane_src, 0

// VALU write of EXEC -> v_readfirstlane: 4 wait states.
.macro EXEC_READFIRSTLANE name, nops
KERNEL_BEGIN \name
  PROLOGUE
  v_add_u32 v1, 200, v20
  s_mov_b64 s[12:13], exec
  v_cmp_lt_u32_e64 exec, 9, v20      // lanes 10..63
  s_nop \nops
  v_readfirstlane_b32 s10, v1
  s_mov_b64 exec, s[12:13]
  s_nop 1
  v_mov_b32 v2, s10
  ST 0, v2
  s_endpgm
KERNEL_END \name
.endm
EXEC_READFIRSTLANE fault_valu_exec_readfirstlane, 2
EXEC_READFIRSTLANE ok_valu_exec_readfirstlane, 3

// VALU write of v_writelane's lane select SGPR: 4 wait states (the SGPR rule asks only 2).
.macro WRITELANE_SELECT name, nops
KERNEL_BEGIN \name
  PROLOGUE
  v_mov_b32 v1, 7
  v_add_u32 v3, 40, v20
  s_nop 0                           // the readlane source rule
  v_readfirstlane_b32 s10, v3        // 40
  s_nop \nops
  v_writelane_b32 v1, 5, s10
  ST 0, v1
  s_endpgm
KERNEL_END \name
.endm
WRITELANE_SELECT fault_valu_writelane_select, 2
WRITELANE_SELECT ok_valu_writelane_select, 3

// VALU write of VCC -> v_div_fmas (implicit VCC): 4 wait states.
.macro DIV_FMAS_VCC name, nops
KERNEL_BEGIN \name
  PROLOGUE
  v_mov_b32 v2, 2.0
  v_mov_b32 v3, 3.0
  v_cvt_f32_u32 v4, v20
  v_cmp_gt_u32_e32 vcc, 0, v20       // false in every lane: v_div_fmas does not scale
  s_nop \nops
  v_div_fmas_f32 v1, v2, v3, v4
  ST 0, v1
  s_endpgm
KERNEL_END \name
.endm
DIV_FMAS_VCC fault_valu_div_fmas_vcc, 2
DIV_FMAS_VCC ok_valu_div_fmas_vcc, 3

// VALU overwrite of the data of a store wider than 8 bytes: 2 wait states. A dwordx2 store
// (8 bytes) has no such hazard.
.macro WIDE_STORE name, nops
KERNEL_BEGIN \name
  PROLOGUE
  v_add_u32 v4, 1, v20
  v_add_u32 v5, 2, v20
  v_add_u32 v6, 3, v20
  v_add_u32 v7, 4, v20
  v_lshlrev_b32 v30, 4, v20
  global_store_dwordx4 v30, v[4:7], s[4:5]
  .if \nops >= 0
  s_nop \nops
  .endif
  v_mov_b32 v6, 0
  v_lshlrev_b32 v30, 3, v20
  v_add_u32 v30, 1024, v30
  global_store_dwordx2 v30, v[6:7], s[4:5]
  v_mov_b32 v7, 0
  s_endpgm
KERNEL_END \name
.endm
WIDE_STORE fault_valu_wide_store, 0
WIDE_STORE ok_valu_wide_store, 1

// SDWA write of a word (dst_sel:WORD_1) -> a VALU using that VGPR: 1 wait state.
.macro SDWA_DST name, nops
KERNEL_BEGIN \name
  PROLOGUE
  v_mov_b32 v1, 0x5555
  v_add_u32 v2, 0x30, v20
  v_mov_b32_sdwa v1, v2 dst_sel:WORD_1 dst_unused:UNUSED_PRESERVE src0_sel:WORD_0
  .if \nops >= 0
  s_nop \nops
  .endif
  v_add_u32 v3, 1, v1
  ST 0, v3
  s_endpgm
KERNEL_END \name
.endm
SDWA_DST fault_valu_sdwa_dst_sel, -1
SDWA_DST ok_valu_sdwa_dst_sel, 0

// VOP3 op_sel destination bit (the high word of a packed fp8 conversion) -> a VALU using that
// VGPR: 1 wait state.
.macro OPSEL_DST name, nops
KERNEL_BEGIN \name
  PROLOGUE
  v_mov_b32 v1, 0
  v_mov_b32 v2, 1.0
  v_mov_b32 v3, 2.0
  v_cvt_pk_fp8_f32 v1, v2, v3 op_sel:[0,0,1]
  .if \nops >= 0
  s_nop \nops
  .endif
  v_mov_b32 v4, v1
  ST 0, v4
  s_endpgm
KERNEL_END \name
.endm
OPSEL_DST fault_valu_opsel_dst, -1
OPSEL_DST ok_valu_opsel_dst, 0

// VALU write of EXEC -> MFMA: 4 wait states (the compare keeps every lane).
.macro EXEC_MFMA name, nops
KERNEL_BEGIN \name
  PROLOGUE
  v_mov_b32 v32, 1.0
  v_mov_b32 v33, 1.0
  v_mov_b32 v40, 1.0
  v_mov_b32 v41, 1.0
  v_cmp_le_u32_e64 exec, 0, v20
  s_nop \nops
  v_mfma_f32_32x32x8bf16_1k v[48:63], v[32:33], v[40:41], 0
  s_nop 15
  s_nop 15
  ST 0, v48
  s_endpgm
KERNEL_END \name, 64
.endm
EXEC_MFMA fault_valu_exec_mfma, 2
EXEC_MFMA ok_valu_exec_mfma, 3

// A transcendental result feeding another transcendental: LLVM asks no wait state (the rule is
// for non-transcendental consumers), so this passes; the non-transcendental use needs 1.
KERNEL_BEGIN ok_valu_trans_to_trans
  PROLOGUE
  v_cvt_f32_u32 v2, v20
  v_exp_f32 v1, v2
  v_log_f32 v3, v1
  s_nop 0
  ST 0, v3
  s_endpgm
KERNEL_END ok_valu_trans_to_trans
