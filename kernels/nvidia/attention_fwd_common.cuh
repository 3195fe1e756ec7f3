// Device helpers that the NVIDIA forward kernels share (the mma.sync kernels of
// attention_fwd_mma.cuh, the sm_80 path, and the warp-specialised sm_90a kernels of
// attention_fwd_ws.cuh): the reductions of a row's values over the quad of lanes that holds it (the
// mma.sync / wgmma accumulator layout: lanes 4g .. 4g + 3 hold row g), what a finished row
// writes, and O's stores. The numerics they serve are listed at the top of attention_fwd_mma.cuh.
#ifndef ZYFA_KERNELS_NVIDIA_ATTENTION_FWD_COMMON_CUH
#define ZYFA_KERNELS_NVIDIA_ATTENTION_FWD_COMMON_CUH

#include "common/attention_kernel_args.h"
#include "common/attention_mask.h"
#include "common/block_scale.h"
#include "common/fp8_e4m3.h"
#include "common/half_types.h"
#include "common/lean_p.h"
#include "common/row_max.h"
#include "common/score_scale.h"
#include "nvidia/input_kind.h"

namespace zyfa {
namespace nvidia {

using numerics::kLn2;  // kernels/common/score_scale.h

// NaN-keeping, like every max of a row's scores (kernels/common/row_max.h).
__device__ __forceinline__ float quad_max(float v) {
    v = numerics::max_keep_nan(v, __shfl_xor_sync(0xFFFFFFFFu, v, 1));
    return numerics::max_keep_nan(v, __shfl_xor_sync(0xFFFFFFFFu, v, 2));
}
// Butterfly: every lane of the quad computes (a+b)+(c+d) with the operands of each + swapped at
// most, so all four hold identical bits.
__device__ __forceinline__ float quad_sum(float v) {
    v = v + __shfl_xor_sync(0xFFFFFFFFu, v, 1);
    return v + __shfl_xor_sync(0xFFFFFFFFu, v, 2);
}

// What a finished row writes (kernels/common/row_max.h): NaN where its running maximum saw a NaN or
// +inf score (poisoned), 0 and -inf where it saw no key (not seen), else the value.
constexpr float kQuietNaN = __builtin_nanf("");
__device__ __forceinline__ float row_output(float value, bool poisoned, bool seen) {
    return poisoned ? kQuietNaN : seen ? value : 0.0f;
}
__device__ __forceinline__ float row_lse(float value, bool poisoned, bool seen) {
    return poisoned ? kQuietNaN : seen ? value : -__builtin_huge_valf();
}

__device__ __forceinline__ void store_output(void* o, int32_t dtype, int64_t index, float value) {
    if (dtype == kKernelFp32) {
        static_cast<float*>(o)[index] = value;
    } else if (dtype == kKernelBf16) {
        static_cast<uint16_t*>(o)[index] = numerics::float_to_bf16(value);
    } else {
        static_cast<uint16_t*>(o)[index] = numerics::float_to_fp16(value);
    }
}

// Two adjacent output values of one row.
__device__ __forceinline__ void store_output_pair(void* o, int32_t dtype, int64_t index, float v0, float v1) {
    if (dtype == kKernelFp32) {
        *reinterpret_cast<float2*>(static_cast<float*>(o) + index) = make_float2(v0, v1);
    } else if (dtype == kKernelBf16) {
        *reinterpret_cast<uint32_t*>(static_cast<uint16_t*>(o) + index) =
            numerics::float_to_bf16(v0) | (static_cast<uint32_t>(numerics::float_to_bf16(v1)) << 16);
    } else {
        *reinterpret_cast<uint32_t*>(static_cast<uint16_t*>(o) + index) =
            numerics::float_to_fp16(v0) | (static_cast<uint32_t>(numerics::float_to_fp16(v1)) << 16);
    }
}

// Whether a softmax is compiled with the per-key mask tests (blocks that some row of the tile does
// not see whole) or without them.
template <bool B>
struct MaskedTag {
    static constexpr bool value = B;
};

}  // namespace nvidia
}  // namespace zyfa

#endif
