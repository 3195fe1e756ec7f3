// The variants the gfx950 FP8 assembly generator emits, and what the host needs to know to launch
// each one. Shared by the generator (emission), the manifest writer and libzyfa's HIP launch plan.
#ifndef ZYFA_GFX950_FP8_KERNEL_VARIANT_HPP
#define ZYFA_GFX950_FP8_KERNEL_VARIANT_HPP

#include <string>
#include <vector>

#include "../../../common/key_block.h"  // relative: libzyfa's HIP launch plan includes this header too

namespace zyfa {
namespace gfx950_fp8 {

// Compile-time mask of a variant. Windows are run-time arguments of every kernel.
enum class VariantMask { None, CausalTopLeft, CausalBottomRight };

// What the kernel reads and how it turns scores into P:
//   Fp8Lean  e4m3fn Q, K, V; LEAN (Lean P codes, block-scaled, the scaled f8f6f4 MFMA); gfx942:
//            e4m3fnuz, no scaled MFMA (O kept as O 2^k of the latest block, README.md "gfx942");
//   Bf16     bf16 Q, K, V; the exact online softmax of kernels/common/online_softmax.h in fp32
//            (v_exp_f32), P rounded to bf16 (RNE) for the PV MFMA (v_mfma_f32_32x32x16_bf16),
//            the row sum of the unrounded p, as the CPU model's BF16 path;
//   Fp8Exact e4m3fn Q, K, V; the same exact online softmax, P 2^8 (p_scale_base_exponent) rounded
//            to e4m3fn (RNE) for the scaled FP8 PV MFMA (2^-8 back by its E8M0 scale), as the CPU
//            model's FP8 EXACT path.
enum class VariantInput { Fp8Lean, Bf16, Fp8Exact };

// The target: gfx950 (MI350X / MI355X, CDNA4), or gfx942 (MI300X / MI325X, CDNA3: BF16 d128 only,
// v_mfma_f32_32x32x8_bf16, 64 KiB of LDS; and FP8 EXACT and LEAN on e4m3fnuz; README.md, "gfx942").
enum class VariantArch { Gfx950, Gfx942 };

struct KernelVariant {
    VariantMask mask;
    int head_dim_qk;  // 128 or 192
    int head_dim_v;   // 128
    VariantInput input = VariantInput::Fp8Lean;
    VariantArch arch = VariantArch::Gfx950;
    // K and V through a block table (kernels/common/paged_kv_args.h): the kernel takes the HIP C++
    // kernels' second parameter (kernels/amd/attention_extra_args.h) after AttnKernelArgs and reads
    // each 64-key block's rows from the pages the table names. Head dims 128/128 and power-of-two
    // page sizes >= 8 only: a wave's 8 key rows of a block then lie in one page (phase_load.cpp).
    bool paged = false;
};

// "gfx950" or "gfx942": the manifest's arch and the -mcpu the code object is assembled for.
const char* variant_arch_name(const KernelVariant& v);

// Launch geometry shared by every variant: grid (ceil(seqlen_q / kRowsPerWorkgroup), heads_q,
// batch), kWavesPerWorkgroup wave64s per workgroup, each wave owning kRowsPerWave query rows.
// The kernel argument segment is one AttnKernelArgs (kernels/common/attention_kernel_args.h) at
// offset 0, passed by value (paged variants: then amd::AttnExtraArgs at kExtraArgsOffset); nothing
// hidden.
constexpr int kWavesPerWorkgroup = 8;
constexpr int kRowsPerWave = 32;
constexpr int kRowsPerWorkgroup = kWavesPerWorkgroup * kRowsPerWave;  // 256
constexpr int kThreadsPerWorkgroup = kWavesPerWorkgroup * 64;       // 512
constexpr int kKeysPerBlock = numerics::kKeyBlock;  // the CPU model's and the HIP C++ kernels' key block
constexpr int kKeysPerBlockLog2 = 6;  // the row pointers advance by stride << this (phase_load.cpp)
static_assert((1 << kKeysPerBlockLog2) == kKeysPerBlock, "kKeysPerBlockLog2 must follow numerics::kKeyBlock");

// Where amd::AttnExtraArgs (kernels/amd/attention_extra_args.h) starts in a paged variant's kernel
// argument segment: after AttnKernelArgs, at its 8-byte alignment (the HIP C++ kernels' layout of
// their two by-value parameters). kernel_setup.cpp and code_object_writer.cpp static_assert it.
constexpr unsigned kExtraArgsOffset = 248;

// What the generator reports about one emitted kernel (the manifest and the launch plan read it).
struct EmittedKernel {
    KernelVariant variant;
    std::string symbol;       // = variant_symbol(variant); also the .s / .co file stem
    int lds_bytes = 0;        // group segment size
    int vgprs = 0, agprs = 0, sgprs = 0;
    std::vector<std::string> supported_out_dtypes;  // e.g. {"bf16", "fp16", "fp32"}
};

// zyfa_gfx950_fp8_lean_d128_causal_tl, ..._d192_128_none, ...; zyfa_gfx950_bf16_d128_causal_tl, ...;
// zyfa_gfx950_fp8_exact_d128_causal_tl, ...; paged: zyfa_gfx950_fp8_lean_paged_d128_causal_br, ...
std::string variant_symbol(const KernelVariant& v);

// Every variant the generator emits: FP8 LEAN, BF16, then FP8 EXACT, each 3 masks x head dims 128
// and 192/128, for gfx950; then gfx942 BF16, 3 masks x head dim 128, and gfx942 FP8 EXACT and
// FP8 LEAN (e4m3fnuz), each 3 masks x head dims 128 and 192/128; then the paged ones: gfx950 FP8
// LEAN, BF16 and FP8 EXACT, gfx942 FP8 EXACT, FP8 LEAN and BF16, head dim 128, masks causal
// bottom-right (chunked and prefix-cached prefill) and none.
std::vector<KernelVariant> all_variants();

}  // namespace gfx950_fp8
}  // namespace zyfa

#endif
