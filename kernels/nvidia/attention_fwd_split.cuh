// Split-KV forward kernel for short query chunks and decode steps (seqlen_q of 1-128 against long
// keys), BF16/FP16, mma.sync m16n8k16 (sm_80+; built for sm_90a). docs/hopper-kernel-notes.md,
// "Split-KV", says why this is a kernel of its own rather than the warp-specialised one.
//
// Pack GQA: the query heads that share a kv head are the rows of one tile. Packed row r of kv
// head hk is query token r / G of head hk * G + r % G (G = heads_q / heads_kv), so a decode step
// of GQA 32/8 fills 4 of the 16 rows and each K/V byte is read once per kv head, not once per
// query head. Masks use the token index.
//
// One CTA (4 warps) per (16 packed rows, kv head) x split x sequence: grid (row_tiles * heads_kv,
// num_splits, batch). The tile's visible keys, from the first 64-key block (aligned to the start of
// the sequence, as every zyfa kernel's) to the last, are dealt out to the splits in whole 64-key
// blocks: split s takes ceil(blocks / num_splits) of them. The CTA streams its blocks through a
// three-stage cp.async ring; inside a block warp w takes keys 16w..16w+15 with its own online
// softmax (running max, row sum and fp32 accumulators, the numerics of attention_fwd_mma.cuh at
// a 16-key step: EXACT, p = exp2f(x - m), row sum of unrounded p, P rounded to 16 bits for P.V).
// At the end the four warps' states are combined in shared memory in warp order (fixed, so
// deterministic) and the split's normalised fp32 O and natural-log lse go to its workspace part
// (common/split_kv_args.h); a second launch, zyfa_attn_merge's kernel, merges the parts by lse.
// A split that sees no key writes lse = -inf (the merge then skips its O).
//
// Paged K/V (SplitParams::paged.block_table set, attention_split_params.h): the sequence's key count
// is seqused_k's and each K/V row is gathered through the block table by its own cp.async (a row is
// one key, so it never crosses a page) into the same stage layout; nothing after the copy changes,
// so the result is bitwise the contiguous call's on the same keys.
// Sinks (AttnKernelArgs::sinks): split 0 folds the sink into its part (common/attention_sink.h), the
// other splits do not, so the merge counts it once; split 0 is always launched, and a split 0 that
// sees no key writes O = 0, lse = the sink (the softmax over the sink alone), as the unsplit kernels.
//
// Compiled with -fmad=false like the other kernels (no contraction unless written as fmaf).
#ifndef ZYFA_KERNELS_NVIDIA_ATTENTION_FWD_SPLIT_CUH
#define ZYFA_KERNELS_NVIDIA_ATTENTION_FWD_SPLIT_CUH

#include "common/paged_kv_args.h"
#include "common/split_kv_args.h"
#include "nvidia/attention_fwd_mma.cuh"
#include "nvidia/attention_split_params.h"

namespace zyfa {
namespace nvidia {

template <int DQK, int DV>
struct SplitTileShape {
    static constexpr int kElem = 2;
    static constexpr int kQkRowBytes = DQK * kElem + kRowPad;  // kRowPad: conflict-free ldmatrix
    static constexpr int kVRowBytes = DV * kElem + kRowPad;
    static constexpr int kQBytes = kSplitRows * kQkRowBytes;
    static constexpr int kKBytes = kSplitKeyBlock * kQkRowBytes;
    static constexpr int kVBytes = kSplitKeyBlock * kVRowBytes;
    static constexpr int kStageBytes = kKBytes + kVBytes;
    static constexpr int kQOffset = kHeaderBytes;
    static constexpr int kStageOffset = kQOffset + kQBytes;
    static constexpr int kSharedBytes = kStageOffset + kSplitStages * kStageBytes;
    // The warps' final states, over the stages once the loop is done.
    static constexpr int kCombineBytes = kSplitWarps * kSplitRows * (DV + 2) * 4;
    static_assert(kCombineBytes <= kSplitStages * kStageBytes, "the combine area fits the stages");
    static_assert(DQK % 16 == 0 && DV % 16 == 0, "head dims must be multiples of 16");
    static_assert(kSplitKeyBlock == kSplitWarps * 16, "each warp takes 16 keys of a block");
};

// The paged form of load_rows_async: row r is key key0 + r of sequence `batch`, read from `pool` (the
// K or V pool at the kv head; page and row strides in elements) through the block table
// (paged_key_offset); rows from valid_rows on, and rows whose page index lies outside
// [0, num_pages), are zero-filled without reading global memory.
template <int kThreads, int kElem>
__device__ __forceinline__ void load_paged_rows_async(unsigned char* smem, int smem_row_bytes, const unsigned char* pool,
                                                      int64_t page_stride, int64_t row_stride, const PagedKvArgs& paged,
                                                      int batch, int key0, int rows, int valid_rows, int row_bytes) {
    const int chunks = row_bytes / 16;
    for (int i = threadIdx.x; i < rows * chunks; i += kThreads) {
        const int r = i / chunks, c = i - r * chunks;
        const int64_t offset = r < valid_rows ? paged_key_offset(paged, page_stride, row_stride, batch, key0 + r) : -1;
        const bool valid = offset >= 0;
        cp_async_16(shared_address(smem + r * smem_row_bytes + c * 16), valid ? pool + offset * kElem + c * 16 : pool,
                    valid ? 16 : 0);
    }
}

template <InKind IN, int DQK, int DV>
__device__ __forceinline__ void attention_forward_split(const AttnKernelArgs& a, const SplitParams& params) {
    const SplitKvArgs& sp = params.split;
    const PagedKvArgs& table = params.paged;
    static_assert(IN == InKind::Bf16 || IN == InKind::Fp16, "the split kernels are 16-bit");
    using Shape = SplitTileShape<DQK, DV>;
    constexpr int kElem = Shape::kElem;
    constexpr float kNegInf = -__builtin_huge_valf();
    extern __shared__ __align__(128) unsigned char smem[];
    int* tile_keys = reinterpret_cast<int*>(smem);  // [0] first, [1] one past the last visible key
    unsigned char* q_smem = smem + Shape::kQOffset;

    const int head_kv = blockIdx.x / sp.row_tiles;
    const int tile = blockIdx.x - head_kv * sp.row_tiles;
    const int split = blockIdx.y, batch = blockIdx.z;
    const int group_size = a.heads_q / a.heads_kv;
    const bool paged = table.block_table != nullptr;
    SequenceSpan span = sequence_span(a, batch);
    if (paged) span.seqlen_k = paged_key_count(a, table, batch);  // first_k is 0 (cu_seqlens_k null)
    const int64_t first_q = span.first_q, first_k = span.first_k;
    const int seqlen_q = span.seqlen_q, seqlen_k = span.seqlen_k;
    const int packed_rows = group_size * seqlen_q;
    const int packed0 = tile * kSplitRows;
    if (packed0 >= packed_rows) return;  // rows past a packed sequence: nobody writes them
    const auto mask = static_cast<numerics::MaskKind>(a.mask);

    // The tile's keys: the union of its rows' visible intervals (rows of one token share one).
    if (threadIdx.x == 0) {
        tile_keys[0] = seqlen_k;
        tile_keys[1] = 0;
    }
    __syncthreads();
    if (threadIdx.x < kSplitRows && packed0 + static_cast<int>(threadIdx.x) < packed_rows) {
        const int token = packed_row(packed0 + static_cast<int>(threadIdx.x), head_kv, group_size).token;
        const auto range = numerics::visible_keys(token, seqlen_q, seqlen_k, mask, a.window_left, a.window_right);
        if (range.begin < range.end) {
            atomicMin(&tile_keys[0], static_cast<int>(range.begin));
            atomicMax(&tile_keys[1], static_cast<int>(range.end));
        }
    }

    // Q: 16 packed rows, each its own (token, head) address; rows past the sequence are zero.
    {
        constexpr int kChunks = DQK * kElem / 16;
        for (int i = threadIdx.x; i < kSplitRows * kChunks; i += kSplitThreads) {
            const int r = i / kChunks, c = i - r * kChunks;
            const int packed = packed0 + r;
            const bool valid = packed < packed_rows;
            const PackedRow pr = packed_row(valid ? packed : 0, head_kv, group_size);
            const int token = pr.token, head = pr.head;
            const unsigned char* src = static_cast<const unsigned char*>(a.q) +
                (batch * a.q_stride_batch + (first_q + token) * a.q_stride_seq + head * a.q_stride_head) * kElem + c * 16;
            cp_async_16(shared_address(q_smem + r * Shape::kQkRowBytes + c * 16), valid ? src : a.q, valid ? 16 : 0);
        }
    }
    cp_async_commit();
    __syncthreads();
    const int keys_begin = tile_keys[0], keys_end = tile_keys[1];

    // This split's share of the tile's 64-key blocks (common/split_kv_args.h).
    const SplitKeyRange share = split_key_range(keys_begin, keys_end, split, sp.num_splits);
    const int blocks = share.blocks;
    const int key_first = share.first_key;

    // Paged: the pools at the kv head (their batch stride is the page stride).
    const unsigned char* k_global = static_cast<const unsigned char*>(a.k) +
        ((paged ? 0 : batch * a.k_stride_batch + first_k * a.k_stride_seq) + head_kv * a.k_stride_head) * kElem;
    const unsigned char* v_global = static_cast<const unsigned char*>(a.v) +
        ((paged ? 0 : batch * a.v_stride_batch + first_k * a.v_stride_seq) + head_kv * a.v_stride_head) * kElem;
    // Keys past the sequence are zero-filled, never read: masked keys multiply P = 0 by finite V.
    auto load_kv = [&](int block, int stage) {
        const int key0 = key_first + block * kSplitKeyBlock;
        const int valid = min(kSplitKeyBlock, seqlen_k - key0);
        unsigned char* stage_base = smem + Shape::kStageOffset + stage * Shape::kStageBytes;
        if (paged) {
            load_paged_rows_async<kSplitThreads, kElem>(stage_base, Shape::kQkRowBytes, k_global, a.k_stride_batch,
                                                        a.k_stride_seq, table, batch, key0, kSplitKeyBlock, valid,
                                                        DQK * kElem);
            load_paged_rows_async<kSplitThreads, kElem>(stage_base + Shape::kKBytes, Shape::kVRowBytes, v_global,
                                                        a.v_stride_batch, a.v_stride_seq, table, batch, key0,
                                                        kSplitKeyBlock, valid, DV * kElem);
            return;
        }
        load_rows_async<kSplitThreads>(stage_base, Shape::kQkRowBytes, k_global + key0 * a.k_stride_seq * kElem,
                                       a.k_stride_seq * kElem, kSplitKeyBlock, valid, DQK * kElem);
        load_rows_async<kSplitThreads>(stage_base + Shape::kKBytes, Shape::kVRowBytes,
                                       v_global + key0 * a.v_stride_seq * kElem, a.v_stride_seq * kElem,
                                       kSplitKeyBlock, valid, DV * kElem);
    };
#pragma unroll
    for (int i = 0; i < kSplitStages - 1; ++i) {
        if (i < blocks) load_kv(i, i);
        cp_async_commit();
    }

    const float scale_log2 = numerics::score_scale_log2(a.softmax_scale, 1.0f, 1.0f);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int group = lane / 4, quad_lane = lane % 4;
    int row_first_key[2], row_end_key[2];
#pragma unroll
    for (int rr = 0; rr < 2; ++rr) {
        const int packed = packed0 + group + 8 * rr;
        RowKeys keys{0, 0};
        if (packed < packed_rows) keys = row_visible_keys(a, span, mask, packed_row(packed, head_kv, group_size).token);
        row_first_key[rr] = keys.begin;
        row_end_key[rr] = keys.end;
    }

    float m[2] = {kNegInf, kNegInf};
    float l[2] = {0.0f, 0.0f};
    float acc[DV / 8][4];
#pragma unroll
    for (int n = 0; n < DV / 8; ++n) acc[n][0] = acc[n][1] = acc[n][2] = acc[n][3] = 0.0f;

    const uint32_t q_lane = shared_address(q_smem) + ((lane % 8) + 8 * ((lane / 8) % 2)) * Shape::kQkRowBytes +
                            16 * (lane / 16);
    const int b_lane_row = (lane % 8) + 8 * (lane / 16), b_lane_byte = 16 * ((lane / 8) % 2);

    for (int i = 0; i < blocks; ++i) {
        cp_async_wait_group<kSplitStages - 2>();
        __syncthreads();  // block i visible to all; everyone is done with block i - 1's stage
        if (i + kSplitStages - 1 < blocks) load_kv(i + kSplitStages - 1, (i + kSplitStages - 1) % kSplitStages);
        cp_async_commit();
        const unsigned char* stage_base = smem + Shape::kStageOffset + (i % kSplitStages) * Shape::kStageBytes;
        const unsigned char* k_smem = stage_base + 16 * warp * Shape::kQkRowBytes;
        const unsigned char* v_smem = stage_base + Shape::kKBytes + 16 * warp * Shape::kVRowBytes;
        const int key0 = key_first + i * kSplitKeyBlock + 16 * warp;

        // S = Q K^T: 16 rows x this warp's 16 keys, two 16x8 tiles.
        float s[2][4];
#pragma unroll
        for (int n = 0; n < 2; ++n) s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.0f;
        const uint32_t k_lane = shared_address(k_smem) + b_lane_row * Shape::kQkRowBytes + b_lane_byte;
#pragma unroll
        for (int ks = 0; ks < DQK * kElem / 32; ++ks) {
            uint32_t qa[4], kb[4];
            ldmatrix_x4(qa, q_lane + ks * 32);
            ldmatrix_x4(kb, k_lane + ks * 32);
            mma_16x8<IN>(s[0], qa, kb[0], kb[1]);
            mma_16x8<IN>(s[1], qa, kb[2], kb[3]);
        }

        // Online softmax per row; P packed into the P.V A operand (pa[2 * (n % 2) + rr]).
        uint32_t pa[4] = {0u, 0u, 0u, 0u};
        float alpha[2];
        bool active[2];
#pragma unroll
        for (int rr = 0; rr < 2; ++rr) {
            const int lo = row_first_key[rr], hi = row_end_key[rr];
            active[rr] = max(lo, key0) < min(hi, key0 + 16);
            float block_max = kNegInf;
#pragma unroll
            for (int n = 0; n < 2; ++n)
#pragma unroll
                for (int e = 0; e < 2; ++e) {
                    const int key = key0 + 8 * n + 2 * quad_lane + e;
                    if (key >= lo && key < hi) block_max = numerics::max_keep_nan(block_max, s[n][2 * rr + e] * scale_log2);
                }
            block_max = quad_max(block_max);
            const float m_new = numerics::max_keep_nan(m[rr], block_max);
            alpha[rr] = numerics::running_max_rescale(m[rr], m_new);
            float row_sum = 0.0f;
#pragma unroll
            for (int n = 0; n < 2; ++n) {
                float p[2];
#pragma unroll
                for (int e = 0; e < 2; ++e) {
                    const int key = key0 + 8 * n + 2 * quad_lane + e;
                    p[e] = (key >= lo && key < hi) ? numerics::exp2_fp32(s[n][2 * rr + e] * scale_log2 - m_new) : 0.0f;
                    row_sum += p[e];
                }
                pa[2 * n + rr] = pack_p16<IN>(p[0], p[1]);
            }
            row_sum = quad_sum(row_sum);
            if (active[rr]) {
                l[rr] = numerics::running_sum_update(l[rr], alpha[rr], row_sum);
                m[rr] = m_new;
            }
        }

        // partial = P V (one 16-key k-step), acc = acc * alpha + partial.
        const uint32_t v_lane = shared_address(v_smem) + ((lane % 8) + 8 * ((lane / 8) % 2)) * Shape::kVRowBytes +
                                (8 * (lane / 16)) * kElem;
#pragma unroll
        for (int np = 0; np < DV / 16; ++np) {
            float partial[2][4] = {{0.0f, 0.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 0.0f, 0.0f}};
            uint32_t vb[4];
            ldmatrix_x4_trans(vb, v_lane + np * 16 * kElem);
            mma_16x8<IN>(partial[0], pa, vb[0], vb[1]);
            mma_16x8<IN>(partial[1], pa, vb[2], vb[3]);
#pragma unroll
            for (int h = 0; h < 2; ++h)
#pragma unroll
                for (int c = 0; c < 4; ++c) {
                    const int rr = c / 2;
                    if (active[rr]) {
                        acc[2 * np + h][c] = numerics::accumulator_update(acc[2 * np + h][c], alpha[rr], partial[h][c], 1.0f);
                    }
                }
        }
    }
    cp_async_wait_all();
    __syncthreads();  // the stages become the combine area

    // The warps' states: m, l per row, then acc [warp][row][DV].
    float* combine_ml = reinterpret_cast<float*>(smem + Shape::kStageOffset);  // [warp][row][2]
    float* combine_acc = combine_ml + kSplitWarps * kSplitRows * 2;            // [warp][row][DV]
#pragma unroll
    for (int rr = 0; rr < 2; ++rr) {
        const int row = group + 8 * rr;
        if (quad_lane == 0) {
            combine_ml[(warp * kSplitRows + row) * 2 + 0] = m[rr];
            combine_ml[(warp * kSplitRows + row) * 2 + 1] = l[rr];
        }
#pragma unroll
        for (int n = 0; n < DV / 8; ++n)
#pragma unroll
            for (int e = 0; e < 2; ++e)
                combine_acc[(warp * kSplitRows + row) * DV + 8 * n + 2 * quad_lane + e] = acc[n][2 * rr + e];
    }
    __syncthreads();

    // Combine in warp order and write this split's part: O = sum_w acc_w 2^(m_w - M) / L, split 0
    // with the sink folded into M and L (the top comment).
    const float* sinks = split == 0 ? a.sinks : nullptr;
    float* part_o = sp.part_o + split * sp.part_o_stride;
    float* part_lse = sp.part_lse + split * sp.part_lse_stride;
    const int64_t total_q = a.cu_seqlens_q ? a.cu_seqlens_q[a.batch] : 0;
    for (int idx = threadIdx.x; idx < kSplitRows * DV; idx += kSplitThreads) {
        const int row = idx / DV, d = idx - row * DV;
        const int packed = packed0 + row;
        if (packed >= packed_rows) continue;
        float big_m = kNegInf;
#pragma unroll
        for (int w = 0; w < kSplitWarps; ++w) big_m = numerics::max_keep_nan(big_m, combine_ml[(w * kSplitRows + row) * 2]);
        float big_l = 0.0f, sum = 0.0f;
#pragma unroll
        for (int w = 0; w < kSplitWarps; ++w) {
            const float alpha = numerics::running_max_rescale(combine_ml[(w * kSplitRows + row) * 2], big_m);
            big_l = numerics::running_sum_update(big_l, 1.0f, combine_ml[(w * kSplitRows + row) * 2 + 1] * alpha);
            sum = numerics::accumulator_update(sum, 1.0f, combine_acc[(w * kSplitRows + row) * DV + d], alpha);
        }
        const PackedRow pr = packed_row(packed, head_kv, group_size);
        // Without a sink (null, or a split other than 0) the fold gives m, l and a factor of 1: the
        // bits of the plain epilogue.
        const numerics::SinkedRow sinked = numerics::fold_sink(big_m, big_l, numerics::sink_log2(sinks, pr.head));
        const bool poisoned = numerics::sinked_row_poisoned(sinked);
        const bool seen = numerics::sinked_row_seen(sinked);
        const bool varlen = a.cu_seqlens_q != nullptr;
        part_o[split_part_o_index(varlen, first_q, batch, a.seqlen_q, a.heads_q, DV, pr.token, pr.head) + d] =
            row_output(sum * numerics::sinked_output_scale(1.0f, sinked), poisoned, seen);
        if (d == 0) {
            part_lse[split_part_lse_index(varlen, total_q, first_q, batch, a.seqlen_q, a.heads_q, pr.token, pr.head)] =
                row_lse(numerics::sinked_row_lse(sinked), poisoned, seen);
        }
    }
}

}  // namespace nvidia
}  // namespace zyfa

// One extern "C" kernel per (16-bit type, head dims); the symbol names are the launch plan's.
#define ZYFA_DEFINE_SPLIT_KERNEL(symbol, in_kind, dqk, dv)                                                \
    extern "C" __global__ void __launch_bounds__(zyfa::kSplitThreads)                                     \
        symbol(const zyfa::AttnKernelArgs args, const zyfa::nvidia::SplitParams split) {                  \
        zyfa::nvidia::attention_forward_split<in_kind, dqk, dv>(args, split);                             \
    }

#endif
