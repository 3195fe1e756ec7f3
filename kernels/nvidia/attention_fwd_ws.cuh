// Hopper (sm_90a) forward kernel, warp-specialised: one producer warpgroup, two consumer
// warpgroups, native FP8 wgmma for both products.
//
// One CTA of 384 threads per (query tile of 128 rows, query head, batch), heaviest (last, under a
// causal mask) tiles first. Keys are visited in blocks of ws_key_block keys (128 at head_dim_v <=
// 128, 64 at head dim 256) aligned to the start of the sequence (the CPU model's key_block; LEAN's
// block scales and EXACT's running maximum depend on it).
//   Before the roles split, thread 0 issues Q's copy and the first key block's where it can
//   (issue_first_copies in sm90/producer.cuh: contiguous K/V with tensor maps, row0 seeing a key).
//   Warpgroup 0, the producer (setmaxnreg down to kProducerRegisters): loads Q once, then K and V
//   blocks into a ring of three stages (attention_ws_tile_shape.h): with the tensor memory
//   accelerator where the host passed tensor maps (attention_ws_tma_params.h: thread 0 issues one
//   copy per 128-byte column slice of a tile, completing the stage's "full" mbarrier's transaction
//   bytes), otherwise (varlen, strides the TMA cannot take) with cp.async by all 128 threads into
//   the same layout (cp.async.mbarrier.arrive.noinc); it waits
//   on the stage's "empty" mbarrier before reusing it. FP8 V blocks land in a staging buffer and the
//   producer writes their byte transpose into the stage (transpose_v_block in sm90/producer.cuh: ldmatrix.trans,
//   byte permutes, stmatrix): the e4m3 wgmma reads both operands K-major, so P.V needs V with keys
//   contiguous. The paged producer copies K with warp 0 and V with warp 3 (a lane per page piece)
//   and transposes with warps 1-2, so that its many small copies do not wait for the transposes.
//   Warpgroups 1 and 2, the consumers (setmaxnreg up to kConsumerRegisters): 64 query rows each.
//   Per block: S = Q K^T (wgmma m64n64 or m64n128, Q's A fragments held in registers or Q read
//   from shared memory by descriptor, K from shared memory),
//   the online softmax on the accumulator registers, P packed in registers into the A operand of
//   O += P V (wgmma m64n128 or m64n64, V from shared memory); FP8 LEAN also sums each row of P with an
//   e4m3 wgmma against tiles of ones (see wgmma_rs_row_sums_e4m3). FlashAttention-3's
//   order inside a warpgroup: block n's P.V runs while block n+1's softmax runs (two P buffers;
//   one for the 16-bit 128-key steps at head_dim_v 128, packed after P.V's wait).
//   No ping-pong between the warpgroups (measured slower again on 2026-12-02: the step is
//   latency-bound on the softmax chain; docs/hopper-kernel-notes.md).
// Measured design, figures and where the time goes: docs/hopper-kernel-notes.md. The launch plan
// runs every sm_90a problem on these kernels (src/cuda/attention_launch_plan.cpp; an O whose pairs
// are misaligned goes to the mma.sync kernel). Head dims: 128, 192/128 (MLA), 64 and 256. DQK sets
// the Q/K slices, the k-steps of S = Q K^T and Q's register fragments (16 registers for FP8 128,
// 8 for FP8 64, 16 for 16-bit 64; FP8 192/128, 16-bit 128 and 192/128, and 256 read Q from shared
// memory: WsKernelTraits::kQRegs); DV sets V's slices, the
// P.V wgmma (m64n128 or m64n64, two m64n128 at 256) and O's accumulator. ptxas reports no spills
// for any of them (check_ws_kernels.sh); the paged kernels spill 12 bytes in their producer at 24
// registers (nvcc 13, the tail-block copy of copy_paged_blocks) — the consumers' code is the
// contiguous kernels'.
//
// FP8 goes through the e4m3 wgmma (k = 32), whose adder is narrower than fp32: scores and the P.V
// partial sums carry an extra relative error of about 1e-3 over the CPU model (the reason the
// removed wgmma kernels widened to FP16); tests/gpu/ws_kernel_test.cpp holds the measured bounds. P's A fragment for k = 32 takes, per thread, keys 4t..4t+3 and 16+4t..16+4t+3 of each
// 32-key chunk, while the thread's scores are keys 8j + 2t + {0,1}: the transpose permutes the
// keys of every 16-key group (column 4t + 2jj + e holds key 8jj + 2t + e, as in
// attention_fwd_mma.cuh), so the thread's scores are exactly its A bytes; P.V sums over keys, so
// a permutation applied to both P and V is exact.
//
// Otherwise the numerics are those listed in attention_fwd_common.cuh (the CPU model step by step,
// O accumulated by the tensor core as acc * 2^e, LEAN's row sum exact from the codes), with P
// entering the FP8 wgmma as e4m3 itself: its block exponent is the model's k.
//
// Structure (one role per file, as FlashAttention-3's hopper/ and CUTLASS example 88 are organised;
// docs/hopper-kernel-notes.md, Structure): sm90/traits.cuh (key block, tile shape, register
// split, named barriers, ring slots), sm90/tile_context.cuh (the CTA's tile, its mbarriers and
// key blocks), sm90/producer.cuh (TMA and cp.async producers, the V transpose),
// sm90/softmax.cuh (the online softmax of a block), sm90/mainloop.cuh (a consumer warpgroup: the
// wgmma issue order, waits, rescale, then each row's normalisation and lse), sm90/epilogue.cuh
// (O's pair stores per output dtype); this file composes them into the kernel.
#ifndef ZYFA_KERNELS_NVIDIA_ATTENTION_FWD_WS_CUH
#define ZYFA_KERNELS_NVIDIA_ATTENTION_FWD_WS_CUH

#include "nvidia/attention_fwd_common.cuh"
#include "nvidia/attention_ws_tma_params.h"
#include "nvidia/primitives/barriers.cuh"
#include "nvidia/sm90/mainloop.cuh"
#include "nvidia/sm90/producer.cuh"
#include "nvidia/sm90/tile_context.cuh"
#include "nvidia/sm90/traits.cuh"

namespace zyfa {
namespace nvidia {

// PAGED: K and V read through a block table (PagedKvArgs in tma.paged); only the producer and the
// tile's key count differ, so the consumers compute on the same bytes as the contiguous kernel's.
// KEY_BIAS: the consumers add tma.key_bias to the scores (sm90/softmax.cuh); the producer is the
// contiguous kernel's.
template <InKind IN, PMode PM, int DQK, int DV, bool PAGED = false, bool KEY_BIAS = false>
__device__ __forceinline__ void attention_forward_ws(const AttnKernelArgs& a, const WsTmaParams& tma) {
    static_assert(!(PAGED && KEY_BIAS), "no paged key-bias kernels");
    using Traits = WsKernelTraits<IN, PM, DQK, DV, KEY_BIAS>;
    using Shape = typename Traits::Shape;
    TileContext<Shape> tile;
    if (!locate_tile(tile, a)) return;
    if constexpr (PAGED) use_paged_key_count(tile, a, tma.paged);
    // The contiguous TMA producer's Q and first block, issued as soon as the mbarriers exist
    // (issue_first_copies); the paged, transposed-V and cp.async producers issue their own.
    prepare_tile(tile, a, tma, PAGED, [&](const TileContext<Shape>& t) {
        if constexpr (PAGED) {
            return false;
        } else {
            if constexpr (Traits::kFp8 && !Traits::kInt8 && Traits::kKeys == numerics::kVtPadKeys) {
                if (tma.v_transposed != 0) return false;
            }
            return t.use_tma && issue_first_copies<Traits>(t, tma, a);
        }
    });

    if (threadIdx.x < 128 && tile.use_tma) {
        // ---- Producer, tensor memory accelerator ---------------------------------------------------
        setmaxnreg_dec<Traits::kProducerRegs>();
        if constexpr (PAGED) {
            produce_paged_with_tma<Traits>(tile, tma, a);
        } else {
            // FP8 V supplied transposed: the E4M3 128-key kernels only (the host's launch plan).
            if constexpr (Traits::kFp8 && !Traits::kInt8 && Traits::kKeys == numerics::kVtPadKeys) {
                if (tma.v_transposed != 0) {
                    produce_with_tma_v_transposed<Traits>(tile, tma, a);
                    return;
                }
            }
            produce_with_tma<Traits>(tile, tma);
        }
    } else if (threadIdx.x < 128) {
        // ---- Producer, cp.async --------------------------------------------------------------------
        setmaxnreg_dec<Traits::kProducerRegs>();
        produce_with_cp_async<Traits, PAGED>(tile, a, tma.paged);
    } else {
        // ---- Consumers ---------------------------------------------------------------------------
        setmaxnreg_inc<Traits::kConsumerRegs>();
        consumer_warpgroup<Traits>(tile, a, tma.key_bias);
    }
}

}  // namespace nvidia
}  // namespace zyfa

// 384 (512) threads, one CTA per SM: the register cap at entry that setmaxnreg needs.
#define ZYFA_DEFINE_WS_ATTENTION_KERNEL(symbol, in_kind, p_mode, dqk, dv, paged, key_bias)  \
    extern "C" __global__ void __launch_bounds__(128 * (1 + zyfa::nvidia::kWsConsumerWarpgroups), 1) \
        symbol(const zyfa::AttnKernelArgs args, const __grid_constant__ zyfa::nvidia::WsTmaParams tma) { \
        zyfa::nvidia::attention_forward_ws<in_kind, p_mode, dqk, dv, paged, key_bias>(args, tma); \
    }

#endif
