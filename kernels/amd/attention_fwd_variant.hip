// One code object per compilation: kernels/amd/CMakeLists.txt compiles this file once per
// (arch, input family, head dims) with
//   --offload-arch=gfx950|gfx942 -DZYFA_FAMILY_FP8=0|1 -DZYFA_FAMILY_INT8=0|1 -DZYFA_HEAD_DIM_QK=..
//   -DZYFA_HEAD_DIM_V=.. -DZYFA_DIMS_SUFFIX=d64|d128|d192_128 -DZYFA_AMD_PAGED=0|1
// Kernels (the names src/hip/attention_launch_plan.cpp launches):
//   BF16: zyfa_attn_fwd_bf16_<dims>        (softmax EXACT)
//   FP8:  zyfa_attn_fwd_e4m3_lean_<dims>, zyfa_attn_fwd_e4m3_exact_<dims>   (gfx950, e4m3fn)
//         zyfa_attn_fwd_e4m3fnuz_lean_<dims>, zyfa_attn_fwd_e4m3fnuz_exact_<dims> (gfx942, e4m3fnuz)
//   INT8 Q/K (q, k INT8; v FP8 in the arch's format; -DZYFA_FAMILY_FP8=1 -DZYFA_FAMILY_INT8=1):
//         zyfa_attn_fwd_i8e4m3_lean_<dims>, zyfa_attn_fwd_i8e4m3_exact_<dims>       (gfx950, v e4m3fn)
//         zyfa_attn_fwd_i8e4m3fnuz_lean_<dims>, zyfa_attn_fwd_i8e4m3fnuz_exact_<dims> (gfx942, v e4m3fnuz)
#include "amd/attention_fwd.h"

#define ZYFA_PASTE_(a, b) a##b
#define ZYFA_PASTE(a, b) ZYFA_PASTE_(a, b)

// Paged variants (-DZYFA_AMD_PAGED=1): zyfa_attn_fwd_paged_<as above>, K and V read through a
// block table (kernels/common/paged_kv_args.h, the kernels' second parameter).
#if ZYFA_AMD_PAGED
#define ZYFA_KERNEL ZYFA_AMD_PAGED_ATTENTION_KERNEL
#define ZYFA_NAME(name) ZYFA_PASTE(ZYFA_PASTE(zyfa_attn_fwd_paged_, name), ZYFA_DIMS_SUFFIX)
#else
#define ZYFA_KERNEL ZYFA_AMD_ATTENTION_KERNEL
#define ZYFA_NAME(name) ZYFA_PASTE(ZYFA_PASTE(zyfa_attn_fwd_, name), ZYFA_DIMS_SUFFIX)
#endif

#if ZYFA_FAMILY_INT8
#if defined(__gfx950__)
ZYFA_KERNEL(ZYFA_NAME(i8e4m3_lean_), true, true, ZYFA_HEAD_DIM_QK, ZYFA_HEAD_DIM_V, true)
ZYFA_KERNEL(ZYFA_NAME(i8e4m3_exact_), true, false, ZYFA_HEAD_DIM_QK, ZYFA_HEAD_DIM_V, true)
#else
ZYFA_KERNEL(ZYFA_NAME(i8e4m3fnuz_lean_), true, true, ZYFA_HEAD_DIM_QK, ZYFA_HEAD_DIM_V, true)
ZYFA_KERNEL(ZYFA_NAME(i8e4m3fnuz_exact_), true, false, ZYFA_HEAD_DIM_QK, ZYFA_HEAD_DIM_V, true)
#endif
#elif ZYFA_FAMILY_FP8
#if defined(__gfx950__)
ZYFA_KERNEL(ZYFA_NAME(e4m3_lean_), true, true, ZYFA_HEAD_DIM_QK, ZYFA_HEAD_DIM_V, false)
ZYFA_KERNEL(ZYFA_NAME(e4m3_exact_), true, false, ZYFA_HEAD_DIM_QK, ZYFA_HEAD_DIM_V, false)
#else
ZYFA_KERNEL(ZYFA_NAME(e4m3fnuz_lean_), true, true, ZYFA_HEAD_DIM_QK, ZYFA_HEAD_DIM_V, false)
ZYFA_KERNEL(ZYFA_NAME(e4m3fnuz_exact_), true, false, ZYFA_HEAD_DIM_QK, ZYFA_HEAD_DIM_V, false)
#endif
#else
ZYFA_KERNEL(ZYFA_NAME(bf16_), false, false, ZYFA_HEAD_DIM_QK, ZYFA_HEAD_DIM_V, false)
#endif
