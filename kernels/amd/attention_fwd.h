// FlashAttention forward for gfx950 / gfx942 in HIP C++ with MFMA builtins (no ROCm headers).
//
// Work split (attention_tile_shape.h): one workgroup of 8 waves per (tile of 256 queries, query
// head, batch); wave w owns queries 32w..32w+31 of the tile; lane l and lane l + 32 both hold query
// l % 32. Scores are computed transposed, S^T = K Q^T, so that a lane's accumulator column is its
// own query: row max and row sum are in-lane reductions plus one exchange with lane l ^ 32, and the
// output O^T = V^T P^T again has the query as the column, so alpha, l and the output scale are
// per-lane scalars.
//
// 32x32 accumulator layout (docs/emulator.md, ISA facts): lane l, register v holds D[i][j] with
// j = l % 32 and i = 8 (v / 4) + 4 (l / 32) + v % 4. For S^T tile t of the 64-key block, register v
// of lane l is the score of key 32t + 8 (v / 4) + 4 (l / 32) + v % 4. P inherits that layout and is
// used as the B operand of P.V without moving: its "flat" index f = 16t + v is split into MFMA
// steps of E elements (step f / E, element f % E); mfma_ops.h explains why only A and B agreeing
// matters. V is stored transposed in LDS with the keys permuted by vt_position() so that the A
// operand of each lane (d = l % 32, half h, step st) is E contiguous elements.
//
// The numerics are those of the CPU model (src/cpu/attention_blocked.cpp), step by step:
//   S raw fp32 from the MFMA (its summation order is the only permitted difference),
//   x = S * scale_log2 with scale_log2 = ((softmax_scale * qd) * kd) * log2e,
//   per query and block: only keys in the query's visible interval count; a query that sees no
//   key of the block keeps m, l and acc; m_new = max(m, block max of x);
//   alpha = m == -inf ? 0 : 2^(m - m_new)  (BF16: v_exp_f32; LEAN: exp2_without_transcendental,
//     common/exp2_polynomial.h); the update and the epilogue are common/online_softmax.h and
//     common/row_epilogue.h;
//   BF16 EXACT: p = 2^(x - m_new), row sum of unrounded p, P operand = p rounded to bf16 (RNE);
//   FP8 EXACT: as BF16 EXACT, with P scaled by the fixed 2^k = numerics::p_scale_base_exponent and
//     rounded to FP8 (RNE, numerics::fp8_encode); the 2^-k as LEAN's below;
//   FP8 LEAN: k = numerics::block_scale_exponent, code = numerics::lean_p_code with v_cvt_i32_f32
//     truncation (the launch plan passes lean_p_centre_for(TowardZero)), codes are the FP8 B
//     operand; row sum = one extra MFMA of the codes against a ones operand (exact: the codes are
//     multiples of 2^-9 (2^-10 fnuz) below 2^9, at most 64 of them);
//     gfx950: 2^-k is the scaled MFMA's E8M0 operand (127 - k) for both P.V and the row sum;
//     gfx942: the fp32 partial product and the row sum are multiplied by 2^-k;
//   partial = P.V in fresh fp32 accumulators per 32 output columns, acc = acc*alpha + partial*2^-k,
//   l = l*alpha + row sum; after the last block the sink, if any, joins m and l
//   (common/attention_sink.h), then O = acc * (v_descale * alpha / l), lse = ln2 * (m + log2(l));
//   queries with l == 0 get O = 0 and lse = -inf.
//   A per-key bias (extra.key_bias, common/key_bias.h): each block's biases go to LDS as
//   z = bias * log2e; x = fma(S, scale_log2, z) for the block max and EXACT's exponent, and LEAN's
//   code takes lean_p_bias_with_key_bias(bias, z) as its FMA's constant.
//   The row maxima keep NaN (common/row_max.h): a query that sees a NaN or +inf scaled score has m
//   NaN or +inf at the end and gets O = NaN, lse = NaN; seqlen_k = 0 runs no block (O = 0, lse =
//   -inf) and reads no K/V.
// The INT8 Q/K mode (INT8; common/int8_qk.h, the CPU model's int8 path): S^T from the int8 MFMA
//   (mfma_ops.h: exact int32, so the summation order does not matter), each score held as the
//   biased fp32 int8_score_biased(s) (one integer add); per (query, 64-key block) the factor
//   c = score_scale_log2(softmax_scale, q_descale_per_token[query], k_descale_per_block[block])
//   replaces scale_log2: x = int8_score_value(biased) * c for the block max and EXACT's exponent,
//   and LEAN's code is lean_p_code(biased, 8c, int8_lean_p_bias(bias, 8c)), the bias removal
//   folded into the FMA's constant. P, V and everything after are the FP8 family's, in V's format
//   (the arch's FP8: the plan refuses the other one).
// Built with -ffp-contract=off: no a*b+c is fused unless written as fmaf, as in the CPU model.
//
// Split-KV (attention_extra_args.h): with extra.split.num_splits = n >= 2 the grid's x holds n
//   workgroups per tile; each runs the loop above over its split's whole 64-key blocks of the
//   tile's keys (common/split_kv_args.h: split_key_range), every block exactly as the unsplit
//   kernel computes it at the running maximum the split has reached, and writes fp32 O and lse
//   into its workspace part (the sink in split 0's only); zyfa_attn_merge's kernel merges them.
// Not tuned yet: one K/V buffer in LDS (global -> registers -> LDS, two barriers per block), no
// ping-pong between the waves of a SIMD. The static checks (tests/amd) hold the register,
// LDS and instruction budgets; the emulator issue runs it.
#ifndef ZYFA_KERNELS_AMD_ATTENTION_FWD_H
#define ZYFA_KERNELS_AMD_ATTENTION_FWD_H

#include "amd/attention_tile_shape.h"
#include "amd/hip_device.h"
#include "amd/attention_extra_args.h"
#include "amd/mfma_ops.h"
#include "common/attention_kernel_args.h"
#include "common/attention_mask.h"
#include "common/attention_sink.h"
#include "common/block_scale.h"
#include "common/exp2_polynomial.h"
#include "common/fp32_exp2_log2.h"
#include "common/key_bias.h"
#include "common/fp8_e4m3.h"
#include "common/half_types.h"
#include "common/int8_qk.h"
#include "common/lean_p.h"
#include "common/online_softmax.h"
#include "common/paged_kv_args.h"
#include "common/row_epilogue.h"
#include "common/row_max.h"
#include "common/score_scale.h"

namespace zyfa {
namespace amd {

// LDS column of key j (0..63) in the transposed V block: lane half h's E elements of P.V step st
// are contiguous at st * 2E + h * E (see the top of the file).
template <int E>
__device__ constexpr int vt_position(int key) {
    const int t = key / 32, w = key % 32;
    const int h = (w / 4) % 2;
    const int flat = 16 * t + 4 * (w / 8) + w % 4;
    return (flat / E) * 2 * E + h * E + flat % E;
}

__device__ inline void store_output(void* o, int32_t dtype, int64_t index, float value) {
    if (dtype == kKernelFp32) {
        global_ptr_mut<float>(o)[index] = value;
    } else if (dtype == kKernelBf16) {
        global_ptr_mut<uint16_t>(o)[index] = numerics::float_to_bf16(value);
    } else {
        global_ptr_mut<uint16_t>(o)[index] = numerics::float_to_fp16(value);
    }
}

// PAGED: K and V read through a block table (kernels/common/paged_kv_args.h, extra.paged); only
// the row addresses of K and V and the sequence's key count differ.
// INT8: q and k INT8 (the INT8 Q/K mode), v and P FP8 (so FP8 is true too).
template <bool FP8, bool LEAN, int DQK, int DV, bool PAGED = false, bool INT8 = false>
__device__ inline void attention_forward(const AttnKernelArgs& a, const AttnExtraArgs& extra) {
    const PagedKvArgs& paged = extra.paged;
    const SplitKvArgs& split = extra.split;
    static_assert(!LEAN || FP8, "LEAN needs FP8 inputs");
    static_assert(!INT8 || FP8, "the INT8 Q/K mode's P and V are FP8");
    using M = Mfma<FP8>;  // P.V (and S but for INT8)
    using Operand = typename M::Operand;
    using MQk = typename ScoreMfma<INT8, M>::type;  // S^T = K Q^T
    using QkOperand = typename MQk::Operand;
    constexpr int kElem = FP8 ? 1 : 2;
    using Shape = TileShape<kElem, DQK, DV>;
    constexpr int E = M::kElems;
    constexpr int kStep = 2 * E;
    constexpr int EQ = MQk::kElems;
    constexpr int kQkStep = 2 * EQ;
    constexpr int kQkSteps = DQK / kQkStep;
    constexpr int kPvSteps = kKeyBlock / kStep;
    constexpr int kDTiles = DV / 32;
    constexpr float kNegInf = -__builtin_huge_valf();
    static_assert(DQK % kQkStep == 0, "head_dim_qk must be a multiple of the MFMA step");
    static_assert(!INT8 || kKeyBlock == numerics::kInt8KeyBlock, "one k descale per key block");

    static ZYFA_SHARED u32x4 lds_words[(Shape::kLdsBytes + 15) / 16];
    unsigned char* lds = reinterpret_cast<unsigned char*>(lds_words);
    int* tile_keys = reinterpret_cast<int*>(lds);  // [0] first, [1] one past the last visible key
    unsigned char* k_lds = lds + Shape::kKOffset;
    unsigned char* vt_lds = lds + Shape::kVtOffset;
    float* bias_lds = reinterpret_cast<float*>(lds + Shape::kBiasOffset);

    const int tid = thread_id();
    const int wave = tid / kWaveSize, lane = tid % kWaveSize;
    const int col = lane % 32, half = lane / 32;

    // Heaviest tiles (the last ones under a causal mask) first.
    const int tiles = (a.seqlen_q + kRows - 1) / kRows;
    const int splits = split.num_splits > 1 ? split.num_splits : 1;
    const int split_index = static_cast<int>(block_id_x()) % splits;
    const int tile = tiles - 1 - static_cast<int>(block_id_x()) / splits;
    const int head = block_id_y(), batch = block_id_z();
    SequenceSpan span = sequence_span(a, batch);
    if constexpr (PAGED) span.seqlen_k = paged_key_count(a, paged, batch);  // keys from 0 of their pages
    const int64_t first_q = span.first_q, first_k = span.first_k;
    const int seqlen_q = span.seqlen_q, seqlen_k = span.seqlen_k;
    const int row0 = tile * kRows;
    if (row0 >= seqlen_q) return;  // uniform over the workgroup, before any barrier
    const int head_kv = kv_head_of(a, head);
    const auto mask = static_cast<numerics::MaskKind>(a.mask);

    // This lane's query and its visible keys [row_lo, row_hi).
    const int query = row0 + wave * kRowsPerWave + col;
    const RowKeys row_keys = row_visible_keys(a, span, mask, query);
    const int row_lo = row_keys.begin, row_hi = row_keys.end;

    // The tile's keys: the union of its queries' visible intervals.
    if (tid == 0) {
        tile_keys[0] = seqlen_k;
        tile_keys[1] = 0;
    }
    sync_workgroup();
    if (half == 0 && row_lo < row_hi) {
        __atomic_fetch_min(&tile_keys[0], row_lo, __ATOMIC_RELAXED);
        __atomic_fetch_max(&tile_keys[1], row_hi, __ATOMIC_RELAXED);
    }
    sync_workgroup();
    const int keys_begin = tile_keys[0], keys_end = tile_keys[1];
    // The blocks this workgroup visits: all of the tile's, or its split's whole blocks of them.
    int blocks_begin = keys_begin - keys_begin % kKeyBlock, blocks_end = keys_end;
    if (splits > 1) {
        const SplitKeyRange range = split_key_range(keys_begin, keys_end, split_index, splits);
        blocks_begin = range.first_key;
        const int range_end = range.first_key + range.blocks * kKeyBlock;
        blocks_end = range_end < keys_end ? range_end : keys_end;
    }

    // Q^T as the B operand of S^T = K Q^T, in registers for the whole kernel.
    QkOperand q_operand[kQkSteps];
    {
        const unsigned char* q_row = static_cast<const unsigned char*>(a.q) +
            (batch * a.q_stride_batch + (first_q + query) * a.q_stride_seq + head * a.q_stride_head) * kElem;
        #pragma unroll
        for (int ds = 0; ds < kQkSteps; ++ds) {
            q_operand[ds] = query < seqlen_q
                                ? load_global_operand<QkOperand>(q_row + (ds * kQkStep + half * EQ) * kElem)
                                : splat_bytes<QkOperand>(0u);
        }
    }

    // Paged: the pools at this kv head; each key's page and row come from the block table.
    const unsigned char* k_base = static_cast<const unsigned char*>(a.k) +
        ((PAGED ? 0 : batch * a.k_stride_batch + first_k * a.k_stride_seq) + head_kv * a.k_stride_head) * kElem;
    const unsigned char* v_base = static_cast<const unsigned char*>(a.v) +
        ((PAGED ? 0 : batch * a.v_stride_batch + first_k * a.v_stride_seq) + head_kv * a.v_stride_head) * kElem;
    // Element offset of key `key`'s row from k_base (v_base); -1: a page index outside the pools.
    auto key_row = [&](bool is_v, int key) -> int64_t {
        const int64_t stride_seq = is_v ? a.v_stride_seq : a.k_stride_seq;
        if constexpr (PAGED) {
            return paged_key_offset(paged, is_v ? a.v_stride_batch : a.k_stride_batch, stride_seq, batch, key);
        } else {
            return (int64_t)key * stride_seq;
        }
    };

    // fp32 constants of this (batch, kv head), in the CPU model's order. INT8: q_descale and
    // k_descale hold the per-token [batch, heads_q, seqlen_q] and per-64-key [batch, heads_kv,
    // ceil(seqlen_k / 64)] descales (attention_kernel_args.h); V's stays per head.
    const HeadDescales descale =
        INT8 ? HeadDescales{1.0f, 1.0f, a.v_descale ? a.v_descale[batch * a.heads_kv + head_kv] : 1.0f}
             : head_descales(a, batch, head_kv);
    const float vd = descale.v;
    float scale_log2 = numerics::score_scale_log2(a.softmax_scale, descale.q, descale.k);
    float scale8_log2 = 8.0f * scale_log2;
    [[maybe_unused]] float q_token_descale = 1.0f;
    [[maybe_unused]] const float* k_block_descale = nullptr;
    if constexpr (INT8) {
        if (a.q_descale && query < seqlen_q)
            q_token_descale = a.q_descale[(static_cast<int64_t>(batch) * a.heads_q + head) * a.seqlen_q + query];
        const int64_t key_blocks = (a.seqlen_k + numerics::kInt8KeyBlock - 1) / numerics::kInt8KeyBlock;
        if (a.k_descale) k_block_descale = a.k_descale + (static_cast<int64_t>(batch) * a.heads_kv + head_kv) * key_blocks;
    }
    // The key biases of this (batch, query head), indexed by the key's place in its sequence (the
    // INT8 Q/K mode takes none: its kernels keep no code for them).
    const float* key_bias = INT8 ? nullptr : extra.key_bias;
    if (key_bias) {
        key_bias += a.cu_seqlens_k && !PAGED
                        ? static_cast<int64_t>(head) * a.cu_seqlens_k[a.batch] + first_k
                        : (static_cast<int64_t>(batch) * a.heads_q + head) * a.seqlen_k;
    }
    // The log2-domain score of a raw S value (INT8: the biased fp32 of the int32 score); with a key
    // bias, of the block's key r.
    auto score_log2 = [&](float raw, int r) {
        if constexpr (INT8) return numerics::int8_score_value(raw) * scale_log2;
        if (key_bias) return numerics::biased_score_log2(raw, scale_log2, bias_lds[r]);
        return raw * scale_log2;
    };

    f32x16 acc[kDTiles];
    #pragma unroll
    for (int dt = 0; dt < kDTiles; ++dt) acc[dt] = f32x16{};
    float m = kNegInf, l = 0.0f;

    for (int block = blocks_begin; block < blocks_end; block += kKeyBlock) {
        sync_workgroup();  // every wave is done with the previous block's K and V
        // K block -> LDS [key][d]; keys past the sequence are zero.
        constexpr int kKChunks = DQK * kElem / kVectorBytes;
        for (int i = tid; i < kKeyBlock * kKChunks; i += kThreads) {
            const int r = i / kKChunks, c = i % kKChunks;
            u32x4 value = {0u, 0u, 0u, 0u};
            if (block + r < seqlen_k) {
                const int64_t row = key_row(false, block + r);
                if (!PAGED || row >= 0) value = *global_ptr<u32x4>(k_base + row * kElem + c * kVectorBytes);
            }
            *reinterpret_cast<u32x4*>(k_lds + r * Shape::kKRowBytes + c * kVectorBytes) = value;
        }
        // V block -> LDS transposed [d][vt_position(key)]; zero past the sequence (0 * garbage
        // could be NaN).
        constexpr int kVChunks = DV * kElem / kVectorBytes;
        constexpr int kPerChunk = kVectorBytes / kElem;
        for (int i = tid; i < kKeyBlock * kVChunks; i += kThreads) {
            const int r = i / kVChunks, c = i % kVChunks;
            u32x4 value = {0u, 0u, 0u, 0u};
            if (block + r < seqlen_k) {
                const int64_t row = key_row(true, block + r);
                if (!PAGED || row >= 0) value = *global_ptr<u32x4>(v_base + row * kElem + c * kVectorBytes);
            }
            unsigned char* column = vt_lds + vt_position<E>(r) * kElem;
            #pragma unroll
            for (int e = 0; e < kPerChunk; ++e) {
                const int d = c * kPerChunk + e;
                if constexpr (FP8) {
                    column[d * Shape::kVtRowBytes] = static_cast<unsigned char>(value[e / 4] >> (8 * (e % 4)));
                } else {
                    *reinterpret_cast<uint16_t*>(column + d * Shape::kVtRowBytes) =
                        static_cast<uint16_t>(value[e / 2] >> (16 * (e % 2)));
                }
            }
        }
        if (key_bias && tid < kKeyBlock) {  // 0 past the sequence: those keys are never visible
            bias_lds[tid] = block + tid < seqlen_k ? numerics::key_bias_log2(key_bias[block + tid]) : 0.0f;
        }
        sync_workgroup();

        // INT8: this (query, 64-key block)'s factor, in the CPU model's order.
        if constexpr (INT8) {
            const float kd = k_block_descale ? k_block_descale[block / numerics::kInt8KeyBlock] : 1.0f;
            scale_log2 = numerics::score_scale_log2(a.softmax_scale, q_token_descale, kd);
            scale8_log2 = 8.0f * scale_log2;
        }

        // S^T = K Q^T: two 32x32 tiles (keys 0..31, 32..63 of the block) x this wave's 32 queries.
        f32x16 s[2];
        #pragma unroll
        for (int t = 0; t < 2; ++t) {
            const unsigned char* k_row = k_lds + (32 * t + col) * Shape::kKRowBytes + half * EQ * kElem;
            if constexpr (INT8) {
                i32x16 si = i32x16{};
                #pragma unroll
                for (int ds = 0; ds < kQkSteps; ++ds)
                    si = MQk::mac(load_operand<QkOperand>(k_row + ds * kQkStep * kElem), q_operand[ds], si);
                #pragma unroll
                for (int v = 0; v < 16; ++v) s[t][v] = numerics::int8_score_biased(si[v]);  // one integer add
            } else {
                s[t] = f32x16{};
                #pragma unroll
                for (int ds = 0; ds < kQkSteps; ++ds) {
                    s[t] = M::mac(load_operand<Operand>(k_row + ds * kQkStep * kElem), q_operand[ds], s[t], kE8m0One,
                                  kE8m0One);
                }
            }
        }

        // Online softmax for this lane's query.
        const bool active = (row_lo > block ? row_lo : block) < (row_hi < block + kKeyBlock ? row_hi : block + kKeyBlock);
        float block_max = kNegInf;
        #pragma unroll
        for (int f = 0; f < 32; ++f) {
            const int t = f / 16, v = f % 16;
            const int key = block + 32 * t + 8 * (v / 4) + 4 * half + v % 4;
            if (key >= row_lo && key < row_hi)
                block_max = numerics::max_keep_nan(block_max, score_log2(s[t][v], key - block));
        }
        block_max = numerics::max_keep_nan(block_max, other_half(block_max, lane));
        const float m_new = numerics::max_keep_nan(m, block_max);
        float alpha;
        if constexpr (LEAN) {
            alpha = numerics::running_max_rescale(m, m_new, numerics::Exp2WithoutTranscendental{});
        } else {
            alpha = numerics::running_max_rescale(m, m_new);
        }

        // P as the B operand of P.V: flat index f -> step f / E, element f % E.
        Operand p_operand[kPvSteps];
        #pragma unroll
        for (int st = 0; st < kPvSteps; ++st) p_operand[st] = splat_bytes<Operand>(0u);
        float row_sum = 0.0f;
        int exponent = 0;
        if constexpr (LEAN) {
            constexpr numerics::Fp8Format kFormat = M::kFormat;
            exponent = numerics::block_scale_exponent(m_new, block_max, a.max_block_exponent, kFormat);
            float bias = numerics::lean_p_bias(m_new, exponent, a.lean_centre, kFormat);
            if constexpr (INT8) bias = numerics::int8_lean_p_bias(bias, scale8_log2);  // the score's bias folded in
            #pragma unroll
            for (int f = 0; f < 32; ++f) {
                const int t = f / 16, v = f % 16;
                const int key = block + 32 * t + 8 * (v / 4) + 4 * half + v % 4;
                const float code_bias = key_bias ? numerics::lean_p_bias_with_key_bias(bias, bias_lds[key - block]) : bias;
                const uint32_t lean = numerics::lean_p_code(s[t][v], scale8_log2, code_bias,
                                                            numerics::FloatToIntRounding::TowardZero, kFormat);
                const uint32_t code = (key >= row_lo && key < row_hi) ? lean : 0u;
                const int e = f % E;
                p_operand[f / E][e / 4] |= code << (8 * (e % 4));
            }
        } else {
            // FP8 EXACT scales every block's P by the fixed 2^k (k = 8 in e4m3fn, 7 in e4m3fnuz:
            // 1.0 stays finite) before rounding it to FP8 (RNE), as the CPU model does.
            if constexpr (FP8) exponent = numerics::p_scale_base_exponent(M::kFormat);
            [[maybe_unused]] const float up = numerics::exp2_int(exponent);
            #pragma unroll
            for (int f = 0; f < 32; ++f) {
                const int t = f / 16, v = f % 16;
                const int key = block + 32 * t + 8 * (v / 4) + 4 * half + v % 4;
                // exp2(-inf) = 0 for a key this query does not see: no branch around the exponential.
                const float x = (key >= row_lo && key < row_hi) ? score_log2(s[t][v], key - block) - m_new : kNegInf;
                const float p = numerics::exp2_fp32(x);
                row_sum += p;  // EXACT: the denominator of unrounded probabilities
                const int e = f % E;
                if constexpr (FP8) {
                    p_operand[f / E][e / 4] |= static_cast<uint32_t>(numerics::fp8_encode(p * up, M::kFormat))
                                               << (8 * (e % 4));
                } else {
                    p_operand[f / E][e / 2] |= static_cast<uint32_t>(numerics::float_to_bf16(p)) << (16 * (e % 2));
                }
            }
            row_sum = row_sum + other_half(row_sum, lane);  // the same bits on both lanes
        }
        // 2^-k: inside the scaled MFMA on gfx950, on the fp32 partial product elsewhere.
        const int p_scale = M::kScaled ? kE8m0One - exponent : kE8m0One;
        const float down = M::kScaled ? 1.0f : numerics::exp2_int(-exponent);
        if constexpr (LEAN) {
            // The rounded row sum: the codes that multiply V, summed by the matrix unit.
            const Operand ones = splat_bytes<Operand>(
                static_cast<uint32_t>(numerics::fp8_encode(1.0f, M::kFormat)));
            f32x16 sums = f32x16{};
            #pragma unroll
            for (int st = 0; st < kPvSteps; ++st) sums = M::mac(ones, p_operand[st], sums, kE8m0One, p_scale);
            row_sum = sums[0] * down;
        }

        // partial = V^T P^T per 32 output columns, then acc = acc*alpha + partial*2^-k.
        #pragma unroll
        for (int dt = 0; dt < kDTiles; ++dt) {
            const unsigned char* vt_row = vt_lds + (32 * dt + col) * Shape::kVtRowBytes + half * E * kElem;
            f32x16 partial = f32x16{};
            #pragma unroll
            for (int st = 0; st < kPvSteps; ++st) {
                partial = M::mac(load_operand<Operand>(vt_row + st * kStep * kElem), p_operand[st], partial, kE8m0One,
                                 p_scale);
            }
            // A select, not a branch: every lane computes and a query that sees no key of the
            // block keeps its state. Under `if (active)` the compiler sinks the MFMAs whose
            // results only that branch uses into it, and an MFMA must run with a full EXEC
            // (tests/emu runs the emulator's strict default, which rejects a partial one).
            #pragma unroll
            for (int v = 0; v < 16; ++v) {
                const float updated = numerics::accumulator_update(acc[dt][v], alpha, partial[v], down);
                acc[dt][v] = active ? updated : acc[dt][v];
            }
        }
        const float l_updated = numerics::running_sum_update(l, alpha, row_sum);
        l = active ? l_updated : l;
        m = active ? m_new : m;
    }

    // Epilogue: the sink, if any, joins m and l (common/attention_sink.h; FMAs only, no v_exp_f32);
    // O = acc * (v_descale * alpha / l'); queries that saw no key (nor a sink) get 0 and lse = -inf,
    // those that saw a NaN or +inf score or sink NaN.
    // Split-KV: fp32 O and lse into this split's workspace part (common/split_kv_args.h), the sink
    // in split 0's only (the merge then counts it once).
    if (query >= seqlen_q) return;
    const bool varlen = a.cu_seqlens_q != nullptr;
    const float* sinks = splits > 1 && split_index != 0 ? nullptr : a.sinks;
    const numerics::SinkedRow row = numerics::fold_sink(m, l, numerics::sink_log2(sinks, head));
    const bool poisoned = numerics::sinked_row_poisoned(row);
    const bool seen = numerics::sinked_row_seen(row);
    const float out_scale = numerics::sinked_output_scale(vd, row);
    void* o = a.o;
    int32_t out_dtype = a.out_dtype;
    float* lse = a.lse;
    int64_t o_row = batch * a.o_stride_batch + (first_q + query) * a.o_stride_seq + head * a.o_stride_head;
    if (splits > 1) {
        o = split.part_o + split_index * split.part_o_stride;
        out_dtype = kKernelFp32;
        lse = split.part_lse + split_index * split.part_lse_stride;
        o_row = split_part_o_index(varlen, first_q, batch, a.seqlen_q, a.heads_q, a.head_dim_v, query, head);
    }
    #pragma unroll
    for (int dt = 0; dt < kDTiles; ++dt) {
        #pragma unroll
        for (int v = 0; v < 16; ++v) {
            const int d = 32 * dt + 8 * (v / 4) + 4 * half + v % 4;
            store_output(o, out_dtype, o_row + d, numerics::row_output(acc[dt][v] * out_scale, poisoned, seen));
        }
    }
    if (lse && half == 0) {
        const int64_t total_q = varlen ? a.cu_seqlens_q[a.batch] : 0;
        const int64_t index = split_part_lse_index(varlen, total_q, first_q, batch, a.seqlen_q, a.heads_q, query, head);
        global_ptr_mut<float>(lse)[index] = numerics::row_lse(numerics::sinked_row_lse(row), poisoned, seen);
    }
}

}  // namespace amd
}  // namespace zyfa

// One extern "C" kernel per (input family / P scheme, head dims); the symbol names are the launch
// plan's (src/hip/attention_launch_plan.cpp). Eight waves per workgroup and two waves per SIMD: one
// workgroup per CU, whose LDS (at most 44 KiB) then also fits gfx942's 64 KiB. Every kernel takes
// AttnExtraArgs (the block table of the paged variants, split-KV) as its second parameter.
#define ZYFA_AMD_ATTENTION_KERNEL_WITH(symbol, fp8, lean, dqk, dv, int8, paged)                                \
    extern "C" __global__ void __attribute__((amdgpu_flat_work_group_size(zyfa::amd::kThreads,             \
                                                                          zyfa::amd::kThreads),            \
                                              amdgpu_waves_per_eu(zyfa::amd::kWavesPerSimd)))             \
    symbol(const zyfa::AttnKernelArgs args, const zyfa::amd::AttnExtraArgs extra) {                       \
        zyfa::amd::attention_forward<fp8, lean, dqk, dv, paged, int8>(args, extra);                       \
    }
#define ZYFA_AMD_ATTENTION_KERNEL(symbol, fp8, lean, dqk, dv, int8) \
    ZYFA_AMD_ATTENTION_KERNEL_WITH(symbol, fp8, lean, dqk, dv, int8, false)

// The paged variants read K and V through extra.paged's block table.
#define ZYFA_AMD_PAGED_ATTENTION_KERNEL(symbol, fp8, lean, dqk, dv, int8) \
    ZYFA_AMD_ATTENTION_KERNEL_WITH(symbol, fp8, lean, dqk, dv, int8, true)

#endif
