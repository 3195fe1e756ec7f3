// The warp-specialised sm_90a kernels (attention_fwd_ws.cuh), one variant per compilation
// (kernels/nvidia/CMakeLists.txt): -DZYFA_FAMILY_E4M3=0|1|2 -DZYFA_HEAD_DIM_QK=.. -DZYFA_HEAD_DIM_V=..
// -DZYFA_DIMS_SUFFIX=d128 -DZYFA_WS_PAGED=0|1 -DZYFA_WS_KEY_BIAS=0|1 (ZYFA_FAMILY_E4M3 is the list's
// fp8 field: 2 = the INT8 Q/K mode). Each cubin holds the kernels of its family:
//   16-bit: zyfa_attn_fwd_ws_[paged_]bf16_<dims>, zyfa_attn_fwd_ws_[paged_]fp16_<dims> (softmax EXACT);
//   FP8:    zyfa_attn_fwd_ws_[paged_]e4m3_exact_<dims>, zyfa_attn_fwd_ws_[paged_]e4m3_lean_<dims>;
//   INT8 Q/K, e4m3 V: zyfa_attn_fwd_ws_i8e4m3_exact_<dims>, zyfa_attn_fwd_ws_i8e4m3_lean_<dims>.
// The paged kernels (ZYFA_WS_PAGED=1) read K and V through a block table (PagedKvArgs). There are
// no paged INT8 kernels (attention_kernel_variants.def): the launch plan refuses INT8 + paged.
// The key-bias kernels (ZYFA_WS_KEY_BIAS=1, zyfa_attn_fwd_ws_bias_e4m3_{exact,lean}_<dims>) add
// zyfa_attn_params.key_bias to every score; FP8 E4M3 only.
#include "attention_fwd_ws.cuh"

#ifndef ZYFA_WS_PAGED
#define ZYFA_WS_PAGED 0
#endif
#ifndef ZYFA_WS_KEY_BIAS
#define ZYFA_WS_KEY_BIAS 0
#endif

#define ZYFA_PASTE_(a, b) a##b
#define ZYFA_PASTE(a, b) ZYFA_PASTE_(a, b)

#if ZYFA_WS_PAGED && ZYFA_WS_KEY_BIAS
#error "no paged key-bias kernels"
#elif ZYFA_WS_PAGED
#define ZYFA_WS_PREFIX(name) ZYFA_PASTE(zyfa_attn_fwd_ws_paged_, name)
#define ZYFA_WS_IS_PAGED true
#elif ZYFA_WS_KEY_BIAS
#define ZYFA_WS_PREFIX(name) ZYFA_PASTE(zyfa_attn_fwd_ws_bias_, name)
#define ZYFA_WS_IS_PAGED false
#else
#define ZYFA_WS_PREFIX(name) ZYFA_PASTE(zyfa_attn_fwd_ws_, name)
#define ZYFA_WS_IS_PAGED false
#endif
#if ZYFA_WS_KEY_BIAS && ZYFA_FAMILY_E4M3 != 1
#error "the key-bias kernels are FP8 E4M3's (attention_kernel_variants.def lists ws_bias for e4m3 only)"
#endif
#define ZYFA_WS_IS_KEY_BIAS (ZYFA_WS_KEY_BIAS != 0)

#if ZYFA_FAMILY_E4M3 == 2
#if ZYFA_WS_PAGED
#error "no paged INT8 Q/K kernels (attention_kernel_variants.def lists ws_paged for b16 and e4m3 only)"
#endif
ZYFA_DEFINE_WS_ATTENTION_KERNEL(ZYFA_PASTE(ZYFA_WS_PREFIX(i8e4m3_exact_), ZYFA_DIMS_SUFFIX), zyfa::nvidia::InKind::Int8,
                                zyfa::nvidia::PMode::Exact, ZYFA_HEAD_DIM_QK, ZYFA_HEAD_DIM_V, ZYFA_WS_IS_PAGED, ZYFA_WS_IS_KEY_BIAS)
ZYFA_DEFINE_WS_ATTENTION_KERNEL(ZYFA_PASTE(ZYFA_WS_PREFIX(i8e4m3_lean_), ZYFA_DIMS_SUFFIX), zyfa::nvidia::InKind::Int8,
                                zyfa::nvidia::PMode::Lean, ZYFA_HEAD_DIM_QK, ZYFA_HEAD_DIM_V, ZYFA_WS_IS_PAGED, ZYFA_WS_IS_KEY_BIAS)
#elif ZYFA_FAMILY_E4M3
ZYFA_DEFINE_WS_ATTENTION_KERNEL(ZYFA_PASTE(ZYFA_WS_PREFIX(e4m3_exact_), ZYFA_DIMS_SUFFIX), zyfa::nvidia::InKind::E4m3,
                                zyfa::nvidia::PMode::Exact, ZYFA_HEAD_DIM_QK, ZYFA_HEAD_DIM_V, ZYFA_WS_IS_PAGED, ZYFA_WS_IS_KEY_BIAS)
ZYFA_DEFINE_WS_ATTENTION_KERNEL(ZYFA_PASTE(ZYFA_WS_PREFIX(e4m3_lean_), ZYFA_DIMS_SUFFIX), zyfa::nvidia::InKind::E4m3,
                                zyfa::nvidia::PMode::Lean, ZYFA_HEAD_DIM_QK, ZYFA_HEAD_DIM_V, ZYFA_WS_IS_PAGED, ZYFA_WS_IS_KEY_BIAS)
#else
ZYFA_DEFINE_WS_ATTENTION_KERNEL(ZYFA_PASTE(ZYFA_WS_PREFIX(bf16_), ZYFA_DIMS_SUFFIX), zyfa::nvidia::InKind::Bf16,
                                zyfa::nvidia::PMode::Exact, ZYFA_HEAD_DIM_QK, ZYFA_HEAD_DIM_V, ZYFA_WS_IS_PAGED, ZYFA_WS_IS_KEY_BIAS)
ZYFA_DEFINE_WS_ATTENTION_KERNEL(ZYFA_PASTE(ZYFA_WS_PREFIX(fp16_), ZYFA_DIMS_SUFFIX), zyfa::nvidia::InKind::Fp16,
                                zyfa::nvidia::PMode::Exact, ZYFA_HEAD_DIM_QK, ZYFA_HEAD_DIM_V, ZYFA_WS_IS_PAGED, ZYFA_WS_IS_KEY_BIAS)
#endif
