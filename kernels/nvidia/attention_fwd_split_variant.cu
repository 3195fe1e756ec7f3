// The split-KV kernels (attention_fwd_split.cuh), one cubin per head-dim pair: the build
// (kernels/nvidia/CMakeLists.txt, structure "split" of attention_kernel_variants.def) compiles
// this file with -DZYFA_HEAD_DIM_QK=.. -DZYFA_HEAD_DIM_V=.. -DZYFA_DIMS_SUFFIX=d64|d128.
// Symbols: zyfa_attn_fwd_split_bf16_<dims>, zyfa_attn_fwd_split_fp16_<dims>.
#include "attention_fwd_split.cuh"

#define ZYFA_PASTE_(a, b) a##b
#define ZYFA_PASTE(a, b) ZYFA_PASTE_(a, b)

ZYFA_DEFINE_SPLIT_KERNEL(ZYFA_PASTE(zyfa_attn_fwd_split_bf16_, ZYFA_DIMS_SUFFIX), zyfa::nvidia::InKind::Bf16,
                         ZYFA_HEAD_DIM_QK, ZYFA_HEAD_DIM_V)
ZYFA_DEFINE_SPLIT_KERNEL(ZYFA_PASTE(zyfa_attn_fwd_split_fp16_, ZYFA_DIMS_SUFFIX), zyfa::nvidia::InKind::Fp16,
                         ZYFA_HEAD_DIM_QK, ZYFA_HEAD_DIM_V)
