#include "kernel_variant.hpp"

namespace zyfa {
namespace gfx950_fp8 {

const char* variant_arch_name(const KernelVariant& v) { return v.arch == VariantArch::Gfx942 ? "gfx942" : "gfx950"; }

std::string variant_symbol(const KernelVariant& v) {
    const char* prefix = v.arch == VariantArch::Gfx942 ? (v.input == VariantInput::Bf16       ? "zyfa_gfx942_bf16_d"
                                                          : v.input == VariantInput::Fp8Exact ? "zyfa_gfx942_fp8_exact_d"
                                                                                              : "zyfa_gfx942_fp8_lean_d")
                         : v.input == VariantInput::Bf16       ? "zyfa_gfx950_bf16_d"
                         : v.input == VariantInput::Fp8Exact ? "zyfa_gfx950_fp8_exact_d"
                                                             : "zyfa_gfx950_fp8_lean_d";
    std::string name = prefix;
    if (v.paged) name.insert(name.size() - 1, "paged_");  // ..._lean_paged_d128_...
    name += std::to_string(v.head_dim_qk);
    if (v.head_dim_v != v.head_dim_qk) name += "_" + std::to_string(v.head_dim_v);
    switch (v.mask) {
    case VariantMask::None: return name + "_none";
    case VariantMask::CausalTopLeft: return name + "_causal_tl";
    case VariantMask::CausalBottomRight: return name + "_causal_br";
    }
    return name;
}

std::vector<KernelVariant> all_variants() {
    std::vector<KernelVariant> variants;
    for (VariantInput input : {VariantInput::Fp8Lean, VariantInput::Bf16, VariantInput::Fp8Exact}) {
        for (int dqk : {128, 192}) {
            for (VariantMask mask : {VariantMask::CausalTopLeft, VariantMask::CausalBottomRight, VariantMask::None}) {
                variants.push_back(KernelVariant{mask, dqk, 128, input});
            }
        }
    }
    // gfx942: BF16 d128 (a d192 K block does not fit gfx942's 64 KiB of LDS twice beside V's).
    for (VariantMask mask : {VariantMask::CausalTopLeft, VariantMask::CausalBottomRight, VariantMask::None}) {
        variants.push_back(KernelVariant{mask, 128, 128, VariantInput::Bf16, VariantArch::Gfx942});
    }
    // gfx942 FP8 EXACT (e4m3fnuz): the gfx950 FP8 EXACT schedule, whose two padded stages fit 64 KiB.
    for (int dqk : {128, 192}) {
        for (VariantMask mask : {VariantMask::CausalTopLeft, VariantMask::CausalBottomRight, VariantMask::None}) {
            variants.push_back(KernelVariant{mask, dqk, 128, VariantInput::Fp8Exact, VariantArch::Gfx942});
        }
    }
    // gfx942 FP8 LEAN (e4m3fnuz): the gfx950 LEAN schedule; no scaled MFMA, so O is kept as O 2^k of
    // the latest block's exponent k and rescaled by alpha 2^(k_new - k_old) (README.md, "gfx942").
    for (int dqk : {128, 192}) {
        for (VariantMask mask : {VariantMask::CausalTopLeft, VariantMask::CausalBottomRight, VariantMask::None}) {
            variants.push_back(KernelVariant{mask, dqk, 128, VariantInput::Fp8Lean, VariantArch::Gfx942});
        }
    }
    // Paged K/V (head dim 128): what chunked and prefix-cached prefill read from a serving stack's
    // cache. Top-left causal paged problems run on the HIP C++ paged kernel.
    const struct {
        VariantInput input;
        VariantArch arch;
    } paged[] = {{VariantInput::Fp8Lean, VariantArch::Gfx950},
                 {VariantInput::Bf16, VariantArch::Gfx950},
                 {VariantInput::Fp8Exact, VariantArch::Gfx950},
                 {VariantInput::Fp8Exact, VariantArch::Gfx942},
                 {VariantInput::Fp8Lean, VariantArch::Gfx942},
                 {VariantInput::Bf16, VariantArch::Gfx942}};
    for (const auto& p : paged) {
        for (VariantMask mask : {VariantMask::CausalBottomRight, VariantMask::None}) {
            variants.push_back(KernelVariant{mask, 128, 128, p.input, p.arch, true});
        }
    }
    return variants;
}

}  // namespace gfx950_fp8
}  // namespace zyfa
