// Which AMD attention kernel runs a validated problem, and how it is launched: the catalogue
// (gpu::AttnKernelCatalogue, src/gpu/gpu_backend.hpp) of the kernels in kernels/amd.
//
// Kernels (kernels/amd/attention_fwd_variant.hip; one embedded code object = one variant), for
// <dims> d128 (head_dim_qk = head_dim_v = 128) and d192_128 (MLA: 192/128):
//   gfx950: attn_fwd_bf16_<dims>: zyfa_attn_fwd_bf16_<dims>          BF16, softmax EXACT
//           attn_fwd_fp8_<dims>:  zyfa_attn_fwd_e4m3_lean_<dims>     FP8 e4m3fn, softmax LEAN
//   gfx942: attn_fwd_bf16_<dims>: zyfa_attn_fwd_bf16_<dims>          BF16, softmax EXACT
//           attn_fwd_fp8_<dims>:  zyfa_attn_fwd_e4m3fnuz_lean_<dims> FP8 e4m3fnuz, softmax LEAN
// All take masks, windows, GQA/MQA, varlen, lse, descales and BF16/FP16/FP32 output. Not on AMD
// (NOT_SUPPORTED, with the reason): FP16 or FP32 inputs, FP8 with softmax EXACT, the other FP8
// format of an arch, other head dims, q/k/v not 16-byte aligned (base and strides).
// Launch: grid (ceil(seqlen_q / 256), heads_q, batch), 512 threads (8 waves x 32 queries), no
// dynamic LDS (kernels/amd/attention_tile_shape.h).
// Lean P: v_cvt_i32_f32 truncates, so lean_centre() is lean_p_centre_for(TowardZero); the CPU
// model with that rounding and centre produces the same codes.
#pragma once

#include <memory>

#include "gpu/gpu_backend.hpp"

namespace zyfa {
namespace hip {

std::unique_ptr<gpu::AttnKernelCatalogue> make_hip_attn_catalogue();

}  // namespace hip
}  // namespace zyfa
