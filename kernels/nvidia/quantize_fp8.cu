// zyfa_quantize_fp8 on NVIDIA GPUs: the five kernels of quantize_fp8_args.h (clear, mean, amax,
// encode, finish), one cubin per arch. The codes, descales and means are bit-identical to the CPU
// backend (src/cpu/quantize_fp8.cpp, the spec): the same fp32 loads, common/smooth_mean.h's fp64
// lane sums (one warp per lane, so each lane's rows are added in the same order), the Hadamard
// butterflies of common/hadamard.h (each butterfly of a stage is independent, so spreading a
// stage over a warp's lanes gives the same bits), the same scale expression and common/fp8_e4m3.h's
// encoder; built with -fmad=false so no multiply is fused into an add.
//
// With ZYFA_QUANT_KEY_BIAS a fifth launch after mean, zyfa_quantize_fp8_key_bias, writes Q smoothing's
// per-key bias (common/key_bias.h), one thread per (key, query head), as the CPU and HIP backends.
//
// zyfa_quantize_int8 (args.scale_rows 1 or 64) runs the sixth kernel, zyfa_quantize_int8_groups,
// after the mean launch when smoothing: each scale group (1 or 64 rows from the sequence's row 0)
// lies inside one block's kQuantRowsPerBlock rows, so one block finds its rows' amax (shared
// memory), then writes their codes and descales with common/int8_qk.h's scale, encoder and
// descale, as the CPU does.
//
// What the GPU does not do: check the input for NaN/inf (the CPU backend's INVALID_ARGUMENT would
// need a synchronisation). A slice holding a NaN gets amax = NaN (NaN's bits order above +inf),
// so its descale is NaN and its codes are NaN codes; a slice holding +-inf (or whose rotation
// overflows) gets descale = +inf and codes 0 (finite elements) or NaN (the infinite ones).
#include "common/fp8_e4m3.h"
#include "common/hadamard.h"
#include "common/half_types.h"
#include "common/int8_qk.h"
#include "common/key_bias.h"
#include "common/smooth_mean.h"
#include "common/v_transposed.h"
#include "common/attention_kernel_args.h"
#include "nvidia/quantize_fp8_args.h"

namespace zyfa {
namespace nvidia {
namespace {

// As src/cpu/quantize_fp8.cpp: below this amax, fp8_max / amax could overflow fp32, so such
// slices are first scaled by a power of two (exact), giving the codes the unshifted scale would.
constexpr float kTinyAmax = 0x1p-100f;
constexpr float kTinyShift = 0x1p100f;

__device__ __forceinline__ float load_input(const QuantFp8KernelArgs& a, int64_t index) {
    switch (a.in_dtype) {
        case kKernelFp16: return numerics::fp16_to_float(static_cast<const uint16_t*>(a.in)[index]);
        case kKernelBf16: return numerics::bf16_to_float(static_cast<const uint16_t*>(a.in)[index]);
        default: return static_cast<const float*>(a.in)[index];
    }
}

__device__ __forceinline__ numerics::Fp8Format output_format(const QuantFp8KernelArgs& a) {
    return a.out_dtype == kKernelE4m3fnuz ? numerics::Fp8Format::E4M3FNUZ : numerics::Fp8Format::E4M3FN;
}

__device__ __forceinline__ int64_t slice_index(const QuantFp8KernelArgs& a) {
    return static_cast<int64_t>(blockIdx.z) * a.heads + blockIdx.y;
}

// Calls visit(row, out_index, value) for every element of this block's rows of slice (blockIdx.z,
// blockIdx.y), value being the fp32 the CPU model quantises: the loaded element less its
// channel's mean when smoothing, then its Hadamard rotation computed exactly as common/hadamard.h
// orders it. One warp per row; `buffer` is the warp's kQuantMaxHadamardBlock floats of shared
// memory.
template <class Visit>
__device__ __forceinline__ void for_each_value(const QuantFp8KernelArgs& a, float* buffer, Visit visit) {
    const int32_t b = static_cast<int32_t>(blockIdx.z);
    const int32_t h = static_cast<int32_t>(blockIdx.y);
    const bool varlen = a.cu_seqlens != nullptr;
    const int64_t first = varlen ? a.cu_seqlens[b] : 0;
    const int64_t count = varlen ? static_cast<int64_t>(a.cu_seqlens[b + 1]) - a.cu_seqlens[b] : a.seqlen;
    const int64_t row_begin = static_cast<int64_t>(blockIdx.x) * kQuantRowsPerBlock;
    const int64_t row_end = count < row_begin + kQuantRowsPerBlock ? count : row_begin + kQuantRowsPerBlock;
    const int warp = static_cast<int>(threadIdx.x) / 32;
    const int lane = static_cast<int>(threadIdx.x) % 32;
    const int n = a.hadamard_block;
    const float normaliser = n > 0 ? numerics::hadamard_normaliser(n) : 1.0f;
    // Varlen rows are packed along seq: the batch stride is ignored there, per the ABI.
    const int64_t in_slice = (varlen ? 0 : b * a.in_stride_batch) + h * a.in_stride_head;
    const int64_t out_slice = (varlen ? 0 : b * a.out_stride_batch) + h * a.out_stride_head;
    const float* mean = a.smooth_mean != nullptr ? a.smooth_mean + slice_index(a) * a.head_dim : nullptr;
    auto value_at = [&](int64_t in_row, int d) {
        const float x = load_input(a, in_row + d);
        return mean != nullptr ? numerics::smooth_subtract(x, mean[d]) : x;
    };

    for (int64_t s = row_begin + warp; s < row_end; s += kQuantWarps) {  // warp-uniform loop
        const int64_t in_row = in_slice + (first + s) * a.in_stride_seq;
        // Element d of row s: row-major, or the transposed V layout (fixed length: first is 0).
        auto out_index = [&](int d) {
            return a.v_transposed ? out_slice + numerics::vt_offset(s, d, a.out_stride_seq)
                                  : out_slice + (first + s) * a.out_stride_seq + d;
        };
        if (n == 0) {
            for (int d = lane; d < a.head_dim; d += 32) visit(s, out_index(d), value_at(in_row, d));
            continue;
        }
        for (int start = 0; start < a.head_dim; start += n) {
            for (int j = lane; j < n; j += 32) buffer[j] = value_at(in_row, start + j);
            __syncwarp();
            for (int span = 1; span < n; span *= 2) {
                // Butterfly p of this stage: (j, j + span), j = p with a zero inserted at bit log2(span).
                for (int p = lane; p < n / 2; p += 32) {
                    const int j = ((p & ~(span - 1)) << 1) | (p & (span - 1));
                    const float x = buffer[j];
                    const float y = buffer[j + span];
                    buffer[j] = x + y;
                    buffer[j + span] = x - y;
                }
                __syncwarp();
            }
            for (int j = lane; j < n; j += 32) visit(s, out_index(start + j), buffer[j] * normaliser);
            __syncwarp();  // the next block's loads overwrite the buffer
        }
    }
}

}  // namespace
}  // namespace nvidia
}  // namespace zyfa

using zyfa::QuantFp8KernelArgs;

// With ZYFA_QUANT_KEY_BIAS only (after the mean launch): Q smoothing's bias of row s = blockIdx.x *
// kQuantThreads + threadIdx.x for query head blockIdx.y of sequence blockIdx.z (common/key_bias.h:
// fp64 in order over d, the row less K's mean as encode reads it, before any rotation).
extern "C" __global__ void __launch_bounds__(zyfa::kQuantThreads) zyfa_quantize_fp8_key_bias(const QuantFp8KernelArgs a) {
    const int32_t b = static_cast<int32_t>(blockIdx.z), hq = static_cast<int32_t>(blockIdx.y);
    const bool varlen = a.cu_seqlens != nullptr;
    const int64_t first = varlen ? a.cu_seqlens[b] : 0;
    const int64_t count = varlen ? static_cast<int64_t>(a.cu_seqlens[b + 1]) - a.cu_seqlens[b] : a.seqlen;
    const int64_t s = static_cast<int64_t>(blockIdx.x) * zyfa::kQuantThreads + threadIdx.x;
    if (s >= count) return;
    const int32_t hk = hq / (a.query_heads / a.heads);
    const int64_t in_row = (varlen ? 0 : b * a.in_stride_batch) + hk * a.in_stride_head + (first + s) * a.in_stride_seq;
    const float* mean = a.smooth_mean != nullptr ? a.smooth_mean + (static_cast<int64_t>(b) * a.heads + hk) * a.head_dim
                                                 : nullptr;
    const float* query_mean = a.query_mean + (static_cast<int64_t>(b) * a.query_heads + hq) * a.head_dim;
    const float bias = zyfa::numerics::smoothing_key_bias_of(query_mean, a.head_dim, a.key_bias_scale, [&](int64_t d) {
        const float x = zyfa::nvidia::load_input(a, in_row + d);
        return mean != nullptr ? zyfa::numerics::smooth_subtract(x, mean[d]) : x;
    });
    const int64_t index = varlen ? static_cast<int64_t>(hq) * a.cu_seqlens[a.batch] + first + s
                                 : (static_cast<int64_t>(b) * a.query_heads + hq) * a.seqlen + s;
    a.key_bias[index] = bias;
}

// Launch 1: every slice's amax starts at +0 (bits 0), the identity of the unsigned max.
extern "C" __global__ void __launch_bounds__(zyfa::kQuantThreads) zyfa_quantize_fp8_clear(const QuantFp8KernelArgs a) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < a.slices) a.descale[i] = 0.0f;
}

// Launch 1b, with smoothing only: the means of kQuantMeanChannels channels of slice (blockIdx.z,
// blockIdx.y). Warp w is common/smooth_mean.h's lane w (rows w, w + 8, ... in order), lane t
// channel blockIdx.x * 32 + t, so a warp reads 32 consecutive channels of one row; warp 0 then
// adds the lanes in order and divides.
extern "C" __global__ void __launch_bounds__(zyfa::kQuantThreads) zyfa_quantize_fp8_mean(const QuantFp8KernelArgs a) {
    static_assert(zyfa::kQuantWarps == zyfa::numerics::kSmoothLanes, "one warp per lane of the mean");
    static_assert(zyfa::kQuantMeanChannels == 32, "one channel per lane of a warp");
    __shared__ double lanes[zyfa::numerics::kSmoothLanes][zyfa::kQuantMeanChannels];
    const int32_t b = static_cast<int32_t>(blockIdx.z);
    const int32_t h = static_cast<int32_t>(blockIdx.y);
    const int warp = static_cast<int>(threadIdx.x) / 32;
    const int lane = static_cast<int>(threadIdx.x) % 32;
    const int64_t d = static_cast<int64_t>(blockIdx.x) * zyfa::kQuantMeanChannels + lane;
    const bool varlen = a.cu_seqlens != nullptr;
    const int64_t first = varlen ? a.cu_seqlens[b] : 0;
    const int64_t count = varlen ? static_cast<int64_t>(a.cu_seqlens[b + 1]) - a.cu_seqlens[b] : a.seqlen;
    const int64_t in_slice = (varlen ? 0 : b * a.in_stride_batch) + h * a.in_stride_head;
    double partial = 0.0;
    if (d < a.head_dim) {
        for (int64_t s = warp; s < count; s += zyfa::numerics::kSmoothLanes) {
            partial = zyfa::numerics::smooth_accumulate(
                partial, zyfa::nvidia::load_input(a, in_slice + (first + s) * a.in_stride_seq + d));
        }
    }
    lanes[warp][lane] = partial;
    __syncthreads();
    if (warp != 0 || d >= a.head_dim) return;
    double channel[zyfa::numerics::kSmoothLanes];
    for (int l = 0; l < zyfa::numerics::kSmoothLanes; ++l) channel[l] = lanes[l][lane];
    a.smooth_mean[zyfa::nvidia::slice_index(a) * a.head_dim + d] = zyfa::numerics::smooth_mean_from_lanes(channel, count);
}

// The row kernels ask for 4 resident blocks per SM (64 registers per thread): without the hint
// ptxas sizes registers for the occupancy the 32 KiB of shared memory allows and spills.

// Launch 2: amax of |value| over this block's rows, merged into descale[slice] as fp32 bits.
extern "C" __global__ void __launch_bounds__(zyfa::kQuantThreads, 4) zyfa_quantize_fp8_amax(const QuantFp8KernelArgs a) {
    __shared__ float buffers[zyfa::kQuantWarps][zyfa::kQuantMaxHadamardBlock];
    uint32_t amax_bits = 0;  // |x| as bits: the unsigned order of non-negative floats, NaN on top
    zyfa::nvidia::for_each_value(a, buffers[threadIdx.x / 32], [&](int64_t, int64_t, float value) {
        const uint32_t magnitude = zyfa::numerics::float_bits(value) & 0x7FFFFFFFu;
        amax_bits = magnitude > amax_bits ? magnitude : amax_bits;
    });
    amax_bits = __reduce_max_sync(0xFFFFFFFFu, amax_bits);
    if (threadIdx.x % 32 == 0 && amax_bits != 0) {
        atomicMax(reinterpret_cast<unsigned int*>(a.descale + zyfa::nvidia::slice_index(a)), amax_bits);
    }
}

// Launch 3: the codes, from the slice's finished amax (launch 2 completed before this started).
extern "C" __global__ void __launch_bounds__(zyfa::kQuantThreads, 4) zyfa_quantize_fp8_encode(const QuantFp8KernelArgs a) {
    __shared__ float buffers[zyfa::kQuantWarps][zyfa::kQuantMaxHadamardBlock];
    const zyfa::numerics::Fp8Format format = zyfa::nvidia::output_format(a);
    const float amax = a.descale[zyfa::nvidia::slice_index(a)];
    const bool all_zero = amax == 0.0f;  // every element is +-0: codes 0, as the CPU writes them
    const float pre_shift = amax < zyfa::nvidia::kTinyAmax ? zyfa::nvidia::kTinyShift : 1.0f;
    const float scale = zyfa::numerics::fp8_max(format) / (amax * pre_shift);
    auto* out = static_cast<uint8_t*>(a.out);
    zyfa::nvidia::for_each_value(a, buffers[threadIdx.x / 32], [=](int64_t, int64_t index, float value) {
        out[index] = all_zero ? uint8_t{0} : zyfa::numerics::fp8_encode((value * pre_shift) * scale, format);
    });
    if (a.v_transposed) {  // the padding keys of this block's rows (past the sequence, up to 128 keys): 0
        const int64_t row_begin = static_cast<int64_t>(blockIdx.x) * zyfa::kQuantRowsPerBlock;
        const int64_t padded = zyfa::numerics::vt_padded_keys(a.seqlen);
        const int64_t out_slice = static_cast<int64_t>(blockIdx.z) * a.out_stride_batch +
                                  static_cast<int64_t>(blockIdx.y) * a.out_stride_head;
        for (int64_t s = row_begin > a.seqlen ? row_begin : a.seqlen; s < padded && s < row_begin + zyfa::kQuantRowsPerBlock; ++s) {
            for (int d = static_cast<int>(threadIdx.x); d < a.head_dim; d += zyfa::kQuantThreads) {
                out[out_slice + zyfa::numerics::vt_offset(s, d, a.out_stride_seq)] = 0;
            }
        }
    }
}

// Launch 4: amax -> descale (after launch 3 read the amax).
extern "C" __global__ void __launch_bounds__(zyfa::kQuantThreads) zyfa_quantize_fp8_finish(const QuantFp8KernelArgs a) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= a.slices) return;
    const float amax = a.descale[i];
    a.descale[i] = amax == 0.0f ? 1.0f : amax / zyfa::numerics::fp8_max(zyfa::nvidia::output_format(a));
}

// zyfa_quantize_int8, the one launch after the optional mean (grid: the amax/encode row grid): the
// kQuantRowsPerBlock rows of this block hold whole scale groups (scale_rows 1 or 64, aligned to the
// sequence's row 0). Each group's amax of |value| as bits in shared memory (an atomic max per
// value into entry (row - first row) / scale_rows: the unsigned order of non-negative floats, NaN on
// top), then the codes int8_encode((value * pre_shift) * int8_quant_scale(amax * pre_shift)) and the descales
// int8_quant_descale(amax) (1 for an all-zero group) of the groups that hold a row, as
// src/cpu/quantize_fp8.cpp writes them; entries of groups past a sequence's rows are not written.
extern "C" __global__ void __launch_bounds__(zyfa::kQuantThreads, 4) zyfa_quantize_int8_groups(const QuantFp8KernelArgs a) {
    __shared__ float buffers[zyfa::kQuantWarps][zyfa::kQuantMaxHadamardBlock];
    __shared__ unsigned int group_amax[zyfa::kQuantRowsPerBlock];
    __shared__ float row_scale[zyfa::kQuantRowsPerBlock];
    __shared__ float row_shift[zyfa::kQuantRowsPerBlock];
    static_assert(zyfa::kQuantRowsPerBlock % zyfa::numerics::kInt8KeyBlock == 0, "whole K scale groups per block");
    const int32_t b = static_cast<int32_t>(blockIdx.z);
    const int64_t count =
        a.cu_seqlens != nullptr ? static_cast<int64_t>(a.cu_seqlens[b + 1]) - a.cu_seqlens[b] : a.seqlen;
    const int64_t row_begin = static_cast<int64_t>(blockIdx.x) * zyfa::kQuantRowsPerBlock;
    if (row_begin >= count) return;  // uniform over the block, before any barrier
    const int rows = static_cast<int>(count - row_begin < zyfa::kQuantRowsPerBlock ? count - row_begin
                                                                                   : zyfa::kQuantRowsPerBlock);
    const int t = static_cast<int>(threadIdx.x);
    if (t < zyfa::kQuantRowsPerBlock) group_amax[t] = 0u;
    __syncthreads();
    float* buffer = buffers[t / 32];
    zyfa::nvidia::for_each_value(a, buffer, [&](int64_t s, int64_t, float value) {
        atomicMax(&group_amax[(s - row_begin) / a.scale_rows], zyfa::numerics::float_bits(value) & 0x7FFFFFFFu);
    });
    __syncthreads();
    float* descale = a.descale + zyfa::nvidia::slice_index(a) * a.scale_groups;
    if (t < rows) {
        const float amax = zyfa::numerics::bits_float(group_amax[t / a.scale_rows]);
        const float pre_shift = amax < zyfa::nvidia::kTinyAmax ? zyfa::nvidia::kTinyShift : 1.0f;
        row_shift[t] = pre_shift;
        row_scale[t] = amax == 0.0f ? 0.0f : zyfa::numerics::int8_quant_scale(amax * pre_shift);  // 0: all zero
        if (a.scale_rows == 1 || t == 0) {
            descale[(row_begin + t) / a.scale_rows] = amax == 0.0f ? 1.0f : zyfa::numerics::int8_quant_descale(amax);
        }
    }
    __syncthreads();
    auto* out = static_cast<int8_t*>(a.out);
    zyfa::nvidia::for_each_value(a, buffer, [&](int64_t s, int64_t index, float value) {
        const float scale = row_scale[s - row_begin];
        out[index] = scale == 0.0f ? int8_t{0} : zyfa::numerics::int8_encode((value * row_shift[s - row_begin]) * scale);
    });
}
