// The mma.sync kernels, one variant per compilation: kernels/nvidia/CMakeLists.txt compiles this
// file once per (input family, head dims, arch) with
//   -DZYFA_FAMILY_E4M3=0|1 -DZYFA_HEAD_DIM_QK=.. -DZYFA_HEAD_DIM_V=.. -DZYFA_WARPS=..
//   -DZYFA_DIMS_SUFFIX=d128|d192_128|..
// so that make -j parallelises the cubins. Each cubin holds the two kernels of its family:
//   16-bit: zyfa_attn_fwd_bf16_<dims>, zyfa_attn_fwd_fp16_<dims> (softmax EXACT);
//   FP8:    zyfa_attn_fwd_e4m3_exact_<dims>, zyfa_attn_fwd_e4m3_lean_<dims> (e4m3 MMA: sm_89+).
#include "attention_fwd_mma.cuh"

#define ZYFA_PASTE_(a, b) a##b
#define ZYFA_PASTE(a, b) ZYFA_PASTE_(a, b)

#if ZYFA_FAMILY_E4M3
ZYFA_DEFINE_ATTENTION_KERNEL(ZYFA_PASTE(zyfa_attn_fwd_e4m3_exact_, ZYFA_DIMS_SUFFIX), zyfa::nvidia::InKind::E4m3,
                             zyfa::nvidia::PMode::Exact, ZYFA_HEAD_DIM_QK, ZYFA_HEAD_DIM_V, ZYFA_WARPS)
ZYFA_DEFINE_ATTENTION_KERNEL(ZYFA_PASTE(zyfa_attn_fwd_e4m3_lean_, ZYFA_DIMS_SUFFIX), zyfa::nvidia::InKind::E4m3,
                             zyfa::nvidia::PMode::Lean, ZYFA_HEAD_DIM_QK, ZYFA_HEAD_DIM_V, ZYFA_WARPS)
#else
ZYFA_DEFINE_ATTENTION_KERNEL(ZYFA_PASTE(zyfa_attn_fwd_bf16_, ZYFA_DIMS_SUFFIX), zyfa::nvidia::InKind::Bf16,
                             zyfa::nvidia::PMode::Exact, ZYFA_HEAD_DIM_QK, ZYFA_HEAD_DIM_V, ZYFA_WARPS)
ZYFA_DEFINE_ATTENTION_KERNEL(ZYFA_PASTE(zyfa_attn_fwd_fp16_, ZYFA_DIMS_SUFFIX), zyfa::nvidia::InKind::Fp16,
                             zyfa::nvidia::PMode::Exact, ZYFA_HEAD_DIM_QK, ZYFA_HEAD_DIM_V, ZYFA_WARPS)
#endif
