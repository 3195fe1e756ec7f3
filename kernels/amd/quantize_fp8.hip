// zyfa_quantize_fp8 on AMD GPUs (gfx950, gfx942): the five kernels of
// nvidia/quantize_fp8_args.h (clear, mean, amax, encode, finish) with the same arguments, grids and
// block size as the CUDA kernels, one code object per arch. The codes, descales and means are
// bit-identical to the CPU backend (src/cpu/quantize_fp8.cpp, the spec) for the same reasons as
// kernels/nvidia/quantize_fp8.cu: the same fp32 loads, common/smooth_mean.h's fp64 lane sums (each
// lane's rows added in order by one group of threads), common/hadamard.h's butterflies (each
// butterfly of a stage is independent), the same scale expression and common/fp8_e4m3.h's encoder;
// built with -ffp-contract=off so no multiply is fused into an add. Both output formats are plain
// integer encodings, so either arch writes e4m3fn or e4m3fnuz codes.
//
// Where it differs from the CUDA kernels, and why:
//   - A "group" is 32 threads (8 per workgroup), as a CUDA warp, but a gfx9 wave is 64 lanes, so a
//     group is half a wave and has no warp-level barrier; the Hadamard stages are separated by
//     workgroup barriers instead, and every group runs the same number of row rounds so that each
//     barrier is reached by all 256 threads.
//   - The amax is reduced in LDS by one workgroup per slice (block x = 0 of the amax grid loops
//     over all the slice's rows; the others return) and stored, not merged with a global atomicMax:
//     the result does not depend on which workgroups run first, and the project's emulator (which
//     has no global atomics) can run it. The clear launch still runs: the host launch sequence is
//     the same for both vendors (src/gpu/gpu_backend.cpp).
//
// zyfa_quantize_int8 (args.scale_rows 1 or 64) is the sixth kernel, zyfa_quantize_int8_groups, after
// the mean launch when smoothing: each scale group (1 or 64 rows from the sequence's row 0) lies
// inside one workgroup's kQuantRowsPerBlock rows, so one workgroup finds its rows' amax (LDS), then
// writes their codes and descales with common/int8_qk.h's scale, encoder and descale, as the CPU.
//
// As on CUDA, non-finite input is not checked (that would need a synchronisation): a slice with a
// NaN gets descale NaN and NaN codes, one with +-inf descale +inf.
#include "amd/hip_device.h"
#include "common/attention_kernel_args.h"
#include "common/fp8_e4m3.h"
#include "common/hadamard.h"
#include "common/half_types.h"
#include "common/int8_qk.h"
#include "common/key_bias.h"
#include "common/smooth_mean.h"
#include "nvidia/quantize_fp8_args.h"

namespace zyfa {
namespace amd {
namespace {

constexpr int kGroupThreads = 32;  // one CUDA warp's worth: kQuantWarps groups per workgroup

// As src/cpu/quantize_fp8.cpp: below this amax, fp8_max / amax could overflow fp32, so such
// slices are first scaled by a power of two (exact), giving the codes the unshifted scale would.
constexpr float kTinyAmax = 0x1p-100f;
constexpr float kTinyShift = 0x1p100f;

__device__ inline float load_input(const QuantFp8KernelArgs& a, int64_t index) {
    switch (a.in_dtype) {
        case kKernelFp16: return numerics::fp16_to_float(static_cast<const uint16_t*>(a.in)[index]);
        case kKernelBf16: return numerics::bf16_to_float(static_cast<const uint16_t*>(a.in)[index]);
        default: return static_cast<const float*>(a.in)[index];
    }
}

__device__ inline numerics::Fp8Format output_format(const QuantFp8KernelArgs& a) {
    return a.out_dtype == kKernelE4m3fnuz ? numerics::Fp8Format::E4M3FNUZ : numerics::Fp8Format::E4M3FN;
}

__device__ inline int64_t slice_index(const QuantFp8KernelArgs& a) {
    return static_cast<int64_t>(block_id_z()) * a.heads + block_id_y();
}

// The first packed row and the row count of sequence block_id_z().
__device__ inline int64_t sequence_first(const QuantFp8KernelArgs& a) {
    return a.cu_seqlens != nullptr ? a.cu_seqlens[block_id_z()] : 0;
}
__device__ inline int64_t sequence_count(const QuantFp8KernelArgs& a) {
    const int32_t b = block_id_z();
    return a.cu_seqlens != nullptr ? static_cast<int64_t>(a.cu_seqlens[b + 1]) - a.cu_seqlens[b] : a.seqlen;
}

// Calls visit(row, out_index, value) for every element of rows [row_begin, row_end) of slice
// (block_id_z(), block_id_y()), value being the fp32 the CPU model quantises: the loaded element
// less its channel's mean when smoothing, then its Hadamard rotation computed exactly as
// common/hadamard.h orders it. Group g takes rows row_begin + g, + 8, ...; `buffers` holds each
// group's kQuantMaxHadamardBlock floats. Every thread of the workgroup must call it with the same
// rows (it contains workgroup barriers).
template <class Visit>
__device__ inline void for_each_value(const QuantFp8KernelArgs& a, int64_t row_begin, int64_t row_end,
                                      float (*buffers)[kQuantMaxHadamardBlock], Visit visit) {
    const int32_t b = block_id_z();
    const int32_t h = block_id_y();
    const bool varlen = a.cu_seqlens != nullptr;
    const int64_t first = sequence_first(a);
    const int group = thread_id() / kGroupThreads;
    const int lane = thread_id() % kGroupThreads;
    float* buffer = buffers[group];
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

    // Workgroup-uniform: the same number of rounds for every group, the last groups idle past row_end.
    for (int64_t round_row = row_begin; round_row < row_end; round_row += kQuantWarps) {
        const int64_t s = round_row + group;
        const bool active = s < row_end;
        const int64_t in_row = in_slice + (first + s) * a.in_stride_seq;
        const int64_t out_row = out_slice + (first + s) * a.out_stride_seq;
        if (n == 0) {
            if (active) {
                for (int d = lane; d < a.head_dim; d += kGroupThreads) visit(s, out_row + d, value_at(in_row, d));
            }
            continue;
        }
        for (int start = 0; start < a.head_dim; start += n) {
            if (active) {
                for (int j = lane; j < n; j += kGroupThreads) buffer[j] = value_at(in_row, start + j);
            }
            sync_workgroup();
            for (int span = 1; span < n; span *= 2) {
                if (active) {
                    // Butterfly p of this stage: (j, j + span), j = p with a zero inserted at bit log2(span).
                    for (int p = lane; p < n / 2; p += kGroupThreads) {
                        const int j = ((p & ~(span - 1)) << 1) | (p & (span - 1));
                        const float x = buffer[j];
                        const float y = buffer[j + span];
                        buffer[j] = x + y;
                        buffer[j + span] = x - y;
                    }
                }
                sync_workgroup();
            }
            if (active) {
                for (int j = lane; j < n; j += kGroupThreads) visit(s, out_row + start + j, buffer[j] * normaliser);
            }
            sync_workgroup();  // the next block's loads overwrite the buffer
        }
    }
}

// The descale amax / max_code (the CPU's), computed so that the division never runs at the fp32
// range's top edge (numerator 2^96 times the divisor or more, where v_div_scale sets VCC for
// v_div_fmas, which the emulator refuses to guess): a NaN or infinite amax is its own quotient,
// and an amax above 2^64 is divided scaled down by 2^64 and scaled back, both scalings exact
// (normal numbers), so the bits are the single division's. amax 0 (all zeros) gives 1.
__device__ inline float descale_of(float amax, float max_code) {
    if (amax == 0.0f) return 1.0f;
    if (!(amax <= 0x1.fffffep127f)) return amax;  // NaN / max is NaN, +inf / max is +inf
    if (amax > 0x1p64f) return ((amax * 0x1p-64f) / max_code) * 0x1p64f;
    return amax / max_code;
}

}  // namespace
}  // namespace amd
}  // namespace zyfa

using zyfa::QuantFp8KernelArgs;

#define ZYFA_QUANT_KERNEL \
    extern "C" __global__ void __attribute__((amdgpu_flat_work_group_size(zyfa::kQuantThreads, zyfa::kQuantThreads)))

// Launch 1: every slice's descale starts at +0 (launch 2 overwrites it with the amax).
ZYFA_QUANT_KERNEL zyfa_quantize_fp8_clear(const QuantFp8KernelArgs a) {
    const int64_t i = static_cast<int64_t>(zyfa::amd::block_id_x()) * zyfa::kQuantThreads + zyfa::amd::thread_id();
    if (i < a.slices) a.descale[i] = 0.0f;
}

// Launch 1b, with smoothing only: the means of kQuantMeanChannels channels of slice (block z,
// block y). Group w is common/smooth_mean.h's lane w (rows w, w + 8, ... in order), thread t of it
// channel block_x * 32 + t; group 0 then adds the lanes in order and divides.
ZYFA_QUANT_KERNEL zyfa_quantize_fp8_mean(const QuantFp8KernelArgs a) {
    static_assert(zyfa::kQuantWarps == zyfa::numerics::kSmoothLanes, "one group per lane of the mean");
    static_assert(zyfa::kQuantMeanChannels == zyfa::amd::kGroupThreads, "one channel per thread of a group");
    static ZYFA_SHARED double lanes[zyfa::numerics::kSmoothLanes][zyfa::kQuantMeanChannels];
    const int group = zyfa::amd::thread_id() / zyfa::amd::kGroupThreads;
    const int lane = zyfa::amd::thread_id() % zyfa::amd::kGroupThreads;
    const int64_t d = static_cast<int64_t>(zyfa::amd::block_id_x()) * zyfa::kQuantMeanChannels + lane;
    const bool varlen = a.cu_seqlens != nullptr;
    const int64_t first = zyfa::amd::sequence_first(a);
    const int64_t count = zyfa::amd::sequence_count(a);
    const int64_t in_slice =
        (varlen ? 0 : zyfa::amd::block_id_z() * a.in_stride_batch) + zyfa::amd::block_id_y() * a.in_stride_head;
    double partial = 0.0;
    if (d < a.head_dim) {
        for (int64_t s = group; s < count; s += zyfa::numerics::kSmoothLanes) {
            partial = zyfa::numerics::smooth_accumulate(
                partial, zyfa::amd::load_input(a, in_slice + (first + s) * a.in_stride_seq + d));
        }
    }
    lanes[group][lane] = partial;
    zyfa::amd::sync_workgroup();
    if (group != 0 || d >= a.head_dim) return;
    double channel[zyfa::numerics::kSmoothLanes];
    for (int l = 0; l < zyfa::numerics::kSmoothLanes; ++l) channel[l] = lanes[l][lane];
    a.smooth_mean[zyfa::amd::slice_index(a) * a.head_dim + d] = zyfa::numerics::smooth_mean_from_lanes(channel, count);
}

// Launch 5, with ZYFA_QUANT_KEY_BIAS only (after the mean): Q smoothing's bias of row s = block_x *
// 256 + thread for query head block_y of sequence block_z (common/key_bias.h: fp64 in order over d,
// the row less K's mean as encode reads it, before any rotation).
ZYFA_QUANT_KERNEL zyfa_quantize_fp8_key_bias(const QuantFp8KernelArgs a) {
    const int64_t s = static_cast<int64_t>(zyfa::amd::block_id_x()) * zyfa::kQuantThreads + zyfa::amd::thread_id();
    if (s >= zyfa::amd::sequence_count(a)) return;
    const int32_t b = zyfa::amd::block_id_z(), hq = zyfa::amd::block_id_y();
    const int32_t hk = hq / (a.query_heads / a.heads);
    const bool varlen = a.cu_seqlens != nullptr;
    const int64_t first = zyfa::amd::sequence_first(a);
    const int64_t in_row = (varlen ? 0 : b * a.in_stride_batch) + hk * a.in_stride_head + (first + s) * a.in_stride_seq;
    const float* mean = a.smooth_mean != nullptr ? a.smooth_mean + (static_cast<int64_t>(b) * a.heads + hk) * a.head_dim
                                                 : nullptr;
    const float* query_mean = a.query_mean + (static_cast<int64_t>(b) * a.query_heads + hq) * a.head_dim;
    const float bias = zyfa::numerics::smoothing_key_bias_of(query_mean, a.head_dim, a.key_bias_scale, [&](int64_t d) {
        const float x = zyfa::amd::load_input(a, in_row + d);
        return mean != nullptr ? zyfa::numerics::smooth_subtract(x, mean[d]) : x;
    });
    const int64_t index = varlen ? static_cast<int64_t>(hq) * a.cu_seqlens[a.batch] + first + s
                                 : (static_cast<int64_t>(b) * a.query_heads + hq) * a.seqlen + s;
    a.key_bias[index] = bias;
}

// Launch 2: amax of |value| over all rows of the slice, by workgroup x = 0 of the row grid, stored
// in descale[slice]. |x| is kept as bits: non-negative floats order like their bits as unsigned
// integers, NaN above +inf, so a NaN reaches the descale as the CUDA kernel's does.
ZYFA_QUANT_KERNEL zyfa_quantize_fp8_amax(const QuantFp8KernelArgs a) {
    static ZYFA_SHARED float buffers[zyfa::kQuantWarps][zyfa::kQuantMaxHadamardBlock];
    static ZYFA_SHARED uint32_t partial[zyfa::kQuantThreads];
    if (zyfa::amd::block_id_x() != 0) return;  // the whole workgroup: no barrier is left waiting
    uint32_t amax_bits = 0;
    zyfa::amd::for_each_value(a, 0, zyfa::amd::sequence_count(a), buffers, [&](int64_t, int64_t, float value) {
        const uint32_t magnitude = zyfa::numerics::float_bits(value) & 0x7FFFFFFFu;
        amax_bits = magnitude > amax_bits ? magnitude : amax_bits;
    });
    const int t = zyfa::amd::thread_id();
    partial[t] = amax_bits;
    zyfa::amd::sync_workgroup();
    for (int half = zyfa::kQuantThreads / 2; half > 0; half /= 2) {
        if (t < half && partial[t + half] > partial[t]) partial[t] = partial[t + half];
        zyfa::amd::sync_workgroup();
    }
    if (t == 0) a.descale[zyfa::amd::slice_index(a)] = zyfa::numerics::bits_float(partial[0]);
}

// Launch 3: the codes of this workgroup's kQuantRowsPerBlock rows, from the slice's finished amax
// (launch 2 completed before this started).
ZYFA_QUANT_KERNEL zyfa_quantize_fp8_encode(const QuantFp8KernelArgs a) {
    static ZYFA_SHARED float buffers[zyfa::kQuantWarps][zyfa::kQuantMaxHadamardBlock];
    const zyfa::numerics::Fp8Format format = zyfa::amd::output_format(a);
    const float amax = a.descale[zyfa::amd::slice_index(a)];
    const bool all_zero = amax == 0.0f;  // every element is +-0: codes 0, as the CPU writes them
    const float pre_shift = amax < zyfa::amd::kTinyAmax ? zyfa::amd::kTinyShift : 1.0f;
    const float scale = zyfa::numerics::fp8_max(format) / (amax * pre_shift);
    const int64_t count = zyfa::amd::sequence_count(a);
    const int64_t row_begin = static_cast<int64_t>(zyfa::amd::block_id_x()) * zyfa::kQuantRowsPerBlock;
    const int64_t row_end = count < row_begin + zyfa::kQuantRowsPerBlock ? count : row_begin + zyfa::kQuantRowsPerBlock;
    auto* out = static_cast<uint8_t*>(a.out);
    zyfa::amd::for_each_value(a, row_begin, row_end, buffers, [=](int64_t, int64_t index, float value) {
        out[index] = all_zero ? uint8_t{0} : zyfa::numerics::fp8_encode((value * pre_shift) * scale, format);
    });
}

// Launch 4: amax -> descale (after launch 3 read the amax): descale_of's amax / fp8_max.
ZYFA_QUANT_KERNEL zyfa_quantize_fp8_finish(const QuantFp8KernelArgs a) {
    const int64_t i = static_cast<int64_t>(zyfa::amd::block_id_x()) * zyfa::kQuantThreads + zyfa::amd::thread_id();
    if (i >= a.slices) return;
    a.descale[i] = zyfa::amd::descale_of(a.descale[i], zyfa::numerics::fp8_max(zyfa::amd::output_format(a)));
}

// zyfa_quantize_int8, the one launch after the optional mean (grid: the amax/encode row grid): the
// kQuantRowsPerBlock rows of this workgroup hold whole scale groups (scale_rows 1 or 64, aligned to
// the sequence's row 0). Each group's amax of |value| as bits in LDS (ds_max_u32 per value into
// entry (row - first row) / scale_rows: the unsigned order of non-negative floats, NaN on top), then
// the codes int8_encode((value * pre_shift) * int8_quant_scale(amax * pre_shift)) and the
// descales of the groups that hold a row, as src/cpu/quantize_fp8.cpp writes them; entries of
// groups past a sequence's rows are not written (the CPU writes none either).
ZYFA_QUANT_KERNEL zyfa_quantize_int8_groups(const QuantFp8KernelArgs a) {
    static ZYFA_SHARED float buffers[zyfa::kQuantWarps][zyfa::kQuantMaxHadamardBlock];
    static ZYFA_SHARED uint32_t group_amax[zyfa::kQuantRowsPerBlock];
    static ZYFA_SHARED float row_scale[zyfa::kQuantRowsPerBlock];
    static ZYFA_SHARED float row_shift[zyfa::kQuantRowsPerBlock];
    static_assert(zyfa::kQuantRowsPerBlock % zyfa::numerics::kInt8KeyBlock == 0, "whole K scale groups per block");
    const int64_t count = zyfa::amd::sequence_count(a);
    const int64_t row_begin = static_cast<int64_t>(zyfa::amd::block_id_x()) * zyfa::kQuantRowsPerBlock;
    if (row_begin >= count) return;  // uniform over the workgroup, before any barrier
    const int64_t row_end = count < row_begin + zyfa::kQuantRowsPerBlock ? count : row_begin + zyfa::kQuantRowsPerBlock;
    const int rows = static_cast<int>(row_end - row_begin);
    const int t = zyfa::amd::thread_id();
    if (t < zyfa::kQuantRowsPerBlock) group_amax[t] = 0u;
    zyfa::amd::sync_workgroup();
    zyfa::amd::for_each_value(a, row_begin, row_end, buffers, [&](int64_t s, int64_t, float value) {
        const uint32_t magnitude = zyfa::numerics::float_bits(value) & 0x7FFFFFFFu;
        __atomic_fetch_max(&group_amax[(s - row_begin) / a.scale_rows], magnitude, __ATOMIC_RELAXED);
    });
    zyfa::amd::sync_workgroup();
    float* descale = a.descale + zyfa::amd::slice_index(a) * a.scale_groups;
    if (t < rows) {
        const float amax = zyfa::numerics::bits_float(group_amax[t / a.scale_rows]);
        const float pre_shift = amax < zyfa::amd::kTinyAmax ? zyfa::amd::kTinyShift : 1.0f;
        row_shift[t] = pre_shift;
        row_scale[t] = amax == 0.0f ? 0.0f : zyfa::numerics::int8_quant_scale(amax * pre_shift);  // 0: all zero
        if (a.scale_rows == 1 || t == 0) {
            descale[(row_begin + t) / a.scale_rows] =
                zyfa::amd::descale_of(amax, zyfa::numerics::kInt8MaxCode);  // int8_quant_descale's amax / 127
        }
    }
    zyfa::amd::sync_workgroup();
    auto* out = static_cast<int8_t*>(a.out);
    zyfa::amd::for_each_value(a, row_begin, row_end, buffers, [&](int64_t s, int64_t index, float value) {
        const float scale = row_scale[s - row_begin];
        out[index] = scale == 0.0f ? int8_t{0} : zyfa::numerics::int8_encode((value * row_shift[s - row_begin]) * scale);
    });
}
