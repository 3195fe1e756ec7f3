// The consumer warpgroups' main loop of the warp-specialised sm_90a kernel (attention_fwd_ws.cuh):
// warpgroups 1 and 2 at kConsumerRegisters, 64 query rows each. Per block: S = Q K^T (wgmma m64n64
// or m64n128, Q's A fragments held in registers or Q read by descriptor, K from shared memory),
// the online softmax on the accumulator registers (sm90/softmax.cuh), P packed in registers into
// the A operand of O += P V (wgmma m64n128 or m64n64, V from shared memory); FP8 LEAN also sums
// each row of P with an e4m3 wgmma against tiles of ones (wgmma_rs_row_sums_e4m3). This file holds the issue order of those wgmmas, the waits on the ring's
// mbarriers, the stage releases and O's rescale; the epilogue (sm90/epilogue.cuh) then writes the
// rows.
#ifndef ZYFA_KERNELS_NVIDIA_SM90_MAINLOOP_CUH
#define ZYFA_KERNELS_NVIDIA_SM90_MAINLOOP_CUH

#include "nvidia/attention_fwd_common.cuh"
#include "common/attention_sink.h"
#include "common/row_epilogue.h"
#include "nvidia/primitives/barriers.cuh"
#include "nvidia/primitives/copy.cuh"
#include "nvidia/primitives/wgmma.cuh"
#include "nvidia/sm90/epilogue.cuh"
#include "nvidia/sm90/softmax.cuh"
#include "nvidia/sm90/tile_context.cuh"
#include "nvidia/sm90/traits.cuh"

namespace zyfa {
namespace nvidia {

// O += P V over one k-step for DV = 2N output columns: m64n128 (primitives/wgmma.cuh's wgmma_pv)
// or m64n64; FP8 reads Vt K-major, 16-bit V MN-major.
template <InKind IN, int N>
__device__ __forceinline__ void wgmma_pv_ws(float (&d)[N], const uint32_t (&p)[4], uint64_t desc_v) {
    if constexpr (N == 64) {
        wgmma_pv<IN>(d, p, desc_v, 1);
    } else {
        wgmma_rs_n64<IN, IN != InKind::E4m3>(d, p, desc_v, 1);
    }
}


template <bool B>
struct LastTag {  // the last block's P.V (consumer_warpgroup's issue_pv)
    static constexpr bool value = B;
};


// A consumer warpgroup (64 query rows, at kConsumerRegisters): the main loop over the tile's key
// blocks, then the epilogue on its rows (its per-row part here, O's pair stores in
// sm90/epilogue.cuh).
// One function, and its steps lambdas on its variables (OnlineSoftmax and OutputPairs hold
// references to them as those lambdas did): the compiler simplifies each function before inlining
// it, and the tile's values read from a struct, the variables in a struct passed by reference, or
// the epilogue in a function of its own, each changed the code (the association of address
// arithmetic, the order of branches and of O's PHI nodes, hence ptxas's registers). As written,
// the SASS is the one function's of before the split (docs/hopper-kernel-notes.md, Structure).
// key_bias: WsTmaParams::key_bias, read by the key-bias kernels only (Traits::kKeyBias).
template <class Traits>
__device__ __forceinline__ void consumer_warpgroup(const TileContext<typename Traits::Shape>& tile,
                                                   const AttnKernelArgs& a, const float* key_bias) {
    using Shape = typename Traits::Shape;
    constexpr InKind IN = Traits::kIn;
    constexpr PMode PM = Traits::kPMode;
    constexpr int DV = Traits::kDv;
    constexpr int kRows = Traits::kRows, kKeys = Traits::kKeys, kStages = Traits::kStages;
    constexpr bool kFp8 = Traits::kFp8;
    constexpr float kNegInf = -__builtin_huge_valf();
    // The tile's values as locals first (TileContext says why).
    const TileContext<Shape> t = tile;
    const int row0 = t.row0, head = t.head, batch = t.batch, head_kv = t.head_kv;
    const int64_t first_q = t.first_q;
    const int seqlen_q = t.seqlen_q;
    const SequenceSpan span = t.span;
    const auto mask = t.mask;
    const bool use_tma = t.use_tma;
    const int block_begin = t.block_begin, blocks = t.blocks, whole_begin = t.whole_begin, whole_end = t.whole_end;
    const uint32_t smem_base = TileContext<Shape>::smem_base();
    const uint32_t q_full = TileContext<Shape>::q_full();
    // The barrier addresses as lambdas on smem_base, as the steps that call them were written.
    auto k_full = [&](int stage) { return smem_base + Shape::kKFullOffset + 8 * stage; };
    auto v_full = [&](int stage) { return smem_base + Shape::kVFullOffset + 8 * stage; };
    auto k_empty = [&](int stage) { return smem_base + Shape::kKEmptyOffset + 8 * stage; };
    auto v_empty = [&](int stage) { return smem_base + Shape::kVEmptyOffset + 8 * stage; };
    const int ct = threadIdx.x - 128;
    const int consumer = ct / 128;  // 0 or 1: rows 64 * consumer .. + 63 of the tile
    const int warp = (ct / 32) % 4, lane = ct % 32;
    const int group = lane / 4, quad_lane = lane % 4;
    const int row_base = row0 + 64 * consumer + 16 * warp + group;  // + 8 * rr
    // thread_now, lane_now (sm90/traits.cuh): the thread index read again where the loop needs it.

    // The INT8 Q/K mode: a.q_descale and a.k_descale hold the per-token and per-64-key-block
    // descales (attention_kernel_args.h), read per row and per block below; V's stays per head.
    constexpr bool kInt8 = Traits::kInt8;
    const HeadDescales descale =
        kInt8 ? HeadDescales{1.0f, 1.0f, a.v_descale ? a.v_descale[batch * a.heads_kv + head_kv] : 1.0f}
              : head_descales(a, batch, head_kv);
    const float vd = descale.v;
    // A negative scale (softmax_scale or a descale below zero) is taken as |c| on the scores of
    // -Q: (-s)(-c) = s c exactly, and Q's sign bits flip exactly, so the row maximum is always
    // max(s) c, without a branch on c's sign in each row's chain (which kept the compiler from
    // interleaving the two rows of a thread). NaN keeps its sign and gives NaN either way.
    const float signed_scale_log2 = numerics::score_scale_log2(a.softmax_scale, descale.q, descale.k);
    // INT8: the factor differs per (row, 64-key block) and so may its sign; the softmax takes the
    // extreme that its sign asks for (sm90/softmax.cuh), Q is never negated.
    const bool negate_q = !kInt8 && signed_scale_log2 < 0.0f;
    const float scale_log2 = negate_q ? -signed_scale_log2 : signed_scale_log2;
    constexpr uint32_t kSignBits = Traits::kSignBits;
    const float scale8_log2 = 8.0f * scale_log2;
    const float scale8_div128 = scale8_log2 * 0x1p-7f;  // lean_code_bits' operand
    const float lean_centre = a.lean_centre;
    const int max_block_exponent = a.max_block_exponent;
    int row_first_key[2], row_end_key[2];
#pragma unroll
    for (int rr = 0; rr < 2; ++rr) {
        const RowKeys keys = row_visible_keys(a, span, mask, row_base + 8 * rr);
        row_first_key[rr] = keys.begin;
        row_end_key[rr] = keys.end;
    }

    // INT8: softmax_scale * q_descale_per_token of the thread's two rows (the first product of
    // numerics::score_scale_log2's order), the k descales of this (batch, kv head), the keys of
    // the sequence (the last block's descale entries end there).
    float q_scale[2] = {1.0f, 1.0f};
    const float* k_block_descale = nullptr;
    const int key_count = span.seqlen_k;
    if constexpr (kInt8) {
#pragma unroll
        for (int rr = 0; rr < 2; ++rr) {
            const int row = row_base + 8 * rr;
            const float qd = a.q_descale && row < span.seqlen_q
                                 ? a.q_descale[(static_cast<int64_t>(batch) * a.heads_q + head) * a.seqlen_q + row]
                                 : 1.0f;
            q_scale[rr] = a.softmax_scale * qd;
        }
        const int64_t key_blocks = (a.seqlen_k + numerics::kInt8KeyBlock - 1) / numerics::kInt8KeyBlock;
        if (a.k_descale) k_block_descale = a.k_descale + (static_cast<int64_t>(batch) * a.heads_kv + head_kv) * key_blocks;
    }
    // The key biases of this (batch, query head), indexed by the key's place in its sequence
    // (common/key_bias.h; null in the kernels without them).
    const float* key_bias_row = nullptr;
    if constexpr (Traits::kKeyBias) {
        key_bias_row = key_bias + (a.cu_seqlens_k ? static_cast<int64_t>(head) * a.cu_seqlens_k[a.batch] + span.first_k
                                                  : (static_cast<int64_t>(batch) * a.heads_q + head) * a.seqlen_k);
    }
    float m[2] = {kNegInf, kNegInf};
    float running_max[2] = {kNegInf, kNegInf};  // LEAN's lazy anchor only (m is then the anchor)
    float l[2] = {0.0f, 0.0f};
    // acc holds O's accumulator times 2^acc_exponent. Exponents are integral fp32 values
    // (numerics::block_scale_exponent_integral, exp2_integral): no int conversions per block.
    // LEAN's lazy anchor: k is one constant, so acc_exponent is too (a row that sees no key has
    // acc = 0 and l = 0 whatever it holds).
    const float initial_acc_exponent =
        Traits::kLeanLazyAnchor ? static_cast<float>(numerics::lean_anchor_exponent(numerics::Fp8Format::E4M3FN)) : 0.0f;
    float acc_exponent[2] = {initial_acc_exponent, initial_acc_exponent};
    constexpr int kAcc = Traits::kAcc;
    // LEAN's row sums: per block by wgmmas against the ones tiles (into block_sum, a column per
    // k-step), added to l_scaled, which holds this thread's share of l times 2^acc_exponent and
    // takes O's rescales in fp32 in the model's order (l * alpha + the block's sum); the quad's
    // shares are added in the epilogue.
    constexpr bool kRowSumByMma = Traits::kRowSumByMma;
    float block_sum[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    float l_scaled[2] = {0.0f, 0.0f};
    float acc[kAcc];
#pragma unroll
    for (int i = 0; i < kAcc; ++i) acc[i] = 0.0f;

    // Descriptors of the 128-byte swizzled slices (attention_ws_tile_shape.h): one wgmma k-step
    // is 32 bytes of a row, 16-bit (k = 16) and e4m3 (k = 32) alike, so k-step ks starts
    // 32 (ks % 4) bytes into slice ks / 4; 8-row groups are 1024 bytes apart; the leading
    // offset is unused.
    constexpr int kQkSteps = Traits::kQkSteps;
    auto step_offset = [](int ks, int rows) { return static_cast<uint32_t>((ks / 4) * rows * 128 + (ks % 4) * 32); };
    // The 16-bit 128-key steps read Q by descriptor beside 64 scores, P and O: from the consumer
    // index of lane 0 (__shfl_sync: warp-uniform, which ptxas can see) the k-steps' descriptors
    // live in uniform registers; from the thread's own they took vector registers, spilled, and
    // cost two R2UR per k-step.
    constexpr bool kUniformQDescriptor = !kFp8 && kKeys == 128 && !Traits::kQRegs;
    const int q_consumer = kUniformQDescriptor ? __shfl_sync(0xFFFFFFFFu, consumer, 0) : consumer;
    const uint64_t desc_q =
        wgmma_descriptor(smem_base + Shape::kQOffset + q_consumer * 64 * 128, 16, 1024) | kSwizzle128Bits;
    // Q's A fragments are read from shared memory once per tile and the score wgmma takes A
    // from registers: per block only K is read from shared memory.
    // Fragment of k-step ks (32 bytes of a row): qa[ks][0] = row g bytes 4t..4t+3, [1] row
    // g + 8, [2] row g bytes 16 + 4t.., [3] row g + 8 (the A layout of primitives/wgmma.cuh).
    // Not at head dim 256, nor at 128-key steps with more than 4 k-steps (FP8 192/128, 16-bit
    // 128 and 192/128; WsKernelTraits::kQRegs says why).
    constexpr bool kQRegs = Traits::kQRegs;
    uint32_t qa[kQRegs ? kQkSteps : 1][4];
    auto load_q_fragments = [&] {
#pragma unroll
        for (int ks = 0; ks < kQkSteps; ++ks)
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const int row = 64 * consumer + 16 * warp + group + 8 * (j % 2);
                const int chunk = 2 * ks + j / 2;
                const int offset = (chunk / 8) * (kRows * 128) + row * 128 + (((chunk % 8) ^ (row % 8)) * 16);
                qa[kQRegs ? ks : 0][j] =
                    *reinterpret_cast<const uint32_t*>(smem + Shape::kQOffset + offset + 4 * quad_lane) ^
                    (negate_q ? kSignBits : 0u);
            }
    };
    // Q read by the score wgmma from shared memory (!kQRegs): each consumer warpgroup flips its
    // own 64 rows there, 8 KB per 128-byte column slice, before its first score product.
    auto negate_q_in_shared = [&] {
        constexpr int kWords = 64 * 128 / 16 / 128;  // 16-byte words per thread and slice
#pragma unroll
        for (int slice = 0; slice < Shape::kQkSlices; ++slice)
#pragma unroll
            for (int w = 0; w < kWords; ++w) {
                uint4* word = reinterpret_cast<uint4*>(smem + Shape::kQOffset + slice * kRows * 128 +
                                                       consumer * 64 * 128 + (w * 128 + ct % 128) * 16);
                uint4 v = *word;
                v.x ^= kSignBits;
                v.y ^= kSignBits;
                v.z ^= kSignBits;
                v.w ^= kSignBits;
                *word = v;
            }
        fence_proxy_async_shared();  // st.shared before this warpgroup's wgmma reads Q
        named_barrier_sync(kConsumerBarrier0 + consumer, 128);
    };
    // Stage 0's descriptors, computed once; a stage adds its offset to the start address.
    const uint64_t desc_k0 = wgmma_descriptor(smem_base + Shape::kKOffset, 16, 1024) | kSwizzle128Bits;
    constexpr int kScores = Traits::kScores;  // per thread: 2 rows x kKeys / 4 keys
    // FP8 LEAN's ones tiles (WsTileShape::kOnesTiles): 8 rows, chunks of 16 keys 128 bytes apart,
    // one k-step of 32 keys each.
    const uint64_t desc_ones = wgmma_descriptor(smem_base + Shape::kOnesOffset, 128, 128);
    // S(next) = Q K(next)^T, committed as one wgmma group; with `previous`, LEAN's row sums of
    // that block's P join the group (block_sum): P.V's own A fragments (k-step ks = keys 32 ks ..
    // 32 ks + 31) against ones tile ks, so k-step ks's sums land in column 2 ks alone, i.e. in
    // block_sum[0] and [2] of quad lane ks ([1] and [3] hold zeros), and no k-step's sum passes
    // through the narrow adder with another's. In a group of their own ptxas serialises every
    // wgmma (C7511).
    auto row_sum_wgmmas = [&](const uint32_t (*p)[4]) {
#pragma unroll
        for (int ks = 0; ks < kKeys / 32; ++ks)
            wgmma_rs_row_sums_e4m3(block_sum, p[ks], descriptor_plus(desc_ones, (ks * Shape::kOnesTileBytes) >> 4), ks > 0);
    };
    using ScoreReg = typename Traits::ScoreReg;
    auto issue_scores = [&](ScoreReg (&s)[kScores], RingSlot slot, const uint32_t (*previous)[4]) {
        const uint64_t desc_k = descriptor_plus(desc_k0, slot.stage * (Shape::kKBytes >> 4));
        // A PTX comment: tests/gpu/check_ws_kernels.sh counts the wgmmas from here to the commit.
        asm volatile("// zyfa-ws-score-product");
        wgmma_fence();
#pragma unroll
        for (int ks = 0; ks < kQkSteps; ++ks) {
            if constexpr (kInt8) {  // s8 x s8 -> s32, exact
                if constexpr (kKeys == 128 && kQRegs) {
                    wgmma_rs_n128_s8(s, qa[ks], descriptor_plus(desc_k, step_offset(ks, kKeys) >> 4), ks > 0);
                } else if constexpr (kKeys == 128) {
                    wgmma_ss_n128_s8(s, desc_q + (step_offset(ks, kRows) >> 4),
                                     descriptor_plus(desc_k, step_offset(ks, kKeys) >> 4), ks > 0);
                } else if constexpr (kQRegs) {
                    wgmma_rs_n64_s8(s, qa[ks], descriptor_plus(desc_k, step_offset(ks, kKeys) >> 4), ks > 0);
                } else {
                    wgmma_ss_n64_s8(s, desc_q + (step_offset(ks, kRows) >> 4), desc_k + (step_offset(ks, kKeys) >> 4),
                                    ks > 0);
                }
            } else if constexpr (kKeys == 128 && kQRegs) {
                wgmma_rs_n128<IN>(s, qa[ks], descriptor_plus(desc_k, step_offset(ks, kKeys) >> 4), ks > 0);
            } else if constexpr (kKeys == 128) {
                wgmma_ss_n128<IN>(s, desc_q + (step_offset(ks, kRows) >> 4),
                                  descriptor_plus(desc_k, step_offset(ks, kKeys) >> 4), ks > 0);
            } else if constexpr (kQRegs) {
                wgmma_rs_n64<IN>(s, qa[ks], descriptor_plus(desc_k, step_offset(ks, kKeys) >> 4), ks > 0);
            } else {
                wgmma_scores<IN>(s, desc_q + (step_offset(ks, kRows) >> 4), desc_k + (step_offset(ks, kKeys) >> 4),
                                 ks > 0);
            }
        }
        if constexpr (kRowSumByMma) {
            if (previous) row_sum_wgmmas(previous);
        }
        wgmma_commit();
    };

    // Per block n, in this order (FlashAttention-3's intra-warpgroup overlap):
    //   issue S(n+1) = Q K(n+1)^T; O *= the rescale of block n; issue O += P(n) V(n); wait for
    //   S(n+1) only; softmax of block n+1 -> P(n+1) (P(n) stays untouched: the P.V wgmma reads it
    //   from registers); wait for P(n) V(n); release the stage.
    // So O's rescale runs while the tensor cores compute S(n+1), and block n+1's softmax while
    // they compute block n's P.V. With one P buffer (WsKernelTraits::kOnePBuffer) the softmax
    // leaves block n+1's probabilities in its score registers, and they become P(n+1) after the
    // wait for P(n) V(n).
    constexpr int kPvSteps = Traits::kPvSteps;  // k-steps of P.V over a block
    constexpr bool kOnePBuffer = Traits::kOnePBuffer;
    ScoreReg s[kScores];
    uint32_t pa[kPvSteps][4];
    float rescale[2] = {1.0f, 1.0f};
    // The online softmax of a block (sm90/softmax.cuh), on the variables above.
    const OnlineSoftmax<Traits> softmax{block_begin, whole_begin, whole_end, row_first_key, row_end_key, s,
                                        scale_log2, scale8_div128, lean_centre, max_block_exponent, m, running_max, l,
                                        rescale, acc_exponent, q_scale, k_block_descale, key_count, key_bias_row};
    auto run_softmax = [&](int index, auto& out) {
        const int block = block_begin + index * kKeys;
        if (block >= whole_begin && block + kKeys <= whole_end) {
            softmax.softmax_block(index, out, MaskedTag<false>{});
        } else {
            softmax.softmax_block(index, out, MaskedTag<true>{});
        }
    };

    // After waiting for a stage written by cp.async (generic proxy) and read by the wgmma (async
    // proxy). Not after the tensor memory accelerator's copies (async proxy themselves; the
    // producer fences its own stores of FP8 V's transpose before arriving): the fence is a
    // MEMBAR and a FENCE.VIEW.ASYNC, twice per block (measured: docs/hopper-kernel-notes.md).
    const bool consumer_fence = !use_tma;
    auto fence_after_wait = [&] {
        if (consumer_fence) {
            sass_marker<7>();
            fence_proxy_async_shared();
            sass_marker<8>();
        }
    };
    // This warp is done with a stage's K (Shape::kSeparateEmpty: S of its block has completed; with
    // one empty barrier per stage, release() frees K and V together).
    auto release_k = [&](RingSlot slot) {
        if constexpr (Shape::kSeparateEmpty) {
            if (lane_now() == 0) mbarrier_arrive(k_empty(slot.stage));
        }
    };
    mbarrier_wait(q_full, 0);
    if constexpr (kQRegs) {
        load_q_fragments();
    } else if (negate_q) {
        negate_q_in_shared();
    }
    if (blocks > 0) {
        mbarrier_wait(k_full(0), 0);
        fence_after_wait();
        issue_scores(s, RingSlot{0, 0}, nullptr);
        wgmma_wait<0>();
        pin_registers(s);
        release_k(RingSlot{0, 0});
        run_softmax(0, pa);
        if constexpr (kOnePBuffer) softmax.pack_probabilities(pa);
        // Not applied: O and l are 0 (and a NaN in a row's first block must not reach them).
        rescale[0] = rescale[1] = 1.0f;
    }

    auto wait_v = [&](RingSlot slot) {
        mbarrier_wait(v_full(slot.stage), slot.parity);
        fence_after_wait();
    };
    const uint32_t v_addr0 = smem_base + Shape::kVOffset;
    // Head dim 256: O is two m64n128 products per k-step, over V's columns 0-127 and 128-255
    // (FP8: two DV = 128 Vt halves, transpose_v_tile; 16-bit: slices 0-1 and 2-3).
    constexpr int kVtColumns = DV == 256 ? 128 : DV;
    constexpr uint32_t kVHalfBytes = kFp8 ? kKeys * 128 : 2 * kKeys * 128;
    auto pv_wgmma = [&](const uint32_t (&pk)[4], uint64_t desc) {
        if constexpr (DV == 256) {
            wgmma_pv_ws<Traits::kPvIn>(*reinterpret_cast<float(*)[64]>(&acc[0]), pk, desc);
            wgmma_pv_ws<Traits::kPvIn>(*reinterpret_cast<float(*)[64]>(&acc[64]), pk, descriptor_plus(desc, kVHalfBytes >> 4));
        } else {
            wgmma_pv_ws<Traits::kPvIn>(acc, pk, desc);
        }
    };
    // FP8 Vt: rows = DV output columns, chunks of 16 keys, K-major. 16-bit V: MN-major in the
    // 128-byte swizzle (CUTLASS's canonical form
    // ((64 columns, 2 slices), (8 keys, 8 groups)) : ((1, leading), (128 bytes, stride))): the
    // leading offset steps to the next 64-column slice (kKeys * 128 bytes), the stride to the
    // next 8 keys (1024 bytes); a k-step is 16 keys, 2048 bytes.
    const uint64_t desc_v0 = !kFp8 ? wgmma_descriptor(v_addr0, kKeys * 128, 1024) | kSwizzle128Bits
                                   : wgmma_descriptor(v_addr0, kVtColumns * 16, 128);
    // O += P(index) V(index), committed as one wgmma group; the last block's (`last`) with its
    // row sums, which no score group follows.
    auto issue_pv = [&](RingSlot slot, auto& p, auto last_tag) {
        [[maybe_unused]] constexpr bool kLast = decltype(last_tag)::value;
        const uint64_t desc_v = descriptor_plus(desc_v0, slot.stage * (Shape::kVBytes >> 4));
        // No pin_registers here: an asm that "defines" acc or P after this group's S wgmma
        // makes ptxas serialise the wgmmas (C7513); the wgmma's own operands order them.
        wgmma_fence();
        if constexpr (kFp8) {
            constexpr uint32_t kVStepBytes = 2 * kVtColumns * 16;
#pragma unroll
            for (int kk = 0; kk < kPvSteps; ++kk) pv_wgmma(p[kk], descriptor_plus(desc_v, (kk * kVStepBytes) >> 4));
            if constexpr (kRowSumByMma && kLast) row_sum_wgmmas(p);
        } else {
#pragma unroll
            for (int kk = 0; kk < kPvSteps; ++kk) pv_wgmma(p[kk], descriptor_plus(desc_v, (kk * 16 * 128) >> 4));
        }
        wgmma_commit();
    };
    // O *= the rescale of the block whose P.V comes next (the P.V before it is done), issued
    // after that block's scores so that it runs beside them on the tensor cores. A warp whose rows
    // all keep their scale (EXACT: the running max held) skips the multiplies; the vote keeps the
    // branch uniform over the warp. LEAN does not test: its anchor moves in most warp steps, and
    // the vote measured slower there (docs/hopper-kernel-notes.md, 2026-12-04T14:47Z).
    auto rescale_output = [&] {
        constexpr bool kSkipUnitRescale = PM == PMode::Exact;
        if (!kSkipUnitRescale || __any_sync(0xFFFFFFFFu, rescale[0] != 1.0f || rescale[1] != 1.0f)) {
#pragma unroll
            for (int i = 0; i < kAcc; ++i) acc[i] = acc[i] * rescale[(i % 4) / 2];
        }
    };
    auto release = [&](RingSlot slot) {  // this warp is done with the stage (its V half: kSeparateEmpty)
        if (lane_now() == 0) mbarrier_arrive(v_empty(slot.stage));
    };

    // One block but the last, P(index) in p_now: the next block's scores and softmax (into
    // p_next) overlap this block's P.V. No branch between the issues and the waits but EXACT's
    // warp-uniform rescale vote (which ptxas takes: check_ws_kernels.sh), and P in two buffers
    // that alternate (no copy): ptxas then keeps the wgmmas asynchronous. With one
    // buffer p_next is p_now, written only after the wait for this block's P.V.
    // slot: block index's ring slot.
    auto step = [&](int index, RingSlot slot, auto& p_now, auto& p_next) {
        sass_marker<1>();
        const RingSlot next = next_slot<kStages>(slot);
        mbarrier_wait(k_full(next.stage), next.parity);
        fence_after_wait();
        wait_v(slot);
        issue_scores(s, next, p_now);  // s is free: block index's softmax is done
        rescale_output();              // beside S(index + 1) on the tensor cores
        issue_pv(slot, p_now, LastTag<false>{});
        wgmma_wait<1>();  // S(index + 1); P(index) V(index) may still run
        pin_registers(s);
        release_k(next);
        run_softmax(index + 1, p_next);
        wgmma_wait<0>();
        pin_registers(acc);
#pragma unroll
        for (int kk = 0; kk < kPvSteps; ++kk) pin_registers(p_now[kk]);
        release(slot);
        if constexpr (kOnePBuffer) softmax.pack_probabilities(p_next);
        // l = l * alpha + the block's rounded sum (the model's order): block index's sum joins
        // l_scaled before the rescale of block index + 1, whose own sum joins at the next step.
        if constexpr (kRowSumByMma) {
            pin_registers(block_sum);
#pragma unroll
            for (int rr = 0; rr < 2; ++rr) l_scaled[rr] = (l_scaled[rr] + block_sum[2 * rr]) * rescale[rr];
        }
        sass_marker<2>();
    };
    uint32_t pb[kPvSteps][4];  // pa's partner (unused with one P buffer)
    RingSlot slot{0, 0};  // block index's
    if constexpr (kOnePBuffer) {
        for (int index = 0; index + 1 < blocks; ++index) {
            step(index, slot, pa, pa);
            slot = next_slot<kStages>(slot);
        }
    } else {
        for (int index = 0; index + 1 < blocks; index += 2) {
            step(index, slot, pa, pb);
            slot = next_slot<kStages>(slot);
            if (index + 2 < blocks) {
                step(index + 1, slot, pb, pa);
                slot = next_slot<kStages>(slot);
            }
        }
    }
    if (blocks > 0) {  // the last block: P in pa when blocks is odd or P has one buffer, in pb when even
        wait_v(slot);
        rescale_output();
        if constexpr (kOnePBuffer) {
            issue_pv(slot, pa, LastTag<true>{});
        } else if (blocks % 2) {
            issue_pv(slot, pa, LastTag<true>{});
        } else {
            issue_pv(slot, pb, LastTag<true>{});
        }
        wgmma_wait<0>();
        pin_registers(acc);
        release(slot);
        if constexpr (kRowSumByMma) {
            pin_registers(block_sum);
#pragma unroll
            for (int rr = 0; rr < 2; ++rr) l_scaled[rr] = l_scaled[rr] + block_sum[2 * rr];
        }
    }


    // Epilogue: O = acc * 2^-acc_exponent * (v_descale * alpha / l'), the sink folded into m and l
    // first; rows that saw no key (nor a sink) get 0 and lse = -inf, rows whose maximum saw a NaN
    // or +inf score or sink NaN (row_output).
    if constexpr (kRowSumByMma) {
        // l_scaled holds the sum of the rounded probabilities, scaled like O.
#pragma unroll
        for (int rr = 0; rr < 2; ++rr) {
            // Quad lane t holds k-step t's share of the row's sum (64-key blocks: lanes 0 and 1).
            l_scaled[rr] += __shfl_xor_sync(0xFFFFFFFFu, l_scaled[rr], 1);
            l_scaled[rr] += __shfl_xor_sync(0xFFFFFFFFu, l_scaled[rr], 2);
            l[rr] = l_scaled[rr] * numerics::exp2_integral(-acc_exponent[rr]);
        }
    }
    const int64_t total_q = a.cu_seqlens_q ? a.cu_seqlens_q[a.batch] : 0;
    const int out_thread = thread_now() - 128, out_quad_lane = out_thread % 4;
    const int out_row_base = row0 + out_thread / 128 * 64 + (out_thread / 32) % 4 * 16 + out_thread % 32 / 4;
    bool row_valid[2], poisoned[2], seen[2];
    float out_scale[2], unscale[2];
    int64_t o_row[2];
    // The sink, if any, joins m and l here, after the last block (common/attention_sink.h): the
    // main loop does not know about it.
    const float sink_z = numerics::sink_log2(a.sinks, head);
#pragma unroll
    for (int rr = 0; rr < 2; ++rr) {
        const int row = out_row_base + 8 * rr;
        row_valid[rr] = row < seqlen_q;
        const numerics::SinkedRow sinked = numerics::fold_sink(m[rr], l[rr], sink_z);
        poisoned[rr] = numerics::sinked_row_poisoned(sinked);
        seen[rr] = numerics::sinked_row_seen(sinked);
        out_scale[rr] = numerics::sinked_output_scale(vd, sinked);
        unscale[rr] = numerics::exp2_integral(-acc_exponent[rr]);
        o_row[rr] = batch * a.o_stride_batch + (first_q + row) * a.o_stride_seq + head * a.o_stride_head +
                    2 * out_quad_lane;
        if (row_valid[rr] && a.lse && out_quad_lane == 0) {
            const int64_t index = a.cu_seqlens_q ? head * total_q + first_q + row
                                                 : (static_cast<int64_t>(batch) * a.heads_q + head) * a.seqlen_q + row;
            a.lse[index] = row_lse(numerics::sinked_row_lse(sinked), poisoned[rr], seen[rr]);
        }
    }
    // O (sm90/epilogue.cuh): 16-bit outputs at head_dim_v <= 128 through a tile of shared memory that
    // no role needs any more (FP8: this warpgroup's V staging buffer, free once the last block's
    // transpose is done, which its v_full wait saw; 16-bit: its own half of Q, free once its last
    // score wgmma is done), where O's rows are 16-byte aligned; otherwise pair by pair.
    const OutputPairs<DV, kAcc> pairs{row_valid, o_row, acc, unscale, out_scale, poisoned, seen};
    constexpr bool kStagedOutput =
        DV <= 128 && (kFp8 ? 64 * DV * 2 <= Shape::kVLoadBytes : DV * 2 / 128 <= Shape::kQkSlices);
    if constexpr (kStagedOutput) {
        if (a.out_dtype != kKernelFp32 && staged_output_aligned(a)) {
            const int wg = out_thread / 128;
            const StagedOutputTile tile =
                kFp8 ? StagedOutputTile{smem_base + Shape::kVStagingOffset + wg * Shape::kVLoadBytes, 64 * 128}
                     : StagedOutputTile{smem_base + Shape::kQOffset + wg * 64 * 128, kRows * 128};
            const int wg_row0 = row0 + 64 * wg;
            const int64_t o_row0 = batch * a.o_stride_batch + (first_q + wg_row0) * a.o_stride_seq + head * a.o_stride_head;
            const int valid_rows = seqlen_q - wg_row0;
            store_output_staged(a, pairs, tile, kConsumerBarrier0 + wg, out_thread % 128, o_row0, valid_rows,
                                a.out_dtype == kKernelBf16);
            return;
        }
    }
    store_output_pairs(a, pairs);
}

}  // namespace nvidia
}  // namespace zyfa

#endif
