// The consumers' epilogue of the warp-specialised sm_90a kernel (attention_fwd_ws.cuh): each row's
// O normalised (O = acc * 2^-acc_exponent * (v_descale / l)), its log-sum-exp, and the store of O's
// pairs in the output dtype.
#ifndef ZYFA_KERNELS_NVIDIA_SM90_EPILOGUE_CUH
#define ZYFA_KERNELS_NVIDIA_SM90_EPILOGUE_CUH

#include "nvidia/attention_fwd_common.cuh"
#include "nvidia/sm90/mainloop.cuh"
#include "nvidia/sm90/tile_context.cuh"
#include "nvidia/sm90/traits.cuh"

namespace zyfa {
namespace nvidia {

template <class Traits>
__device__ __forceinline__ void store_output_tile(const TileContext<typename Traits::Shape>& tile, const AttnKernelArgs& a,
                                                  const ConsumerResult<Traits>& result) {
    constexpr int DV = Traits::kDv;
    // Local copies first, as in consumer_mainloop (its comment on TileContext).
    const TileContext<typename Traits::Shape> t = tile;
    ConsumerResult<Traits> r = result;
    float (&m)[2] = r.m;
    float (&l)[2] = r.l;
    const float (&acc_exponent)[2] = r.acc_exponent;
    const float (&l_scaled)[2] = r.l_scaled;
    const float (&acc)[Traits::kAcc] = r.acc;
    const float vd = r.v_descale;
    // Epilogue: O = acc * 2^-acc_exponent * (v_descale / l); rows that saw no key get 0 and
    // lse = -inf, rows whose maximum saw a NaN or +inf score NaN (row_output).
    if constexpr (Traits::kRowSumByMma) {
        // l_scaled holds the sum of the rounded probabilities, scaled like O.
#pragma unroll
        for (int rr = 0; rr < 2; ++rr) l[rr] = l_scaled[rr] * numerics::exp2_integral(-acc_exponent[rr]);
    }
    const int64_t total_q = a.cu_seqlens_q ? a.cu_seqlens_q[a.batch] : 0;
    const int out_thread = thread_now() - 128, out_quad_lane = out_thread % 4;
    const int out_row_base = t.row0 + out_thread / 128 * 64 + (out_thread / 32) % 4 * 16 + out_thread % 32 / 4;
    bool row_valid[2], poisoned[2], seen[2];
    float out_scale[2], unscale[2];
    int64_t o_row[2];
#pragma unroll
    for (int rr = 0; rr < 2; ++rr) {
        const int row = out_row_base + 8 * rr;
        row_valid[rr] = row < t.seqlen_q;
        poisoned[rr] = numerics::row_max_is_poisoned(m[rr]);
        seen[rr] = l[rr] > 0.0f;
        out_scale[rr] = seen[rr] ? vd / l[rr] : 0.0f;
        unscale[rr] = numerics::exp2_integral(-acc_exponent[rr]);
        o_row[rr] = t.batch * a.o_stride_batch + (t.first_q + row) * a.o_stride_seq + t.head * a.o_stride_head +
                    2 * out_quad_lane;
        if (row_valid[rr] && a.lse && out_quad_lane == 0) {
            const int64_t index = a.cu_seqlens_q ? t.head * total_q + t.first_q + row
                                                 : (static_cast<int64_t>(t.batch) * a.heads_q + t.head) * a.seqlen_q + row;
            a.lse[index] = row_lse(kLn2 * (m[rr] + log2f(l[rr])), poisoned[rr], seen[rr]);
        }
    }
    // O's pairs, the output dtype chosen once for the whole tile (a branch per pair and the
    // software conversions made this the kernel's largest code, and its instruction-cache
    // misses). 16-bit outputs by cvt.rn.{bf16x2,f16x2}.f32: round to nearest even like
    // numerics::float_to_bf16 / float_to_fp16, identical bits except a NaN's payload.
    auto store_pairs = [&](auto store_pair) {
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
    };
    if (a.out_dtype == kKernelFp32) {
        store_pairs([&](int64_t index, float lo, float hi) {
            *reinterpret_cast<float2*>(static_cast<float*>(a.o) + index) = make_float2(lo, hi);
        });
    } else if (a.out_dtype == kKernelBf16) {
        store_pairs([&](int64_t index, float lo, float hi) {
            uint32_t pair;
            asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(pair) : "f"(hi), "f"(lo));
            *reinterpret_cast<uint32_t*>(static_cast<uint16_t*>(a.o) + index) = pair;
        });
    } else {
        store_pairs([&](int64_t index, float lo, float hi) {
            uint32_t pair;
            asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(pair) : "f"(hi), "f"(lo));
            *reinterpret_cast<uint32_t*>(static_cast<uint16_t*>(a.o) + index) = pair;
        });
    }
}

}  // namespace nvidia
}  // namespace zyfa

#endif
