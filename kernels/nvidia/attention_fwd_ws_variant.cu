// The warp-specialised sm_90a kernels (attention_fwd_ws.cuh), one variant per compilation
// (kernels/nvidia/CMakeLists.txt): -DZYFA_FAMILY_E4M3=0|1 -DZYFA_HEAD_DIM_QK=.. -DZYFA_HEAD_DIM_V=..
// -DZYFA_DIMS_SUFFIX=d128 (ZYFA_FAMILY_E4M3 is the list's fp8 field: 2 = the INT8 Q/K mode). Each
// cubin holds the kernels of its family:
//   16-bit: zyfa_attn_fwd_ws_bf16_<dims>, zyfa_attn_fwd_ws_fp16_<dims> (softmax EXACT);
//   FP8:    zyfa_attn_fwd_ws_e4m3_exact_<dims>, zyfa_attn_fwd_ws_e4m3_lean_<dims>;
//   INT8 Q/K, e4m3 V: zyfa_attn_fwd_ws_i8e4m3_exact_<dims>, zyfa_attn_fwd_ws_i8e4m3_lean_<dims>.
#include "attention_fwd_ws.cuh"

#define ZYFA_PASTE_(a, b) a##b
#define ZYFA_PASTE(a, b) ZYFA_PASTE_(a, b)

#if ZYFA_FAMILY_E4M3 == 2
ZYFA_DEFINE_WS_ATTENTION_KERNEL(ZYFA_PASTE(zyfa_attn_fwd_ws_i8e4m3_exact_, ZYFA_DIMS_SUFFIX), zyfa::nvidia::InKind::Int8,
                                zyfa::nvidia::PMode::Exact, ZYFA_HEAD_DIM_QK, ZYFA_HEAD_DIM_V)
ZYFA_DEFINE_WS_ATTENTION_KERNEL(ZYFA_PASTE(zyfa_attn_fwd_ws_i8e4m3_lean_, ZYFA_DIMS_SUFFIX), zyfa::nvidia::InKind::Int8,
                                zyfa::nvidia::PMode::Lean, ZYFA_HEAD_DIM_QK, ZYFA_HEAD_DIM_V)
#elif ZYFA_FAMILY_E4M3
ZYFA_DEFINE_WS_ATTENTION_KERNEL(ZYFA_PASTE(zyfa_attn_fwd_ws_e4m3_exact_, ZYFA_DIMS_SUFFIX), zyfa::nvidia::InKind::E4m3,
                                zyfa::nvidia::PMode::Exact, ZYFA_HEAD_DIM_QK, ZYFA_HEAD_DIM_V)
ZYFA_DEFINE_WS_ATTENTION_KERNEL(ZYFA_PASTE(zyfa_attn_fwd_ws_e4m3_lean_, ZYFA_DIMS_SUFFIX), zyfa::nvidia::InKind::E4m3,
                                zyfa::nvidia::PMode::Lean, ZYFA_HEAD_DIM_QK, ZYFA_HEAD_DIM_V)
#else
ZYFA_DEFINE_WS_ATTENTION_KERNEL(ZYFA_PASTE(zyfa_attn_fwd_ws_bf16_, ZYFA_DIMS_SUFFIX), zyfa::nvidia::InKind::Bf16,
                                zyfa::nvidia::PMode::Exact, ZYFA_HEAD_DIM_QK, ZYFA_HEAD_DIM_V)
ZYFA_DEFINE_WS_ATTENTION_KERNEL(ZYFA_PASTE(zyfa_attn_fwd_ws_fp16_, ZYFA_DIMS_SUFFIX), zyfa::nvidia::InKind::Fp16,
                                zyfa::nvidia::PMode::Exact, ZYFA_HEAD_DIM_QK, ZYFA_HEAD_DIM_V)
#endif
