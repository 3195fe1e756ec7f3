// Which NVIDIA attention kernel runs a validated problem, and how it is launched: the catalogue
// (gpu::AttnKernelCatalogue, src/gpu/gpu_backend.hpp) of the kernels in kernels/nvidia.
//
// Kernels (kernels/nvidia/attention_fwd_variant.cu; one embedded cubin = one variant):
//   variant attn_fwd_b16_<dims>:  zyfa_attn_fwd_bf16_<dims>, zyfa_attn_fwd_fp16_<dims> (EXACT)
//   variant attn_fwd_e4m3_<dims>: zyfa_attn_fwd_e4m3_exact_<dims>, zyfa_attn_fwd_e4m3_lean_<dims>
//   <dims>: d64, d128, d256 (head_dim_qk = head_dim_v) or d192_128.
// Archs: sm_90a has all of them; sm_80 (also run by 8.6/8.9 GPUs) has the 16-bit kernels of head
// dims 64, 128 and 192/128 (no e4m3 MMA there; head dim 256 needs more shared memory than sm_80).
// sm_90a also has the wgmma kernels (kernels/nvidia/attention_fwd_wgmma.cuh) for head dim 128:
//   variant attn_fwd_wg_b16_d128:  zyfa_attn_fwd_wg_bf16_d128, zyfa_attn_fwd_wg_fp16_d128
//   variant attn_fwd_wg_e4m3_d128: zyfa_attn_fwd_wg_e4m3_exact_d128, zyfa_attn_fwd_wg_e4m3_lean_d128
// which the plan picks there for head dim 128/128 when O allows paired stores
// (ZYFA_NVIDIA_WGMMA=0 in the environment when a context is created keeps its mma.sync kernels).
// sm_90a also has the warp-specialised kernels (kernels/nvidia/attention_fwd_ws.cuh), head dims
// 64, 128, 192/128 and 256 (DIMS = d64, d128, d192_128 or d256):
//   variant attn_fwd_ws_b16_DIMS:  zyfa_attn_fwd_ws_bf16_DIMS, zyfa_attn_fwd_ws_fp16_DIMS
//   variant attn_fwd_ws_e4m3_DIMS: zyfa_attn_fwd_ws_e4m3_exact_DIMS, zyfa_attn_fwd_ws_e4m3_lean_DIMS
// which the plan picks by default for 16-bit inputs and FP8 LEAN (ZYFA_NVIDIA_WS unset or 2; 1:
// 16-bit only; 3: FP8 EXACT too; 0: none). They run 384 threads.
// Launch: grid (ceil(seqlen_q / 128), heads_q, batch), 256 threads (8 warps x 16 query rows, or
// 2 warpgroups x 64 rows), dynamic shared memory from kernels/nvidia/attention_tile_shape.h or
// attention_wgmma_tile_shape.h.
// zyfa_quantize_fp8 (kernels/nvidia/quantize_fp8.cu): variant quantize_fp8 on sm_90a and sm_80,
// symbols zyfa_quantize_fp8_{clear,amax,encode,finish}, launched by src/gpu/gpu_backend.cpp.
#pragma once

#include <memory>

#include "gpu/gpu_backend.hpp"

namespace zyfa {
namespace cuda {

std::unique_ptr<gpu::AttnKernelCatalogue> make_cuda_attn_catalogue();

}  // namespace cuda
}  // namespace zyfa
