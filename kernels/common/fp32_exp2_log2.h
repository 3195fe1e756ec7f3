// The fp32 exp2 and log2 of the online softmax and its epilogue, one name for every target: the
// host's libm exp2f / log2f (what std::exp2 / std::log2 of a float call), CUDA's exp2f / log2f (the
// accurate library functions, not ex2.approx / lg2.approx), and on AMD the clang builtins (the HIP
// kernels are built without the ROCm headers that would declare exp2f for the device). They are
// not bit-identical across targets; the tests bound that difference, and each backend's kernels
// call only these so that every exp2 of one backend is the same function.
#ifndef ZYFA_KERNELS_COMMON_FP32_EXP2_LOG2_H
#define ZYFA_KERNELS_COMMON_FP32_EXP2_LOG2_H

#include "device_compat.h"

namespace zyfa {
namespace numerics {

ZYFA_HD float exp2_fp32(float x) {
#if defined(__AMDGCN__)
    return __builtin_exp2f(x);
#else
    return exp2f(x);
#endif
}

ZYFA_HD float log2_fp32(float x) {
#if defined(__AMDGCN__)
    return __builtin_log2f(x);
#else
    return log2f(x);
#endif
}

// exp2_fp32 as a function object, the default exponential of online_softmax.h.
struct Exp2Fp32 {
    ZYFA_HD float operator()(float x) const { return exp2_fp32(x); }
};

}  // namespace numerics
}  // namespace zyfa

#endif
