// The running row maximum of the online softmax and what a non-finite score does to a row: one
// definition for the CPU model and every GPU kernel.
//
// Rule (include/zyfa.h): a row that sees a score which is NaN or +inf after scaling (log2 domain:
// raw dot product * softmax_scale * q_descale * k_descale * log2 e) gets O = NaN and lse = NaN.
// A plain fmaxf drops a NaN operand, and LEAN's saturating code conversion maps NaN to code 0, so
// without this a NaN score would vanish from the row and the row would look like one that sees no
// key (O = 0, lse = -inf). The max below keeps NaN instead (PTX max.NaN.f32 on NVIDIA), so the
// running maximum becomes NaN or +inf exactly when the row saw such a score, and the epilogue
// tests that one value. A visible score of -inf (an overflow toward -inf) is a probability of 0,
// the limit of exp: it does not poison the row.
#ifndef ZYFA_KERNELS_COMMON_ROW_MAX_H
#define ZYFA_KERNELS_COMMON_ROW_MAX_H

#include "device_compat.h"

namespace zyfa {
namespace numerics {

// max(a, b), NaN if either is NaN; otherwise identical to fmaxf (so finite results are unchanged).
ZYFA_HD float max_keep_nan(float a, float b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    float r;
    asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
    return r;
#elif defined(__AMDGCN__)
    // llvm.maximum: one v_maximum3_f32 on gfx950, v_max + v_cmp_o + v_cndmask on gfx942 (fmaxf's
    // v_max_f32 drops a NaN operand). It orders -0 below +0; a zero's sign reaches neither O nor lse.
    return __builtin_elementwise_maximum(a, b);
#else
    return (a != a || b != b) ? a + b : (a > b ? a : b);
#endif
}

// The mirror of max_keep_nan, for a kernel that takes the extreme of raw scores before a negative
// scale (PTX min.NaN.f32 on NVIDIA).
ZYFA_HD float min_keep_nan(float a, float b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    float r;
    asm("min.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
    return r;
#elif defined(__AMDGCN__)
    return __builtin_elementwise_minimum(a, b);
#else
    return (a != a || b != b) ? a + b : (a < b ? a : b);
#endif
}

// True when a row's final running maximum says it saw a NaN or +inf score: its O and lse are NaN.
// A row that saw no key has m = -inf and is not poisoned.
ZYFA_HD bool row_max_is_poisoned(float running_max_log2) { return !(running_max_log2 < __builtin_inff()); }

}  // namespace numerics
}  // namespace zyfa

#endif
