// Which NVIDIA attention kernel runs a validated problem, and how it is launched: the catalogue
// (gpu::AttnKernelCatalogue, src/gpu/gpu_backend.hpp) of the kernels in kernels/nvidia.
//
// Kernels (kernels/nvidia/attention_fwd_variant.cu; one embedded cubin = one variant):
//   variant attn_fwd_b16_<dims>:  zyfa_attn_fwd_bf16_<dims>, zyfa_attn_fwd_fp16_<dims> (EXACT)
//   variant attn_fwd_e4m3_<dims>: zyfa_attn_fwd_e4m3_exact_<dims>, zyfa_attn_fwd_e4m3_lean_<dims>
//   <dims>: d64, d128, d256 (head_dim_qk = head_dim_v) or d192_128.
// Archs: sm_90a has all of them; sm_80 (also run by 8.6/8.9 GPUs) has the 16-bit kernels of head
// dims 64, 128 and 192/128 (no e4m3 MMA there; head dim 256 needs more shared memory than sm_80).
// Launch: grid (ceil(seqlen_q / 128), heads_q, batch), 256 threads (8 warps x 16 query rows),
// dynamic shared memory from kernels/nvidia/attention_tile_shape.h.
#pragma once

#include <memory>

#include "gpu/gpu_backend.hpp"

namespace zyfa {
namespace cuda {

std::unique_ptr<gpu::AttnKernelCatalogue> make_cuda_attn_catalogue();

}  // namespace cuda
}  // namespace zyfa
