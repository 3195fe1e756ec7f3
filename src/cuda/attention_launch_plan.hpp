// Which NVIDIA attention kernel runs a validated problem, and how it is launched: the catalogue
// (gpu::AttnKernelCatalogue, src/gpu/gpu_backend.hpp) of the kernels in kernels/nvidia.
//
// The problem (its split-KV workspace and num_splits included), the device's image arch and, for
// split-KV, its SM count alone decide; nothing else takes part (no environment
// variable, no context option: docs/configuration.md). One embedded cubin = one variant; the
// variants, their names and which archs build them are kernels/nvidia/attention_kernel_variants.def,
// the one list the build (kernels/nvidia/CMakeLists.txt) and this plan's tables both read.
//   sm_90a: the warp-specialised kernels (kernels/nvidia/attention_fwd_ws.cuh,
//     attention_fwd_ws_variant.cu) take every problem whose O keeps pairs of elements aligned:
//     BF16/FP16 and FP8 e4m3fn EXACT and LEAN, head dims 64, 128, 256 and 192/128 (DIMS = d64,
//     d128, d256, d192_128):
//       variant attn_fwd_ws_b16_DIMS:  zyfa_attn_fwd_ws_bf16_DIMS, zyfa_attn_fwd_ws_fp16_DIMS
//       variant attn_fwd_ws_e4m3_DIMS: zyfa_attn_fwd_ws_e4m3_exact_DIMS, zyfa_attn_fwd_ws_e4m3_lean_DIMS
//     Launch: grid (ceil(seqlen_q / 128), heads_q, batch), 384 threads (a producer warpgroup, two
//     consumer warpgroups of 64 rows), dynamic shared memory of attention_ws_tile_shape.h, and a
//     second parameter: the tensor maps (attention_ws_tma_params.h) where the problem allows them
//     (ws_tma_maps.hpp), otherwise none and the kernel copies with cp.async, with the same results.
//     They store O two elements at a time (8 bytes fp32, 4 bytes 16-bit); an O whose base or a
//     stride is odd runs the mma.sync kernel below instead, the only problems it takes on sm_90a.
//   The mma.sync kernels (kernels/nvidia/attention_fwd_mma.cuh, attention_fwd_variant.cu), which
//     store O one element at a time:
//       variant attn_fwd_b16_DIMS:  zyfa_attn_fwd_bf16_DIMS, zyfa_attn_fwd_fp16_DIMS (EXACT)
//       variant attn_fwd_e4m3_DIMS: zyfa_attn_fwd_e4m3_exact_DIMS, zyfa_attn_fwd_e4m3_lean_DIMS
//     sm_90a has all of them; sm_80 (also run by 8.6/8.9 GPUs) the 16-bit ones of head dims 64, 128
//     and 192/128 (no e4m3 MMA there; head dim 256 needs more shared memory than sm_80 has), which
//     run every problem there.
//     Launch: grid (ceil(seqlen_q / 128), heads_q, batch), 256 threads (8 warps x 16 query rows),
//     dynamic shared memory of attention_tile_shape.h.
//   Split-KV (kernels/nvidia/attention_fwd_split.cuh, attention_fwd_split_variant.cu; sm_90a): with a
//     workspace, a BF16/FP16 problem at head dims 64 or 128 with seqlen_q <= 128, contiguous or
//     paged K/V, with or without sinks, and key_block 0 whose split count (split_kv_plan.hpp) is
//     >= 2 runs (decided before the unsplit kernels, so paged problems at head dim 64 split too)
//       variant attn_fwd_split_b16_DIMS: zyfa_attn_fwd_split_bf16_DIMS, zyfa_attn_fwd_split_fp16_DIMS
//     Launch: grid (ceil(G * seqlen_q / 16) * heads_kv, splits, batch), 128 threads, the second
//     parameter nvidia::SplitParams (attention_split_params.h: SplitKvArgs and the paged block
//     table); then zyfa_attn_merge's kernel over the parts
//     (gpu_backend.cpp). AttnLaunch::splits says so.
// zyfa_quantize_fp8 (kernels/nvidia/quantize_fp8.cu): variant quantize_fp8 on sm_90a and sm_80,
// symbols zyfa_quantize_fp8_{clear,mean,amax,encode,finish}, launched by src/gpu/gpu_backend.cpp.
#pragma once

#include <memory>

#include "gpu/gpu_backend.hpp"

namespace zyfa {
namespace cuda {

// How a catalogue's warp-specialised kernels copy Q, K and V.
enum class CudaKernelChoice {
    Automatic,  // the tensor memory accelerator where the problem allows its maps, cp.async otherwise
    CpAsync,    // cp.async on every problem (no tensor map is ever encoded)
};

// The catalogue. The library always makes Automatic (make_cuda_backend); CpAsync is a seam for
// tests, which link it from zyfa_internal to run the cp.async producer on problems the tensor
// maps would take (libzyfa.so exports no way to ask for it). tests/support/cuda_context.hpp.
std::unique_ptr<gpu::AttnKernelCatalogue> make_cuda_attn_catalogue(CudaKernelChoice choice = CudaKernelChoice::Automatic);

}  // namespace cuda
}  // namespace zyfa
