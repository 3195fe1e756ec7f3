// The argument struct and launch geometry of the GPU zyfa_quantize_fp8 and zyfa_quantize_int8 kernels
// (kernels/nvidia/quantize_fp8.cu, kernels/amd/quantize_fp8.hip), shared by the kernels and the
// host launch code (src/gpu/gpu_backend.cpp). Plain fixed-width fields, passed by value as the only
// parameter of each of the five kernels. Nothing here is CUDA-specific: the HIP kernels include it
// as it is (their amax launch differs: workgroup x = 0 of each slice reduces all its rows in LDS
// and stores the amax, so no atomicMax).
//
// The four launches, in order on the caller's stream (stream order is the only synchronisation),
// five with K smoothing (ZYFA_QUANT_SMOOTH):
//   1. clear:  descale[i] = +0.0 for every (batch, head) slice i            grid (ceil(slices/256))
//  (1b. mean:  smooth_mean[slice, d] = the channel's mean (common/smooth_mean.h)
//                                                                 grid (ceil(head_dim/32), heads, batch))
//   2. amax:   atomicMax of |rotated (x - mean)|'s fp32 bits into descale[slice]
//              (non-negative floats order like their bits as unsigned integers, NaN above +inf)
//                                                                 grid (row chunks, heads, batch)
//   3. encode: codes = fp8_encode((x - mean) * scale), rotated, with scale from the slice's amax
//              (same grid)
//   4. finish: descale[i] = amax == 0 ? 1 : amax / fp8_max                  grid (ceil(slices/256))
//  (5. key bias, with ZYFA_QUANT_KEY_BIAS only: key_bias[b, hq, s] from query_mean and the
//      row less its mean (common/key_bias.h), one thread per row   grid (ceil(seqlen/256), query_heads, batch))
// so the caller's descale buffer is the amax scratch and its smooth_mean buffer holds the means
// the later launches subtract: no allocation, no synchronisation.
// zyfa_quantize_int8 launches the mean (when smoothing) and then only
//   int8:   per kQuantRowsPerBlock rows (whole scale groups of 1 or 64 rows): the rows' amax in
//           shared memory, then codes and descales (common/int8_qk.h)     grid (row chunks, heads, batch)
#ifndef ZYFA_KERNELS_NVIDIA_QUANTIZE_FP8_ARGS_H
#define ZYFA_KERNELS_NVIDIA_QUANTIZE_FP8_ARGS_H

#include <stdint.h>

namespace zyfa {

constexpr int32_t kQuantThreads = 256;          // every quantize kernel: 8 warps
constexpr int32_t kQuantWarps = kQuantThreads / 32;
constexpr int32_t kQuantRowsPerBlock = 64;       // rows of one slice per amax / encode block
constexpr int32_t kQuantMaxHadamardBlock = 1024;  // per-warp shared buffer of the rotation (4 KiB)
constexpr int32_t kQuantMeanChannels = 32;       // channels per mean block: one per lane of a warp

struct QuantFp8KernelArgs {
    const void* in;              // [batch, seqlen, heads, head_dim] fp32 / fp16 / bf16
    void* out;                   // the same shape, fp8 codes
    float* descale;              // [batch, heads]: the amax bits between launches 2 and 4
    const int32_t* cu_seqlens;   // null: fixed length
    float* smooth_mean;          // [batch, heads, head_dim]: written by the mean launch, read by
                                 // amax and encode; null: no smoothing
    int64_t in_stride_batch, in_stride_seq, in_stride_head;    // elements; batch 0 when varlen
    int64_t out_stride_batch, out_stride_seq, out_stride_head;
    int32_t batch, seqlen, heads, head_dim;  // seqlen: the longest sequence when varlen
    int32_t in_dtype;        // AttnKernelDtype (attention_kernel_args.h): fp32, fp16 or bf16
    int32_t out_dtype;       // kKernelE4m3fn or kKernelE4m3fnuz; kKernelInt8 (zyfa_quantize_int8)
    int32_t hadamard_block;  // 0: no rotation; else the block size (hadamard.h), <= kQuantMaxHadamardBlock
    int32_t slices;          // batch * heads
    // zyfa_quantize_int8 (out_dtype kKernelInt8): rows per scale (1 or 64, from the sequence's row
    // 0) and scales per slice (ceil(seqlen / scale_rows)); descale is then [batch, heads,
    // scale_groups]. zyfa_quantize_fp8: 0 and 1.
    int32_t scale_rows;
    int32_t scale_groups;
    // ZYFA_QUANT_V_TRANSPOSED (NVIDIA only; fixed length): out in the transposed V layout
    // (common/v_transposed.h), out_stride_seq the distance between 16-key groups; the encode launch's
    // grid covers the padded keys, whose codes it writes as 0. Else 0.
    int32_t v_transposed;
    // ZYFA_QUANT_KEY_BIAS (launch 5), else null and 0: query_mean [batch, query_heads, head_dim] in,
    // key_bias [batch, query_heads, seqlen] (or [query_heads, total] when varlen) out.
    const float* query_mean;
    float* key_bias;
    int32_t query_heads;
    float key_bias_scale;
};

}  // namespace zyfa

#endif
