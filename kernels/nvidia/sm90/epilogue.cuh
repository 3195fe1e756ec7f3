// The consumers' epilogue of the warp-specialised sm_90a kernel (attention_fwd_ws.cuh): each row's
// O normalised (O = acc * 2^-acc_exponent * (v_descale / l)), its log-sum-exp, and the store of O's
// pairs in the output dtype. Rows that saw no key get 0 and lse = -inf, rows whose maximum saw a
// NaN or +inf score NaN (row_output).
#ifndef ZYFA_KERNELS_NVIDIA_SM90_EPILOGUE_CUH
#define ZYFA_KERNELS_NVIDIA_SM90_EPILOGUE_CUH

#include "nvidia/attention_fwd_common.cuh"
#include "nvidia/primitives/barriers.cuh"
#include "nvidia/primitives/convert.cuh"
#include "nvidia/primitives/ldmatrix.cuh"
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
    static __device__ __forceinline__ uint32_t pack(float lo, float hi) { return pack_p16<InKind::Bf16>(lo, hi); }
    __device__ __forceinline__ void operator()(int64_t index, float lo, float hi) const {
        *reinterpret_cast<uint32_t*>(static_cast<uint16_t*>(a.o) + index) = pack(lo, hi);
    }
};
struct StorePairFp16 {
    const AttnKernelArgs& a;
    static __device__ __forceinline__ uint32_t pack(float lo, float hi) { return pack_p16<InKind::Fp16>(lo, hi); }
    __device__ __forceinline__ void operator()(int64_t index, float lo, float hi) const {
        *reinterpret_cast<uint32_t*>(static_cast<uint16_t*>(a.o) + index) = pack(lo, hi);
    }
};

// O's pairs of a consumer thread's two rows, normalised; the output dtype is chosen once for the
// whole tile (store_output_pairs: a branch per pair and the software conversions made this the
// kernel's largest code, and its instruction-cache misses). It refers to the consumer's variables,
// as the lambda it replaces captured them (consumer_warpgroup's comment).
// Each element is row_output((acc * unscale) * out_scale, poisoned, seen) (unscale = 2^-acc_exponent,
// out_scale = v_descale / l), taken per row as one factor and one choice: acc * (unscale * out_scale),
// or NaN (poisoned) or 0 (no key seen) for the whole row. A power of two's product is exact, so both
// orders round once, to the same value, wherever unscale * out_scale and acc * unscale stay normal
// (unscale is 2^-8 in the FP8 kernels, so out_scale = v_descale / l above 2^-118; the 64-key LEAN
// instance's 2^-k, k up to 64 by default, needs it above 2^-62): one multiply and one select per
// element, where two of each were 128 instructions of a thread's epilogue at head_dim_v 128.
template <int DV, int kAcc>
struct OutputPairs {
    const bool (&row_valid)[2];
    const int64_t (&o_row)[2];  // the element index of the row's first pair
    const float (&acc)[kAcc];   // O's accumulator times 2^acc_exponent
    float factor[2];            // unscale * out_scale
    float other[2];             // a poisoned row's NaN, or the 0 of a row that saw no key
    bool plain[2];              // the row writes acc * factor

    __device__ __forceinline__ OutputPairs(const bool (&valid)[2], const int64_t (&row)[2], const float (&a)[kAcc],
                                           const float (&unscale)[2], const float (&out_scale)[2],
                                           const bool (&poisoned)[2], const bool (&seen)[2])
        : row_valid(valid), o_row(row), acc(a) {
#pragma unroll
        for (int rr = 0; rr < 2; ++rr) {
            factor[rr] = unscale[rr] * out_scale[rr];
            other[rr] = row_output(0.0f, poisoned[rr], seen[rr]);
            plain[rr] = seen[rr] && !poisoned[rr];
        }
    }
    // Element e of the thread's pair of 8-column tile n in row rr, normalised.
    __device__ __forceinline__ float value(int rr, int n, int e) const {
        return plain[rr] ? acc[4 * n + 2 * rr + e] * factor[rr] : other[rr];
    }
    template <class StorePair>
    __device__ __forceinline__ void operator()(StorePair store_pair) const {
#pragma unroll
        for (int rr = 0; rr < 2; ++rr) {
            if (!row_valid[rr]) continue;
#pragma unroll
            for (int n = 0; n < DV / 8; ++n) store_pair(o_row[rr] + 8 * n, value(rr, n, 0), value(rr, n, 1));
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

// 16-bit O of a consumer warpgroup's 64 rows through shared memory (head_dim_v <= 128): stmatrix puts
// each warp's pairs into a tile of 64 rows x DV columns, then every thread copies whole 16-byte
// chunks of rows to O, a warp writing DV / 4 contiguous bytes per row it covers (two whole rows at
// DV = 128). The pair stores write 16 bytes of each of 8 rows per warp instruction, with four times
// the store instructions; the CTA timeline put the epilogue at 2.2-2.5 us of a CTA's fixed ~4.9
// (docs/performance.md). The tile is 128-byte column slices of 64 rows, 16-byte chunk c of row r
// at (c ^ (r % 8)) * 16 in its slice: the 8 rows of a stmatrix matrix and the 8 chunks of a row that
// a quarter warp reads each cover the 32 banks once.
struct StagedOutputTile {
    uint32_t base;          // shared address of this warpgroup's row 0 in slice 0
    uint32_t slice_stride;  // bytes from one 128-byte column slice to the next
    __device__ __forceinline__ uint32_t chunk_address(int row, int chunk) const {
        return base + (chunk / 8) * slice_stride + row * 128 + (((chunk % 8) ^ (row % 8)) * 16);
    }
};

// Whether O's rows start on 16 bytes (the chunk copies' alignment); otherwise the pair stores run.
__device__ __forceinline__ bool staged_output_aligned(const AttnKernelArgs& a) {
    return reinterpret_cast<uintptr_t>(a.o) % 16 == 0 && a.o_stride_seq % 8 == 0 && a.o_stride_head % 8 == 0 &&
           a.o_stride_batch % 8 == 0;
}

// The warpgroup's 128 threads (wg_thread 0..127, warp = wg_thread / 32); barrier: its named barrier.
// o_row0: O's element index of the warpgroup's first row; valid_rows: how many of its 64 rows exist.
// bf16: BF16 output, else FP16 (one copy of the code with a select per pair: the epilogue's code
// size is the kernel's instruction-cache footprint, store_output_pairs' comment).
// The first barrier orders every warp's last reads of the tile's bytes (16-bit: its half of Q, read
// by the score wgmmas) before any warp's stores into them.
template <int DV, int kAcc>
__device__ __forceinline__ void store_output_staged(const AttnKernelArgs& a, const OutputPairs<DV, kAcc>& pairs,
                                                    const StagedOutputTile& tile, int barrier, int wg_thread,
                                                    int64_t o_row0, int valid_rows, bool bf16) {
    static_assert(DV % 16 == 0 && DV <= 128, "whole stmatrix pairs of 8-column tiles, at most two slices");
    constexpr int kChunks = DV / 8, kRowsPerPass = 128 / kChunks;
    const int warp = wg_thread / 32, lane = wg_thread % 32;
    named_barrier_sync(barrier, 128);
    // Matrix q of stmatrix_x4: 8-column tile 2 np + q / 2, rows 8 (q % 2) .. + 7 of the warp's 16;
    // lane l gives the address of row l % 8 of matrix l / 8: chunk 2 np + half of row my_row. Its
    // place (chunk_address): slice np / 4, and (2 (np % 4) + half) ^ (my_row % 8) =
    // 2 (np % 4) ^ (half ^ (my_row % 8)), since 2 (np % 4) is even and half is 0 or 1; so four
    // offsets per thread serve every np, the slice and the rest added as constants.
    const int my_row = 16 * warp + 8 * ((lane / 8) % 2) + lane % 8, my_half = lane / 16;
    const int x = my_half ^ (my_row % 8);
    const uint32_t row_address = tile.base + my_row * 128;
#pragma unroll
    for (int np = 0; np < DV / 16; ++np) {
        uint32_t r[4];
#pragma unroll
        for (int q = 0; q < 4; ++q) {
            const int rr = q % 2, n = 2 * np + q / 2;
            const float lo = pairs.value(rr, n, 0), hi = pairs.value(rr, n, 1);
            r[q] = bf16 ? pack_p16<InKind::Bf16>(lo, hi) : pack_p16<InKind::Fp16>(lo, hi);
        }
        stmatrix_x4(row_address + (np / 4) * tile.slice_stride + ((2 * (np % 4)) ^ x) * 16, r);
    }
    named_barrier_sync(barrier, 128);
    // Pass p copies rows p * kRowsPerPass + first_row: a multiple of 8 rows apart, so the chunk's
    // swizzle (row % 8) is the same in every pass and its shared address moves by a constant; O's
    // address moves by kRowsPerPass rows.
    const int first_row = wg_thread / kChunks, chunk = wg_thread % kChunks;
    static_assert(kRowsPerPass % 8 == 0, "the swizzle repeats every 8 rows");
    const uint32_t chunk_address = tile.chunk_address(first_row, chunk);
    uint4* out = reinterpret_cast<uint4*>(static_cast<uint16_t*>(a.o) + o_row0 + first_row * a.o_stride_seq + 8 * chunk);
    const int64_t pass_step = kRowsPerPass * a.o_stride_seq / 8;  // in uint4 (8 elements)
#pragma unroll
    for (int pass = 0; pass < 64 / kRowsPerPass; ++pass) {
        uint4 v;
        asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                     : "r"(chunk_address + pass * kRowsPerPass * 128));
        if (first_row + pass * kRowsPerPass < valid_rows) out[pass * pass_step] = v;
    }
}

}  // namespace nvidia
}  // namespace zyfa

#endif
