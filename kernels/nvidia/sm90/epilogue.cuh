// The consumers' epilogue of the warp-specialised sm_90a kernel (attention_fwd_ws.cuh): each row's
// O normalised (O = acc * 2^-acc_exponent * (v_descale / l)), its log-sum-exp, and the store of O's
// pairs in the output dtype. Rows that saw no key get 0 and lse = -inf, rows whose maximum saw a
// NaN or +inf score NaN (row_output).
#ifndef ZYFA_KERNELS_NVIDIA_SM90_EPILOGUE_CUH
#define ZYFA_KERNELS_NVIDIA_SM90_EPILOGUE_CUH

#include "nvidia/attention_fwd_common.cuh"
#include "nvidia/sm90/traits.cuh"

namespace zyfa {
namespace nvidia {

// One O pair per output dtype (16-bit outputs by cvt.rn.{bf16x2,f16x2}.f32: round to nearest even
// like numerics::float_to_bf16 / float_to_fp16, identical bits except a NaN's payload).
struct StorePairFp32 {
    const AttnKernelArgs& a;
    __device__ __forceinline__ void operator()(int64_t index, float lo, float hi) const {
        *reinterpret_cast<float2*>(static_cast<float*>(a.o) + index) = make_float2(lo, hi);
    }
};
struct StorePairBf16 {
    const AttnKernelArgs& a;
    __device__ __forceinline__ void operator()(int64_t index, float lo, float hi) const {
        uint32_t pair;
        asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(pair) : "f"(hi), "f"(lo));
        *reinterpret_cast<uint32_t*>(static_cast<uint16_t*>(a.o) + index) = pair;
    }
};
struct StorePairFp16 {
    const AttnKernelArgs& a;
    __device__ __forceinline__ void operator()(int64_t index, float lo, float hi) const {
        uint32_t pair;
        asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(pair) : "f"(hi), "f"(lo));
        *reinterpret_cast<uint32_t*>(static_cast<uint16_t*>(a.o) + index) = pair;
    }
};

// O's pairs of a consumer thread's two rows, normalised; the output dtype is chosen once for the
// whole tile (store_output_pairs: a branch per pair and the software conversions made this the
// kernel's largest code, and its instruction-cache misses). It refers to the consumer's variables,
// as the lambda it replaces captured them (consumer_warpgroup's comment).
template <int DV, int kAcc>
struct OutputPairs {
    const bool (&row_valid)[2];
    const int64_t (&o_row)[2];             // the element index of the row's first pair
    const float (&acc)[kAcc];              // O's accumulator times 2^acc_exponent
    const float (&unscale)[2];             // 2^-acc_exponent
    const float (&out_scale)[2];           // v_descale / l (0 for a row that saw no key)
    const bool (&poisoned)[2];
    const bool (&seen)[2];

    template <class StorePair>
    __device__ __forceinline__ void operator()(StorePair store_pair) const {
#pragma unroll
        for (int rr = 0; rr < 2; ++rr) {
            if (!row_valid[rr]) continue;
#pragma unroll
            for (int n = 0; n < DV / 8; ++n) {
                store_pair(o_row[rr] + 8 * n,
                           row_output((acc[4 * n + 2 * rr] * unscale[rr]) * out_scale[rr], poisoned[rr], seen[rr]),
                           row_output((acc[4 * n + 2 * rr + 1] * unscale[rr]) * out_scale[rr], poisoned[rr], seen[rr]));
            }
        }
    }
};

template <int DV, int kAcc>
__device__ __forceinline__ void store_output_pairs(const AttnKernelArgs& a, const OutputPairs<DV, kAcc>& store_pairs) {
    if (a.out_dtype == kKernelFp32) {
        store_pairs(StorePairFp32{a});
    } else if (a.out_dtype == kKernelBf16) {
        store_pairs(StorePairBf16{a});
    } else {
        store_pairs(StorePairFp16{a});
    }
}

}  // namespace nvidia
}  // namespace zyfa

#endif
