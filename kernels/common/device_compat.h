// Shared by the CPU backend, HIP and CUDA kernels: the qualifiers and bit casts that let one
// definition of the numerics compile as host C++17, CUDA C++ and HIP C++.
#ifndef ZYFA_KERNELS_COMMON_DEVICE_COMPAT_H
#define ZYFA_KERNELS_COMMON_DEVICE_COMPAT_H

#include <stdint.h>
#include <math.h>

#if defined(__CUDACC__) || defined(__HIPCC__) || defined(__HIP__)
#define ZYFA_HD __host__ __device__ inline
#else
#define ZYFA_HD inline
#endif

namespace zyfa {
namespace numerics {

ZYFA_HD uint32_t float_bits(float x) {
    uint32_t u;
    __builtin_memcpy(&u, &x, sizeof u);
    return u;
}

ZYFA_HD float bits_float(uint32_t u) {
    float x;
    __builtin_memcpy(&x, &u, sizeof x);
    return x;
}

// Round to nearest integer, ties to even, for |x| < 2^22, without depending on the current
// rounding mode's library call: adding 1.5*2^23 leaves the rounded integer in the low mantissa.
// Needs IEEE fp32 arithmetic (no -ffast-math), which every zyfa target is built with.
ZYFA_HD float round_half_even(float x) {
    const float magic = 12582912.0f;  // 1.5 * 2^23
    // IEEE arithmetic forbids folding (x + magic) - magic to x; zyfa never builds with fast-math.
    return (x + magic) - magic;
}

ZYFA_HD float clamp_float(float x, float lo, float hi) {
    // NaN maps to lo: a NaN score (never produced by finite inputs) must not become a code.
    return x > lo ? (x < hi ? x : hi) : lo;
}

}  // namespace numerics
}  // namespace zyfa

#endif
