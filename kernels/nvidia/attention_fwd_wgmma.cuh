// Hopper (sm_90a) forward kernel: warpgroup MMAs (wgmma) for both products.
//
// One CTA per (query tile of 128 rows, query head, batch): two warpgroups of 64 query rows each,
// 256 threads. Keys are visited in blocks of exactly 64 keys aligned to the start of the sequence
// (the CPU model's key_block; LEAN's block scales depend on it). All 256 threads load K/V blocks
// with cp.async into three shared-memory stages (blocks n+1 and n+2 load while block n computes),
// in the chunk-major layout of attention_wgmma_tile_shape.h that the wgmma descriptors read
// without swizzling.
//
// Per block and warpgroup: S = Q K^T (wgmma m64n64, both operands from shared memory), the online
// softmax on the accumulator registers, P packed in registers into the A operand of the second
// wgmma (m64n128, V from shared memory), acc += P V. The next block's S = Q K^T is issued before
// this block's softmax, so the tensor cores work while the softmax runs.
//
// FP8 inputs go through FP16 wgmma: Hopper's FP8 wgmma adds its products in an accumulator
// narrower than fp32 (measured here: scores off by ~1e-3 relative, lse by 3e-4, beyond the CPU
// model's tolerances, which mma.sync's e4m3 MMA meets). e4m3 -> fp16 is exact, products of two
// e4m3 values are exact, and FP16 wgmma accumulates in fp32, so the numerics stay the model's.
// Q, K and V blocks are widened in shared memory (cvt.rn.f16x2.e4m3x2); P goes to fp16 straight
// from its code: the fp16 with bits code << 7 is the e4m3 value times 2^-8 (normal and subnormal
// codes alike), a power of two that joins the block scale.
//
// The numerics are those of the CPU model (src/cpu/attention_blocked.cpp) step by step, as
// listed at the top of attention_fwd_mma.cuh, except the order of fp32 sums: the P.V product
// accumulates into O itself, kept per row as acc * 2^e (e = the block's P scale exponent: 0 for
// 16-bit, 8 for FP8 EXACT, k - 8 for LEAN), rescaled by alpha * 2^(e_new - e_old) first; powers
// of two scale exactly, so acc*alpha + partial*2^-k is formed as in the model, only with the
// tensor core adding partial products to the rescaled O rather than to fresh zeros.
// Blocks that every row of the tile sees whole skip the per-key mask tests.
// LEAN's row sum is the exact sum of the decoded codes: a code c read as fp32 bits c << 20 is its
// e4m3 value times 2^-120 (normal and subnormal codes alike), so one shift decodes it, and every
// partial sum of up to 64 such values is exact (multiples of 2^-129 below 2^-105).
#ifndef ZYFA_KERNELS_NVIDIA_ATTENTION_FWD_WGMMA_CUH
#define ZYFA_KERNELS_NVIDIA_ATTENTION_FWD_WGMMA_CUH

#include "nvidia/attention_fwd_mma.cuh"
#include "nvidia/attention_wgmma_tile_shape.h"
#include "nvidia/primitives/wgmma.cuh"

namespace zyfa {
namespace nvidia {


// Two e4m3 (low byte first) -> two fp16 (low half first); exact.
__device__ __forceinline__ uint32_t e4m3x2_to_f16x2(uint16_t pair) {
    uint32_t r;
    asm("cvt.rn.f16x2.e4m3x2 %0, %1;\n" : "=r"(r) : "h"(pair));
    return r;
}

// A tile of rows x (chunks * 16) bytes from global (row stride row_bytes) into the chunk-major
// layout at smem_addr; rows >= valid_rows are zero-filled without reading global memory. Each
// warp moves 8 rows x 4 chunks per step: 64 contiguous global bytes per row, and 4 shared-memory
// wavefronts of 128 contiguous bytes.
template <int kThreads, int kTileRows, int kChunks>
__device__ __forceinline__ void load_chunk_major(uint32_t smem_addr, const unsigned char* global, int64_t row_bytes,
                                                 int valid_rows) {
    constexpr int kItems = kTileRows * kChunks;
    static_assert(kItems % kThreads == 0 && kTileRows % 8 == 0 && kChunks % 4 == 0, "loader shape");
#pragma unroll
    for (int it = 0; it < kItems / kThreads; ++it) {
        const int i = static_cast<int>(threadIdx.x) + it * kThreads;
        const int r = (i % 8) + 8 * ((i / 32) % (kTileRows / 8));
        const int c = ((i / 8) % 4) + 4 * (i / (32 * (kTileRows / 8)));
        const bool valid = r < valid_rows;
        cp_async_16(smem_addr + c * (kTileRows * 16) + r * 16, valid ? global + r * row_bytes + c * 16 : global,
                    valid ? 16 : 0);
    }
}

// A chunk-major FP8 tile (rows x chunks of 16 elements) -> its FP16 copy (rows x 2*chunks of 8
// elements), exactly. Consecutive threads take consecutive rows: 16-byte accesses, conflict-free.
template <int kThreads, int kTileRows, int kChunks>
__device__ __forceinline__ void widen_e4m3_tile(unsigned char* dst, const unsigned char* src) {
    constexpr int kItems = kTileRows * kChunks;
    static_assert(kItems % kThreads == 0, "widening shape");
#pragma unroll
    for (int it = 0; it < kItems / kThreads; ++it) {
        const int i = static_cast<int>(threadIdx.x) + it * kThreads;
        const int r = i % kTileRows, c = i / kTileRows;
        const uint4 packed = *reinterpret_cast<const uint4*>(src + c * (kTileRows * 16) + r * 16);
        const uint32_t words[4] = {packed.x, packed.y, packed.z, packed.w};
        uint32_t wide[8];
#pragma unroll
        for (int w = 0; w < 4; ++w) {
            wide[2 * w] = e4m3x2_to_f16x2(static_cast<uint16_t>(words[w] & 0xFFFFu));
            wide[2 * w + 1] = e4m3x2_to_f16x2(static_cast<uint16_t>(words[w] >> 16));
        }
        *reinterpret_cast<uint4*>(dst + (2 * c) * (kTileRows * 16) + r * 16) =
            make_uint4(wide[0], wide[1], wide[2], wide[3]);
        *reinterpret_cast<uint4*>(dst + (2 * c + 1) * (kTileRows * 16) + r * 16) =
            make_uint4(wide[4], wide[5], wide[6], wide[7]);
    }
}

template <InKind IN, PMode PM, int DQK, int DV, int WARPGROUPS>
__device__ __forceinline__ void attention_forward_wgmma(const AttnKernelArgs& a) {
    using Shape = WgmmaTileShape<IN == InKind::E4m3 ? 1 : 2, DQK, DV, WARPGROUPS>;
    constexpr int kRows = Shape::kRows, kThreads = Shape::kThreads, kElem = Shape::kElem, kKeys = Shape::kKeys;
    constexpr int kKStages = Shape::kKStages, kVStages = Shape::kVStages;
    constexpr bool kFp8 = IN == InKind::E4m3;
    constexpr InKind kMma = kFp8 ? InKind::Fp16 : IN;  // what the wgmma multiplies
    constexpr float kNegInf = -__builtin_huge_valf();
    extern __shared__ __align__(128) unsigned char smem[];
    // [0] first visible key of any row, [1] one past the last; [2] the largest first key of any
    // row, [3] the smallest end: blocks inside [2], [3] are seen whole by every row.
    int* tile_keys = reinterpret_cast<int*>(smem);

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

    if (threadIdx.x == 0) {
        tile_keys[0] = seqlen_k;
        tile_keys[1] = 0;
        tile_keys[2] = 0;
        tile_keys[3] = seqlen_k;
    }
    __syncthreads();
    if (threadIdx.x < kRows) {
        bool sees_keys = false;
        if (row0 + static_cast<int>(threadIdx.x) < seqlen_q) {
            const auto range = numerics::visible_keys(row0 + threadIdx.x, seqlen_q, seqlen_k, mask, a.window_left,
                                                      a.window_right);
            if (range.begin < range.end) {
                sees_keys = true;
                atomicMin(&tile_keys[0], static_cast<int>(range.begin));
                atomicMax(&tile_keys[1], static_cast<int>(range.end));
                atomicMax(&tile_keys[2], static_cast<int>(range.begin));
                atomicMin(&tile_keys[3], static_cast<int>(range.end));
            }
        }
        if (!sees_keys) atomicMin(&tile_keys[3], 0);  // a row seeing nothing: every block is masked
    }

    const unsigned char* q_global = static_cast<const unsigned char*>(a.q) +
        (batch * a.q_stride_batch + (first_q + row0) * a.q_stride_seq + head * a.q_stride_head) * kElem;
    const unsigned char* k_global = static_cast<const unsigned char*>(a.k) +
        (batch * a.k_stride_batch + first_k * a.k_stride_seq + head_kv * a.k_stride_head) * kElem;
    const unsigned char* v_global = static_cast<const unsigned char*>(a.v) +
        (batch * a.v_stride_batch + first_k * a.v_stride_seq + head_kv * a.v_stride_head) * kElem;
    const uint32_t smem_base = shared_address(smem);
    load_chunk_major<kThreads, kRows, Shape::kQkChunks>(smem_base + Shape::kQOffset, q_global, a.q_stride_seq * kElem,
                                                        min(kRows, seqlen_q - row0));
    __syncthreads();
    const int keys_begin = tile_keys[0], keys_end = tile_keys[1];
    const int whole_begin = tile_keys[2], whole_end = tile_keys[3];
    const int block_begin = keys_begin - keys_begin % kKeys;
    const int blocks = keys_end > block_begin ? (keys_end - block_begin + kKeys - 1) / kKeys : 0;

    auto load_k = [&](int index) {
        const int block = block_begin + index * kKeys;
        load_chunk_major<kThreads, kKeys, Shape::kQkChunks>(
            smem_base + Shape::kKOffset + (index % kKStages) * Shape::kKBytes, k_global + block * a.k_stride_seq * kElem,
            a.k_stride_seq * kElem, min(kKeys, seqlen_k - block));
    };
    auto load_v = [&](int index) {
        const int block = block_begin + index * kKeys;
        load_chunk_major<kThreads, kKeys, Shape::kVChunks>(
            smem_base + Shape::kVOffset + (index % kVStages) * Shape::kVBytes, v_global + block * a.v_stride_seq * kElem,
            a.v_stride_seq * kElem, min(kKeys, seqlen_k - block));
    };
    if (blocks > 0) {
        load_k(0);
        load_v(0);
    }
    cp_async_commit();  // group 0: Q, K and V of block 0
    if (blocks > 1) load_k(1);
    cp_async_commit();  // group 1: K of block 1

    // fp32 constants of this (batch, kv head), in the CPU model's order.
    const HeadDescales descale = head_descales(a, batch, head_kv);
    const float vd = descale.v;
    const float scale_log2 = numerics::score_scale_log2(a.softmax_scale, descale.q, descale.k);
    const float scale8_log2 = 8.0f * scale_log2;
    const float lean_centre = a.lean_centre;
    const int max_block_exponent = a.max_block_exponent;

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int warpgroup = threadIdx.x / 128;
    const int group = lane / 4, quad_lane = lane % 4;
    int row_first_key[2], row_end_key[2];
#pragma unroll
    for (int rr = 0; rr < 2; ++rr) {
        const RowKeys keys = row_visible_keys(a, span, mask, row0 + warp * 16 + group + 8 * rr);
        row_first_key[rr] = keys.begin;
        row_end_key[rr] = keys.end;
    }

    float m[2] = {kNegInf, kNegInf};
    float l[2] = {0.0f, 0.0f};
    int acc_exponent[2] = {0, 0};  // acc holds O's accumulator times 2^acc_exponent (see the top)
    float acc[DV / 2];
#pragma unroll
    for (int i = 0; i < DV / 2; ++i) acc[i] = 0.0f;

    // Where the wgmma operands live: the loaded tiles, or their FP16 copies for FP8 inputs.
    const uint32_t q_mma = smem_base + (kFp8 ? Shape::kQ16Offset : Shape::kQOffset);
    auto k_mma = [&](int index) {
        return kFp8 ? smem_base + Shape::kK16Offset : smem_base + Shape::kKOffset + (index % kKStages) * Shape::kKBytes;
    };
    auto v_mma = [&](int index) {
        return kFp8 ? smem_base + Shape::kV16Offset : smem_base + Shape::kVOffset + (index % kVStages) * Shape::kVBytes;
    };
    auto widen_k = [&](int index) {
        widen_e4m3_tile<kThreads, kKeys, Shape::kQkChunks>(smem + Shape::kK16Offset,
                                                           smem + Shape::kKOffset + (index % kKStages) * Shape::kKBytes);
    };
    auto widen_v = [&](int index) {
        widen_e4m3_tile<kThreads, kKeys, Shape::kVChunks>(smem + Shape::kV16Offset,
                                                          smem + Shape::kVOffset + (index % kVStages) * Shape::kVBytes);
    };

    // Descriptors (see attention_wgmma_tile_shape.h). Adding bytes >> 4 moves the start address.
    constexpr int kMmaChunks = DQK * 2 / 16;  // 16-byte chunks of a 16-bit Q/K row
    const uint64_t desc_q = wgmma_descriptor(q_mma + warpgroup * 64 * 16, kRows * 16, 128);
    constexpr uint32_t kQStepBytes = 2 * kRows * 16;  // 16 elements of head dim per wgmma k-step
    constexpr uint32_t kKStepBytes = 2 * kKeys * 16;
    auto issue_scores = [&](float (&s)[32], int index) {
        const uint64_t desc_k = wgmma_descriptor(k_mma(index), kKeys * 16, 128);
        wgmma_fence();
#pragma unroll
        for (int ks = 0; ks < kMmaChunks / 2; ++ks) {
            wgmma_scores<kMma>(s, desc_q + ((ks * kQStepBytes) >> 4), desc_k + ((ks * kKStepBytes) >> 4), ks > 0);
        }
        wgmma_commit();
    };

    // Block 0's scores before the loop; inside it, block n+1's are in flight during block n's softmax.
    float s[32];
    if (blocks > 0) {
        cp_async_wait_group<1>();
        fence_proxy_async_shared();
        __syncthreads();
        if constexpr (kFp8) {
            widen_e4m3_tile<kThreads, kRows, Shape::kQkChunks>(smem + Shape::kQ16Offset, smem + Shape::kQOffset);
            widen_k(0);
            fence_proxy_async_shared();
            __syncthreads();
        }
        issue_scores(s, 0);
        wgmma_wait_all();
        pin_registers(s);
    }

    for (int index = 0; index < blocks; ++index) {
        const int block = block_begin + index * kKeys;
        const bool has_next = index + 1 < blocks;
        cp_async_wait_group<0>();  // K of block index+1 and V of block index landed
        fence_proxy_async_shared();
        __syncthreads();  // all copies visible; everyone is done with block index-1 and its stages
        if (index + 2 < blocks) load_k(index + 2);
        if (index + 1 < blocks) load_v(index + 1);
        cp_async_commit();
        if constexpr (kFp8) {
            widen_v(index);
            if (has_next) widen_k(index + 1);
            fence_proxy_async_shared();
            __syncthreads();
        }
        float s_next[32];
        if (has_next) issue_scores(s_next, index + 1);

        // Online softmax per row; P packed straight into the P.V A operand (16-bit pairs):
        // pa[n/2][2*(n%2) + rr] = the pair of S tile n.
        uint32_t pa[4][4];
        float rescale[2];
        auto softmax = [&](auto masked_tag) {
            constexpr bool kMasked = decltype(masked_tag)::value;
#pragma unroll
            for (int rr = 0; rr < 2; ++rr) {
                const int lo = row_first_key[rr], hi = row_end_key[rr];
                const bool active = kMasked ? max(lo, block) < min(hi, block + kKeys) : true;
                auto visible = [&](int n, int e) {
                    if constexpr (!kMasked) return true;
                    const int key = block + 8 * n + 2 * quad_lane + e;
                    return key >= lo && key < hi;
                };
                float block_max = kNegInf;
#pragma unroll
                for (int n = 0; n < 8; ++n)
#pragma unroll
                    for (int e = 0; e < 2; ++e)
                        if (visible(n, e)) {
                            block_max = numerics::max_keep_nan(block_max, s[4 * n + 2 * rr + e] * scale_log2);
                        }
                block_max = quad_max(block_max);
                const float m_new = numerics::max_keep_nan(m[rr], block_max);
                const float alpha = m[rr] == kNegInf ? 0.0f : exp2f(m[rr] - m_new);
                int exponent = 0;        // the model's k: P is scaled by 2^k before rounding
                int block_exponent = 0;  // what the wgmma's P carries: 2^block_exponent * p
                float row_sum = 0.0f;
                if constexpr (PM == PMode::Lean) {
                    exponent = numerics::block_scale_exponent(m_new, block_max, max_block_exponent,
                                                              numerics::Fp8Format::E4M3FN);
                    block_exponent = exponent - 8;
                    const float bias =
                        numerics::lean_p_bias(m_new, exponent, lean_centre, numerics::Fp8Format::E4M3FN);
                    uint32_t bits[8][2];  // magic-number sums: low byte = the code
#pragma unroll
                    for (int n = 0; n < 8; ++n)
#pragma unroll
                        for (int e = 0; e < 2; ++e) {
                            const float y = numerics::clamp_float(fmaf(s[4 * n + 2 * rr + e], scale8_log2, bias), 0.0f,
                                                                  numerics::lean_p_max_code(numerics::Fp8Format::E4M3FN));
                            bits[n][e] = visible(n, e) ? numerics::float_bits(y + 12582912.0f) : 0x4B400000u;
                            row_sum += numerics::bits_float(bits[n][e] << 20);  // code * 2^-120, exact sums
                        }
#pragma unroll
                    for (int n = 0; n < 8; ++n) {
                        // [code0, 0, code1, 0] (byte 1 of a magic sum is 0), then fp16 bits code << 7.
                        pa[n / 2][2 * (n % 2) + rr] = __byte_perm(bits[n][0], bits[n][1], 0x1410) << 7;
                    }
                    row_sum = quad_sum(row_sum) * 0x1p120f * numerics::exp2_int(-exponent);
                } else {
                    if constexpr (kFp8) exponent = numerics::p_scale_base_exponent(numerics::Fp8Format::E4M3FN);
                    block_exponent = exponent;
                    const float up = numerics::exp2_int(exponent);
                    float p[8][2];
#pragma unroll
                    for (int n = 0; n < 8; ++n)
#pragma unroll
                        for (int e = 0; e < 2; ++e) {
                            p[n][e] = visible(n, e) ? exp2f(s[4 * n + 2 * rr + e] * scale_log2 - m_new) : 0.0f;
                            row_sum += p[n][e];  // EXACT: the denominator of unrounded probabilities
                        }
#pragma unroll
                    for (int n = 0; n < 8; ++n) {
                        if constexpr (kFp8) {
                            pa[n / 2][2 * (n % 2) + rr] = e4m3x2_to_f16x2(
                                static_cast<uint16_t>(pack_e4m3x2(p[n][0] * up, p[n][1] * up)));
                        } else {
                            pa[n / 2][2 * (n % 2) + rr] = pack_p16<IN>(p[n][0], p[n][1]);
                        }
                    }
                    row_sum = quad_sum(row_sum);
                }
                rescale[rr] = 1.0f;  // a row that sees nothing of the block keeps m, l and acc
                if (active) {
                    l[rr] = l[rr] * alpha + row_sum;
                    m[rr] = m_new;
                    rescale[rr] = alpha * numerics::exp2_int(block_exponent - acc_exponent[rr]);
                    acc_exponent[rr] = block_exponent;
                }
            }
        };
        if (block >= whole_begin && block + kKeys <= whole_end) {
            softmax(MaskedTag<false>{});
        } else {
            softmax(MaskedTag<true>{});
        }

        // acc = acc * rescale, then acc += P V (V as an MN-major operand).
#pragma unroll
        for (int i = 0; i < DV / 2; ++i) acc[i] = acc[i] * rescale[(i % 4) / 2];
        const uint64_t desc_v = wgmma_descriptor(v_mma(index), 128, kKeys * 16);
#pragma unroll
        for (int kk = 0; kk < 4; ++kk) pin_registers(pa[kk]);  // P complete before the fence
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < 4; ++kk) wgmma_pv<kMma>(acc, pa[kk], desc_v + ((kk * 16 * 16) >> 4), 1);
        wgmma_commit();
        wgmma_wait_all();  // this block's P V and the next block's scores
        pin_registers(acc);
        if (has_next) {
            pin_registers(s_next);
#pragma unroll
            for (int i = 0; i < 32; ++i) s[i] = s_next[i];
        }
    }
    cp_async_wait_group<0>();

    // Epilogue: O = acc * 2^-acc_exponent * (v_descale / l); rows that saw no key get 0 and lse = -inf,
    // rows whose maximum saw a NaN or +inf score NaN (row_output).
    const int64_t total_q = a.cu_seqlens_q ? a.cu_seqlens_q[a.batch] : 0;
#pragma unroll
    for (int rr = 0; rr < 2; ++rr) {
        const int row = row0 + warp * 16 + group + 8 * rr;
        if (row >= seqlen_q) continue;
        const bool poisoned = numerics::row_max_is_poisoned(m[rr]);
        const bool seen = l[rr] > 0.0f;
        const float out_scale = seen ? vd / l[rr] : 0.0f;
        const float unscale = numerics::exp2_int(-acc_exponent[rr]);
        const int64_t o_row = batch * a.o_stride_batch + (first_q + row) * a.o_stride_seq + head * a.o_stride_head;
#pragma unroll
        for (int n = 0; n < DV / 8; ++n) {
            store_output_pair(a.o, a.out_dtype, o_row + 8 * n + 2 * quad_lane,
                              row_output((acc[4 * n + 2 * rr] * unscale) * out_scale, poisoned, seen),
                              row_output((acc[4 * n + 2 * rr + 1] * unscale) * out_scale, poisoned, seen));
        }
        if (a.lse && quad_lane == 0) {
            const int64_t index = a.cu_seqlens_q ? head * total_q + first_q + row
                                                 : (static_cast<int64_t>(batch) * a.heads_q + head) * a.seqlen_q + row;
            a.lse[index] = row_lse(kLn2 * (m[rr] + log2f(l[rr])), poisoned, seen);
        }
    }
}

}  // namespace nvidia
}  // namespace zyfa

// warpgroups 2: one 256-thread CTA per SM; 1: two 128-thread CTAs per SM (registers <= 255 each).
#define ZYFA_DEFINE_WGMMA_ATTENTION_KERNEL(symbol, in_kind, p_mode, dqk, dv, warpgroups)                       \
    extern "C" __global__ void __launch_bounds__((warpgroups) * 128, 3 - (warpgroups))                          \
        symbol(const zyfa::AttnKernelArgs args) {                                                              \
        zyfa::nvidia::attention_forward_wgmma<in_kind, p_mode, dqk, dv, warpgroups>(args);                     \
    }

#endif
