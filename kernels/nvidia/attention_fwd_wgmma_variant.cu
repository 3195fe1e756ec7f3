// The sm_90a wgmma kernels, one variant per compilation (kernels/nvidia/CMakeLists.txt):
//   -DZYFA_FAMILY_E4M3=0|1 -DZYFA_HEAD_DIM_QK=.. -DZYFA_HEAD_DIM_V=.. -DZYFA_DIMS_SUFFIX=d128
// Each cubin holds the kernels of its family, 128-row tiles of two warpgroups:
//   16-bit: zyfa_attn_fwd_wg_bf16_<dims>, zyfa_attn_fwd_wg_fp16_<dims> (softmax EXACT);
//   FP8:    zyfa_attn_fwd_wg_e4m3_exact_<dims>, zyfa_attn_fwd_wg_e4m3_lean_<dims>.
// (The kernel template also builds 64-row tiles of one warpgroup, two CTAs per SM: measured
// slower on the H200, 2026-11-29, see docs/performance.md, so no cubin carries them.)
#include "attention_fwd_wgmma.cuh"

#define ZYFA_PASTE_(a, b) a##b
#define ZYFA_PASTE(a, b) ZYFA_PASTE_(a, b)

#define ZYFA_WG_KERNELS(prefix, warpgroups)                                                                  \
    ZYFA_DEFINE_WGMMA_ATTENTION_KERNEL(ZYFA_PASTE(prefix##e4m3_exact_, ZYFA_DIMS_SUFFIX), zyfa::nvidia::InKind::E4m3, \
                                       zyfa::nvidia::PMode::Exact, ZYFA_HEAD_DIM_QK, ZYFA_HEAD_DIM_V, warpgroups)   \
    ZYFA_DEFINE_WGMMA_ATTENTION_KERNEL(ZYFA_PASTE(prefix##e4m3_lean_, ZYFA_DIMS_SUFFIX), zyfa::nvidia::InKind::E4m3,  \
                                       zyfa::nvidia::PMode::Lean, ZYFA_HEAD_DIM_QK, ZYFA_HEAD_DIM_V, warpgroups)
#define ZYFA_WG_KERNELS_16(prefix, warpgroups)                                                                \
    ZYFA_DEFINE_WGMMA_ATTENTION_KERNEL(ZYFA_PASTE(prefix##bf16_, ZYFA_DIMS_SUFFIX), zyfa::nvidia::InKind::Bf16,     \
                                       zyfa::nvidia::PMode::Exact, ZYFA_HEAD_DIM_QK, ZYFA_HEAD_DIM_V, warpgroups) \
    ZYFA_DEFINE_WGMMA_ATTENTION_KERNEL(ZYFA_PASTE(prefix##fp16_, ZYFA_DIMS_SUFFIX), zyfa::nvidia::InKind::Fp16,     \
                                       zyfa::nvidia::PMode::Exact, ZYFA_HEAD_DIM_QK, ZYFA_HEAD_DIM_V, warpgroups)

#if ZYFA_FAMILY_E4M3
ZYFA_WG_KERNELS(zyfa_attn_fwd_wg_, 2)
#else
ZYFA_WG_KERNELS_16(zyfa_attn_fwd_wg_, 2)
#endif
