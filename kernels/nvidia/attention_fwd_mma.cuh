// FlashAttention-2-style forward kernel with mma.sync tensor-core MMAs (sm_80+; e4m3 needs sm_89+).
// The launch plan runs it on sm_80 images (16-bit inputs), and on sm_90a only for an O whose base
// or strides are odd (attention_fwd_ws.cuh, which runs every other problem there, stores O in
// pairs).
//
// One CTA per (query tile of kRows = 16 * WARPS rows, query head, batch); each warp owns 16 query
// rows. Keys are visited in blocks of exactly kKeyBlock = 64 keys aligned to the start of the
// sequence (the CPU model's key_block: LEAN's block scales depend on it), K/V blocks are loaded
// with cp.async into two shared-memory stages (block n+1 loads while block n computes).
//
// The numerics are those of the CPU model, src/cpu/attention_blocked.cpp, step by step:
//   S = Q K^T raw fp32 (the MMA's accumulation order is the only permitted difference),
//   x = S * scale_log2 with scale_log2 = ((softmax_scale * qd) * kd) * log2e,
//   per row and block: only keys in the row's visible interval count; a row that sees no key of
//   the block keeps m, l and acc unchanged; m_new = max(m, block max of x);
//   alpha = m == -inf ? 0 : exp2f(m - m_new);
//   EXACT: p = exp2f(x - m_new) (CUDA's exp2f, not ex2.approx), row sum of unrounded p,
//          P for the MMA = p rounded to bf16/fp16 (cvt.rn), or e4m3 of p * 2^8 (cvt.rn.satfinite);
//   LEAN:  k = numerics::block_scale_exponent, code = numerics::lean_p_code (see lean_code below),
//          the codes are the e4m3 A operand, row sum = sum of decoded codes * 2^-k;
//   partial = P.V in fresh fp32 accumulators per 8 output columns, acc = acc*alpha + partial*2^-k,
//   l = l*alpha + row sum, finally O = acc * (v_descale / l), lse = ln2 * (m + log2f(l)), and rows
//   with l == 0 get O = 0, lse = -inf; every max keeps NaN (numerics::max_keep_nan) and rows whose
//   m ends NaN or +inf get O = lse = NaN (kernels/common/row_max.h). The update and the epilogue
//   are kernels/common/online_softmax.h and row_epilogue.h.
// Compiled with -fmad=false so that, like the CPU model (-ffp-contract=off), no a*b+c is fused
// unless written as fmaf; divisions are IEEE (no fast-math).
//
// FP8 P.V: the MMA's B operand wants V with the key index contiguous, so each K/V block's V is
// byte-transposed in shared memory (transpose_v_fp8). The transpose also permutes the keys inside
// every 32-key chunk so that a thread's P accumulator values (keys 8j + 2t + {0,1} of the S
// tiles) are exactly the A-operand bytes it must supply: key 16h + 8jj + 2t + e of a chunk goes to
// column 16h + 4t + 2jj + e. P.V sums over keys, so a permutation applied to both P and V is exact.
#ifndef ZYFA_KERNELS_NVIDIA_ATTENTION_FWD_MMA_CUH
#define ZYFA_KERNELS_NVIDIA_ATTENTION_FWD_MMA_CUH

#include "nvidia/attention_fwd_common.cuh"
#include "nvidia/attention_tile_shape.h"
#include "nvidia/input_kind.h"
#include "nvidia/primitives/convert.cuh"
#include "nvidia/primitives/copy.cuh"
#include "nvidia/primitives/ldmatrix.cuh"

namespace zyfa {
namespace nvidia {

// ---- PTX wrappers of this kernel (the shared ones: primitives/; shared helpers:
// attention_fwd_common.cuh) ---------------------------------------------------------------------

// d = a * b + c for one 16x8 fp32 tile; k = 32 bytes of A row / B column.
template <InKind IN>
__device__ __forceinline__ void mma_16x8(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    if constexpr (IN == InKind::Bf16) {
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                     "{%0,%1,%2,%3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    } else if constexpr (IN == InKind::Fp16) {
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                     "{%0,%1,%2,%3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    } else {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 890
        asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                     "{%0,%1,%2,%3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#else
        __trap();  // e4m3 MMA needs sm_89+; the launch plan never picks this on older GPUs
#endif
    }
}

// numerics::lean_p_code for e4m3fn with round-to-nearest-even, bit for bit: round_half_even(y)
// is (y + 1.5*2^23) - 1.5*2^23, and for y in [0, 126] the sum's low mantissa bits are the rounded
// integer itself, so the code is read from the bits (no float-to-int conversion instruction).
__device__ __forceinline__ uint32_t lean_code(float s_raw, float scale8_log2, float bias) {
    const float y = numerics::clamp_float(fmaf(s_raw, scale8_log2, bias), 0.0f,
                                          numerics::lean_p_max_code(numerics::Fp8Format::E4M3FN));
    return numerics::float_bits(y + 12582912.0f) & 0xFFu;
}

// rows x row_bytes from global (row stride in bytes) into shared (row stride smem_row_bytes);
// rows >= valid_rows are zero-filled without reading global memory.
template <int kThreads>
__device__ __forceinline__ void load_rows_async(unsigned char* smem, int smem_row_bytes, const unsigned char* global,
                                                int64_t global_row_bytes, int rows, int valid_rows, int row_bytes) {
    const int chunks = row_bytes / 16;
    for (int i = threadIdx.x; i < rows * chunks; i += kThreads) {
        const int r = i / chunks, c = i - r * chunks;
        const bool valid = r < valid_rows;
        const unsigned char* src = valid ? global + r * global_row_bytes + c * 16 : global;
        cp_async_16(shared_address(smem + r * smem_row_bytes + c * 16), src, valid ? 16 : 0);
    }
}

// FP8 V block [64 keys][DV] -> Vt [DV][64 permuted keys] (see the top of the file). Each work item
// moves a 4x4 byte square: 4 keys (one A-operand word) x 4 columns.
template <int DV, int kThreads>
__device__ __forceinline__ void transpose_v_fp8(unsigned char* vt, int vt_row_bytes, const unsigned char* v,
                                                int v_row_bytes) {
    constexpr int kColumnGroups = DV / 4;
    constexpr int kKeyGroups = kKeyBlock / 4;  // (chunk, h, t)
    for (int i = threadIdx.x; i < kColumnGroups * kKeyGroups; i += kThreads) {
        const int key_group = i % kKeyGroups, column_group = i / kKeyGroups;
        const int chunk = key_group / 8, h = (key_group / 4) % 2, t = key_group % 4;
        const int key0 = chunk * 32 + h * 16 + 2 * t;  // keys key0, key0+1, key0+8, key0+9
        const int col = column_group * 4;
        const uint32_t w0 = *reinterpret_cast<const uint32_t*>(v + (key0 + 0) * v_row_bytes + col);
        const uint32_t w1 = *reinterpret_cast<const uint32_t*>(v + (key0 + 1) * v_row_bytes + col);
        const uint32_t w2 = *reinterpret_cast<const uint32_t*>(v + (key0 + 8) * v_row_bytes + col);
        const uint32_t w3 = *reinterpret_cast<const uint32_t*>(v + (key0 + 9) * v_row_bytes + col);
        const uint32_t lo01 = __byte_perm(w0, w1, 0x5140), hi01 = __byte_perm(w0, w1, 0x7362);
        const uint32_t lo23 = __byte_perm(w2, w3, 0x5140), hi23 = __byte_perm(w2, w3, 0x7362);
        const int kappa = chunk * 32 + h * 16 + 4 * t;
        *reinterpret_cast<uint32_t*>(vt + (col + 0) * vt_row_bytes + kappa) = __byte_perm(lo01, lo23, 0x5410);
        *reinterpret_cast<uint32_t*>(vt + (col + 1) * vt_row_bytes + kappa) = __byte_perm(lo01, lo23, 0x7632);
        *reinterpret_cast<uint32_t*>(vt + (col + 2) * vt_row_bytes + kappa) = __byte_perm(hi01, hi23, 0x5410);
        *reinterpret_cast<uint32_t*>(vt + (col + 3) * vt_row_bytes + kappa) = __byte_perm(hi01, hi23, 0x7632);
    }
}

// ---- the kernel body ----------------------------------------------------------------------------

template <InKind IN, PMode PM, int DQK, int DV, int WARPS>
__device__ __forceinline__ void attention_forward(const AttnKernelArgs& a) {
    using Shape = TileShape<IN == InKind::E4m3 ? 1 : 2, DQK, DV, WARPS>;
    constexpr int kRows = Shape::kRows, kThreads = Shape::kThreads, kElem = Shape::kElem;
    constexpr bool kFp8 = IN == InKind::E4m3;
    constexpr float kNegInf = -__builtin_huge_valf();
    extern __shared__ __align__(128) unsigned char smem[];
    int* tile_keys = reinterpret_cast<int*>(smem);  // [0] first, [1] one past the last visible key
    unsigned char* q_smem = smem + Shape::kQOffset;

    // Heaviest tiles (the last ones under a causal mask) first.
    const int tile = gridDim.x - 1 - blockIdx.x;
    const int head = blockIdx.y, batch = blockIdx.z;
    const SequenceSpan span = sequence_span(a, batch);
    const int64_t first_q = span.first_q, first_k = span.first_k;
    const int seqlen_q = span.seqlen_q, seqlen_k = span.seqlen_k;
    const int row0 = tile * kRows;
    if (row0 >= seqlen_q) return;
    const int head_kv = kv_head_of(a, head);
    const auto mask = static_cast<numerics::MaskKind>(a.mask);

    // The tile's keys: the union of its rows' visible intervals.
    if (threadIdx.x == 0) {
        tile_keys[0] = seqlen_k;
        tile_keys[1] = 0;
    }
    __syncthreads();
    if (threadIdx.x < kRows && row0 + static_cast<int>(threadIdx.x) < seqlen_q) {
        const auto range = numerics::visible_keys(row0 + threadIdx.x, seqlen_q, seqlen_k, mask, a.window_left,
                                                  a.window_right);
        if (range.begin < range.end) {
            atomicMin(&tile_keys[0], static_cast<int>(range.begin));
            atomicMax(&tile_keys[1], static_cast<int>(range.end));
        }
    }

    const unsigned char* q_global = static_cast<const unsigned char*>(a.q) +
        (batch * a.q_stride_batch + (first_q + row0) * a.q_stride_seq + head * a.q_stride_head) * kElem;
    const unsigned char* k_global = static_cast<const unsigned char*>(a.k) +
        (batch * a.k_stride_batch + first_k * a.k_stride_seq + head_kv * a.k_stride_head) * kElem;
    const unsigned char* v_global = static_cast<const unsigned char*>(a.v) +
        (batch * a.v_stride_batch + first_k * a.v_stride_seq + head_kv * a.v_stride_head) * kElem;
    load_rows_async<kThreads>(q_smem, Shape::kQkRowBytes, q_global, a.q_stride_seq * kElem, kRows,
                              min(kRows, seqlen_q - row0), DQK * kElem);
    cp_async_commit();
    __syncthreads();
    const int keys_begin = tile_keys[0], keys_end = tile_keys[1];
    const int block_begin = keys_begin - keys_begin % kKeyBlock;

    auto load_kv = [&](int block, int stage) {
        const int valid = min(kKeyBlock, seqlen_k - block);
        load_rows_async<kThreads>(smem + Shape::kKOffset + stage * Shape::kKBytes, Shape::kQkRowBytes,
                                  k_global + block * a.k_stride_seq * kElem, a.k_stride_seq * kElem, kKeyBlock,
                                  valid, DQK * kElem);
        load_rows_async<kThreads>(smem + Shape::kVOffset + stage * Shape::kVBytes, Shape::kVRowBytes,
                                  v_global + block * a.v_stride_seq * kElem, a.v_stride_seq * kElem, kKeyBlock,
                                  valid, DV * kElem);
    };
    if (block_begin < keys_end) load_kv(block_begin, 0);
    cp_async_commit();

    // fp32 constants of this (batch, kv head), in the CPU model's order.
    const HeadDescales descale = head_descales(a, batch, head_kv);
    const float vd = descale.v;
    const float scale_log2 = numerics::score_scale_log2(a.softmax_scale, descale.q, descale.k);
    const float scale8_log2 = 8.0f * scale_log2;
    const float lean_centre = a.lean_centre;
    const int max_block_exponent = a.max_block_exponent;

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int group = lane / 4, quad_lane = lane % 4;
    // This thread's two rows (group and group + 8 of the warp) and their visible intervals.
    int row_first_key[2], row_end_key[2];
#pragma unroll
    for (int rr = 0; rr < 2; ++rr) {
        const RowKeys keys = row_visible_keys(a, span, mask, row0 + warp * 16 + group + 8 * rr);
        row_first_key[rr] = keys.begin;
        row_end_key[rr] = keys.end;
    }

    float m[2] = {kNegInf, kNegInf};
    float l[2] = {0.0f, 0.0f};
    float acc[DV / 8][4];
#pragma unroll
    for (int n = 0; n < DV / 8; ++n) acc[n][0] = acc[n][1] = acc[n][2] = acc[n][3] = 0.0f;

    // ldmatrix lane addresses: A (Q rows) and B (K keys, Vt columns) of a 16x32-byte / 16x32-byte pair.
    const uint32_t q_lane = shared_address(q_smem) + (warp * 16 + (lane % 8) + 8 * ((lane / 8) % 2)) *
        Shape::kQkRowBytes + 16 * (lane / 16);
    const int b_lane_row = (lane % 8) + 8 * (lane / 16), b_lane_byte = 16 * ((lane / 8) % 2);

    int stage = 0;
    for (int block = block_begin; block < keys_end; block += kKeyBlock, stage ^= 1) {
        cp_async_wait_all();
        __syncthreads();  // this block's K/V visible to all; everyone is done with the other stage
        if (block + kKeyBlock < keys_end) load_kv(block + kKeyBlock, stage ^ 1);
        cp_async_commit();
        const unsigned char* k_smem = smem + Shape::kKOffset + stage * Shape::kKBytes;
        const unsigned char* v_smem = smem + Shape::kVOffset + stage * Shape::kVBytes;
        if constexpr (kFp8) {
            transpose_v_fp8<DV, kThreads>(smem + Shape::kVtOffset, Shape::kVtRowBytes, v_smem, Shape::kVRowBytes);
            __syncthreads();
        }

        // S = Q K^T: 16 rows x 64 keys per warp, 8 tiles of 16x8.
        float s[8][4];
#pragma unroll
        for (int n = 0; n < 8; ++n) s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.0f;
        const uint32_t k_lane = shared_address(k_smem) + b_lane_row * Shape::kQkRowBytes + b_lane_byte;
#pragma unroll 1
        for (int ks = 0; ks < Shape::kKSteps; ++ks) {
            uint32_t qa[4];
            ldmatrix_x4(qa, q_lane + ks * 32);
#pragma unroll
            for (int np = 0; np < 4; ++np) {
                uint32_t kb[4];
                ldmatrix_x4(kb, k_lane + np * 16 * Shape::kQkRowBytes + ks * 32);
                mma_16x8<IN>(s[2 * np], qa, kb[0], kb[1]);
                mma_16x8<IN>(s[2 * np + 1], qa, kb[2], kb[3]);
            }
        }

        // Online softmax per row, P packed straight into the P.V MMA's A operand (registers only:
        // the S accumulator layout is reused). A-operand words hold one row each:
        //   16-bit: pa[n/2][2*(n%2) + rr] = the pair of S tile n;
        //   e4m3:   pa[n/4][2*((n%4)/2) + rr] byte pair (n%2) = the pair of S tile n.
        constexpr int kPvSteps = kFp8 ? 2 : 4;  // 32 or 16 keys per P.V k-step
        uint32_t pa[kPvSteps][4];
#pragma unroll
        for (int kk = 0; kk < kPvSteps; ++kk) pa[kk][0] = pa[kk][1] = pa[kk][2] = pa[kk][3] = 0u;
        float alpha[2], down[2];
        bool active[2];
#pragma unroll
        for (int rr = 0; rr < 2; ++rr) {
            const int lo = row_first_key[rr], hi = row_end_key[rr];
            active[rr] = max(lo, block) < min(hi, block + kKeyBlock);
            float block_max = kNegInf;
#pragma unroll
            for (int n = 0; n < 8; ++n)
#pragma unroll
                for (int e = 0; e < 2; ++e) {
                    const int key = block + 8 * n + 2 * quad_lane + e;
                    if (key >= lo && key < hi) {
                        block_max = numerics::max_keep_nan(block_max, s[n][2 * rr + e] * scale_log2);
                    }
                }
            block_max = quad_max(block_max);
            const float m_new = numerics::max_keep_nan(m[rr], block_max);
            alpha[rr] = numerics::running_max_rescale(m[rr], m_new);
            float row_sum = 0.0f;
            int exponent = 0;
            float bias = 0.0f;
            if constexpr (PM == PMode::Lean) {
                exponent = numerics::block_scale_exponent(m_new, block_max, max_block_exponent,
                                                          numerics::Fp8Format::E4M3FN);
                bias = numerics::lean_p_bias(m_new, exponent, lean_centre, numerics::Fp8Format::E4M3FN);
            } else if constexpr (kFp8) {
                exponent = numerics::p_scale_base_exponent(numerics::Fp8Format::E4M3FN);
            }
            const float up = numerics::exp2_int(exponent);
#pragma unroll
            for (int n = 0; n < 8; ++n) {
                uint32_t pair;
                if constexpr (PM == PMode::Lean) {
                    uint32_t code[2];
#pragma unroll
                    for (int e = 0; e < 2; ++e) {
                        const int key = block + 8 * n + 2 * quad_lane + e;
                        code[e] = (key >= lo && key < hi) ? lean_code(s[n][2 * rr + e], scale8_log2, bias) : 0u;
                        // Multiples of 2^-9 below 2^15, at most 64 of them per row: exact in any order.
                        row_sum += numerics::fp8_decode(static_cast<uint8_t>(code[e]), numerics::Fp8Format::E4M3FN);
                    }
                    pair = code[0] | (code[1] << 8);
                } else {
                    float p[2];
#pragma unroll
                    for (int e = 0; e < 2; ++e) {
                        const int key = block + 8 * n + 2 * quad_lane + e;
                        p[e] = (key >= lo && key < hi) ? numerics::exp2_fp32(s[n][2 * rr + e] * scale_log2 - m_new) : 0.0f;
                        row_sum += p[e];  // EXACT: the denominator of unrounded probabilities
                    }
                    if constexpr (kFp8) {
                        pair = pack_e4m3x2(p[0] * up, p[1] * up);
                    } else {
                        pair = pack_p16<IN>(p[0], p[1]);
                    }
                }
                if constexpr (kFp8) {
                    pa[n / 4][2 * ((n % 4) / 2) + rr] |= pair << (16 * (n % 2));
                } else {
                    pa[n / 2][2 * (n % 2) + rr] = pair;
                }
            }
            down[rr] = numerics::exp2_int(-exponent);
            row_sum = quad_sum(row_sum);
            if constexpr (PM == PMode::Lean) row_sum *= down[rr];
            if (active[rr]) {
                l[rr] = numerics::running_sum_update(l[rr], alpha[rr], row_sum);
                m[rr] = m_new;
            }
        }

        // partial = P V per pair of 8-column tiles, then acc = acc*alpha + partial*2^-k.
        uint32_t v_lane;
        if constexpr (kFp8) {
            v_lane = shared_address(smem + Shape::kVtOffset) + b_lane_row * Shape::kVtRowBytes + b_lane_byte;
        } else {
            // ldmatrix.trans: matrices (keys +0/+8) x (columns +0/+8)
            v_lane = shared_address(v_smem) + ((lane % 8) + 8 * ((lane / 8) % 2)) * Shape::kVRowBytes +
                     (8 * (lane / 16)) * kElem;
        }
#pragma unroll
        for (int np = 0; np < DV / 16; ++np) {
            float partial[2][4] = {{0.0f, 0.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 0.0f, 0.0f}};
#pragma unroll
            for (int kk = 0; kk < kPvSteps; ++kk) {
                uint32_t vb[4];
                if constexpr (kFp8) {
                    ldmatrix_x4(vb, v_lane + np * 16 * Shape::kVtRowBytes + kk * 32);
                } else {
                    ldmatrix_x4_trans(vb, v_lane + kk * 16 * Shape::kVRowBytes + np * 16 * kElem);
                }
                mma_16x8<IN>(partial[0], pa[kk], vb[0], vb[1]);
                mma_16x8<IN>(partial[1], pa[kk], vb[2], vb[3]);
            }
#pragma unroll
            for (int h = 0; h < 2; ++h)
#pragma unroll
                for (int c = 0; c < 4; ++c) {
                    const int rr = c / 2;
                    if (active[rr]) {
                        acc[2 * np + h][c] = numerics::accumulator_update(acc[2 * np + h][c], alpha[rr], partial[h][c], down[rr]);
                    }
                }
        }
    }
    cp_async_wait_all();

    // Epilogue: the sink, if any, joins m and l (common/attention_sink.h); O = acc * (v_descale *
    // alpha / l); rows that saw no key (nor a sink) get 0 and lse = -inf, rows whose maximum saw a
    // NaN or +inf score or sink NaN (row_output).
    const int64_t total_q = a.cu_seqlens_q ? a.cu_seqlens_q[a.batch] : 0;
    const float sink_z = numerics::sink_log2(a.sinks, head);
#pragma unroll
    for (int rr = 0; rr < 2; ++rr) {
        const int row = row0 + warp * 16 + group + 8 * rr;
        if (row >= seqlen_q) continue;
        const numerics::SinkedRow sinked = numerics::fold_sink(m[rr], l[rr], sink_z);
        const bool poisoned = numerics::sinked_row_poisoned(sinked);
        const bool seen = numerics::sinked_row_seen(sinked);
        const float out_scale = numerics::sinked_output_scale(vd, sinked);
        const int64_t o_row = batch * a.o_stride_batch + (first_q + row) * a.o_stride_seq + head * a.o_stride_head;
#pragma unroll
        for (int n = 0; n < DV / 8; ++n)
#pragma unroll
            for (int e = 0; e < 2; ++e)
                store_output(a.o, a.out_dtype, o_row + 8 * n + 2 * quad_lane + e,
                             row_output(acc[n][2 * rr + e] * out_scale, poisoned, seen));
        if (a.lse && quad_lane == 0) {
            const int64_t index = a.cu_seqlens_q ? head * total_q + first_q + row
                                                 : (static_cast<int64_t>(batch) * a.heads_q + head) * a.seqlen_q + row;
            a.lse[index] = row_lse(numerics::sinked_row_lse(sinked), poisoned, seen);
        }
    }
}

}  // namespace nvidia
}  // namespace zyfa

// One extern "C" kernel per (input type / P scheme, head dims); the symbol names are the launch
// plan's (src/cuda/attention_launch_plan.cpp).
#define ZYFA_DEFINE_ATTENTION_KERNEL(symbol, in_kind, p_mode, dqk, dv, warps)                              \
    extern "C" __global__ void __launch_bounds__((warps) * 32, 1) symbol(const zyfa::AttnKernelArgs args) { \
        zyfa::nvidia::attention_forward<in_kind, p_mode, dqk, dv, warps>(args);                           \
    }

#endif
