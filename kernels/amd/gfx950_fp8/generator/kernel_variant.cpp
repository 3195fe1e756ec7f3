#include "kernel_variant.hpp"

namespace zyfa {
namespace gfx950_fp8 {

std::string variant_symbol(const KernelVariant& v) {
    const char* prefix = v.input == VariantInput::Bf16       ? "zyfa_gfx950_bf16_d"
                         : v.input == VariantInput::Fp8Exact ? "zyfa_gfx950_fp8_exact_d"
                                                             : "zyfa_gfx950_fp8_lean_d";
    std::string name = prefix + std::to_string(v.head_dim_qk);
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
    return variants;
}

}  // namespace gfx950_fp8
}  // namespace zyfa
