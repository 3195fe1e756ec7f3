// Device helpers that the NVIDIA forward kernels share (the mma.sync kernels of
// attention_fwd_mma.cuh and the warp-specialised sm_90a kernels of attention_fwd_ws.cuh): the
// reductions of a row's values over the quad of lanes that holds it (the mma.sync / wgmma
// accumulator layout: lanes 4g .. 4g + 3 hold row g), what a finished row writes, and an O
// element's store. The numerics they serve are listed at the top of attention_fwd_mma.cuh.
//
// The warp-specialised kernels follow that list except the order of fp32 sums (as the sm_90a wgmma
// kernels did, whose attention_fwd_wgmma.cuh was removed on 2026-12-02): the P.V product
// accumulates into O itself, kept per row as acc * 2^e (e = the block's P scale exponent),
// rescaled by alpha * 2^(e_new - e_old) first; powers of two scale exactly, so acc*alpha +
// partial*2^-k is formed as in the model, only with the tensor core adding partial products to
// the rescaled O rather than to fresh zeros. Blocks that every row of the tile sees whole skip the
// per-key mask tests (MaskedTag). LEAN's row sum is the exact sum of the decoded codes: a code c
// read as fp32 bits c << 20 is its e4m3 value times 2^-120 (normal and subnormal codes alike), so
// one shift decodes it, and partial sums of such values are exact.
#ifndef ZYFA_KERNELS_NVIDIA_ATTENTION_FWD_COMMON_CUH
#define ZYFA_KERNELS_NVIDIA_ATTENTION_FWD_COMMON_CUH

#include "common/attention_kernel_args.h"
#include "common/attention_mask.h"
#include "common/attention_sink.h"
#include "common/block_scale.h"
#include "common/fp8_e4m3.h"
#include "common/half_types.h"
#include "common/int8_qk.h"
#include "common/lean_p.h"
#include "common/online_softmax.h"
#include "common/row_epilogue.h"
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

// What a finished row writes: NaN where its running maximum saw a NaN or +inf score (poisoned), 0
// and -inf where it saw no key (not seen), else the value (kernels/common/row_epilogue.h).
using numerics::row_lse;
using numerics::row_output;

__device__ __forceinline__ void store_output(void* o, int32_t dtype, int64_t index, float value) {
    if (dtype == kKernelFp32) {
        static_cast<float*>(o)[index] = value;
    } else if (dtype == kKernelBf16) {
        static_cast<uint16_t*>(o)[index] = numerics::float_to_bf16(value);
    } else {
        static_cast<uint16_t*>(o)[index] = numerics::float_to_fp16(value);
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
