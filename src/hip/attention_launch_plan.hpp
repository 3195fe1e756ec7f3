// Which AMD attention kernel runs a validated problem, and how it is launched: the catalogue
// (gpu::AttnKernelCatalogue, src/gpu/gpu_backend.hpp) of the kernels in kernels/amd.
//
// Kernels (kernels/amd/attention_fwd_variant.hip; one embedded code object = one variant), for
// <dims> d128 (head_dim_qk = head_dim_v = 128) and d192_128 (MLA: 192/128):
//   gfx950: attn_fwd_bf16_<dims>: zyfa_attn_fwd_bf16_<dims>          BF16, softmax EXACT
//           attn_fwd_fp8_<dims>:  zyfa_attn_fwd_e4m3_lean_<dims>     FP8 e4m3fn, softmax LEAN
//   gfx942: attn_fwd_bf16_<dims>: zyfa_attn_fwd_bf16_<dims>          BF16, softmax EXACT
//           attn_fwd_fp8_<dims>:  zyfa_attn_fwd_e4m3fnuz_lean_<dims> FP8 e4m3fnuz, softmax LEAN
// FP8 also _exact_ (softmax EXACT). The INT8 Q/K mode (q, k INT8, v FP8 in the arch's format):
// attn_fwd_int8_<d64|d128> and attn_fwd_paged_int8_d128: zyfa_attn_fwd_[paged_]i8e4m3_{lean,exact}_
// <dims> on gfx950 (v e4m3fn), i8e4m3fnuz_ on gfx942 (v e4m3fnuz), both softmax modes; the other
// v format is NOT_SUPPORTED there (P.V runs on the arch's FP8 instruction).
// All take masks, windows, GQA/MQA, varlen, lse, descales and BF16/FP16/FP32 output. Not on AMD
// (NOT_SUPPORTED, with the reason): FP16 or FP32 inputs, the other FP8
// format of an arch, other head dims, q/k/v not 16-byte aligned (base and strides), a
// params.key_block other than 0 or 64 (every AMD kernel, asm included, steps 64 keys).
// gfx950 also has FP8 LEAN, FP8 EXACT and BF16 kernels in generated assembly (kernels/amd/gfx950_fp8,
// registry variants attn_fwd_asm_fp8_<dims>_<mask> / attn_fwd_asm_fp8_exact_<dims>_<mask> /
// attn_fwd_asm_bf16_<dims>_<mask>, symbols zyfa_gfx950_fp8_lean_<dims>_<mask> /
// zyfa_gfx950_fp8_exact_<dims>_<mask> / zyfa_gfx950_bf16_<dims>_<mask>): one per input and softmax,
// mask (none, causal, causal bottom-right) and head dims (128, 192/128), windows at run time, no sinks;
// paged variants (<kind>_paged_d128_<mask>, masks none and bottom-right) read K/V through the block
// table. The plan prefers one of them whenever it covers the problem (e4m3fn with LEAN or
// EXACT, or bf16 with EXACT; no sinks, its mask, head dims and an output dtype it supports; paged:
// power-of-two pages of 8 to 256 keys and row strides below 2^32 / 7 bytes; any
// strides: every lane's K/V address is 64-bit) and falls back to the HIP C++ kernel otherwise. The problem alone decides:
// there is no run-time switch (docs/configuration.md).
// gfx942 has assembly kernels from the same generator too (symbols zyfa_gfx942_bf16_d128_<mask>,
// registry attn_fwd_asm_bf16_d128_<mask>; zyfa_gfx942_fp8_exact_<dims>_<mask> on e4m3fnuz,
// attn_fwd_asm_fp8_exact_<dims>_<mask>; zyfa_gfx942_fp8_lean_<dims>_<mask> on e4m3fnuz with LEAN,
// attn_fwd_asm_fp8_<dims>_<mask>; bf16 / fp32 output), with the same conditions (windows at
// run time, any strides); the asm table's arch column keeps each arch to its own kernels.
// Launch: grid (ceil(seqlen_q / 256), heads_q, batch), 512 threads (8 waves x 32 queries), no
// dynamic LDS (kernels/amd/attention_tile_shape.h). The HIP C++ kernels take a second parameter,
// amd::AttnExtraArgs (kernels/amd/attention_extra_args.h): the paged kernels' block table and
// split-KV. Split-KV (split_kv_plan.hpp): with a workspace, a problem with seqlen_q <= 128 whose
// split count is >= 2 runs the same HIP C++ kernel over grid (ceil(seqlen_q / 256) * splits,
// heads_q, batch), each workgroup on its split's 64-key blocks writing an fp32 part into the
// workspace (common/split_kv_args.h), then zyfa_attn_merge's kernel over the parts
// (src/gpu/gpu_backend.cpp); its kernel name is "<symbol>+split_kv". The assembly kernels never
// split: a problem that splits runs on the HIP C++ kernel.
// Lean P: v_cvt_i32_f32 truncates, so lean_centre() is lean_p_centre_for(TowardZero); the CPU
// model with that rounding and centre produces the same codes.
#pragma once

#include <memory>

#include "gpu/gpu_backend.hpp"

namespace zyfa {
namespace hip {

// Which kernel a catalogue plans for an FP8 LEAN or BF16 problem the gfx950 assembly kernels cover.
enum class AmdKernelChoice {
    Automatic,  // the assembly kernel where it supports the problem, the HIP C++ kernel otherwise
    HipCpp,     // the HIP C++ kernels only
};

// The catalogue. The library always makes Automatic (make_hip_backend); HipCpp is a seam for
// tests, which link it from zyfa_internal to run the HIP C++ kernels on problems the assembly
// kernels would take (libzyfa.so exports no way to ask for it).
std::unique_ptr<gpu::AttnKernelCatalogue> make_hip_attn_catalogue(AmdKernelChoice choice = AmdKernelChoice::Automatic);

}  // namespace hip
}  // namespace zyfa
