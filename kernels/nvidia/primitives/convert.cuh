// PTX wrappers of the packing conversions the attention kernels need (P operands, 16-bit O): two fp32
// probabilities to the input's 16-bit type (cvt.rn.bf16x2 / f16x2, sm_80+) or to two e4m3fn codes
// (cvt.rn.satfinite.e4m3x2, sm_89+).
#ifndef ZYFA_KERNELS_NVIDIA_PRIMITIVES_CONVERT_CUH
#define ZYFA_KERNELS_NVIDIA_PRIMITIVES_CONVERT_CUH

#include <stdint.h>

#include "nvidia/input_kind.h"

namespace zyfa {
namespace nvidia {

// Two probabilities rounded (nearest even) to the input's 16-bit type, lo in the low half.
template <InKind IN>
__device__ __forceinline__ uint32_t pack_p16(float lo, float hi) {
    uint32_t r;
    if constexpr (IN == InKind::Bf16) {
        asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
    } else {
        asm("cvt.rn.f16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
    }
    return r;
}

// Two fp32 to e4m3fn, round to nearest even with saturation to +-448 (numerics::fp8_encode's
// rule); lo in the low byte. cvt's first source goes to the upper byte.
__device__ __forceinline__ uint32_t pack_e4m3x2(float lo, float hi) {
    uint16_t r = 0;
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 890
    asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;\n" : "=h"(r) : "f"(hi), "f"(lo));
#else
    __trap();
#endif
    return r;
}

// Four fp32 to e4m3fn as pack_e4m3x2 rounds them, p0 in the low byte: the two pairs joined in
// registers of 16 bits (one PRMT), where two pack_e4m3x2 widened to 32 bits cost an AND each
// before the byte permute that joins them.
__device__ __forceinline__ uint32_t pack_e4m3x4(float p0, float p1, float p2, float p3) {
    uint32_t r = 0;
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 890
    asm("{\n .reg .b16 lo, hi;\n"
        " cvt.rn.satfinite.e4m3x2.f32 lo, %2, %1;\n"
        " cvt.rn.satfinite.e4m3x2.f32 hi, %4, %3;\n"
        " mov.b32 %0, {lo, hi};\n}\n"
        : "=r"(r)
        : "f"(p0), "f"(p1), "f"(p2), "f"(p3));
#else
    __trap();
#endif
    return r;
}

}  // namespace nvidia
}  // namespace zyfa

#endif
