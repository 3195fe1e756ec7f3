// zyfa-gfx950-fp8-gen --out-dir DIR: writes DIR/<symbol>.s for every variant and DIR/manifest.json.
// zyfa-gfx950-fp8-gen --self-test: the hazard checker must refuse known hazards (hazard_self_test.cpp).
// zyfa-gfx950-fp8-gen --estimate-only-exact-exp DIR: writes DIR/<symbol>.s of the same schedules with
//   the exact exponential instead of Lean P (PScheme::ExactExpEstimate, symbols
//   zyfa_gfx950_fp8_exactexp_estimate_<dims>_<mask>) and no manifest: input to the cycle model's
//   calibration (docs/emulator.md), never to prebuilt/ or libzyfa (the shipped FP8 EXACT kernels,
//   zyfa_gfx950_fp8_exact_*, are the exact online softmax with a fixed P scale instead).
// The output is deterministic (no timestamps, no paths): CI diffs it against the committed copies
// in kernels/amd/gfx950_fp8/prebuilt/. A schedule with a hazard the checker sees, or one that
// breaks a static rule (scratch, v_exp_f32, registers, LDS), is not written: the run fails.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "code_object_writer.hpp"
#include "hazard_checker.hpp"
#include "hazard_self_test.hpp"
#include "kernel_builder.hpp"
#include "kernel_variant.hpp"
#include "manifest_writer.hpp"

using namespace zyfa::gfx950_fp8;

namespace {

constexpr int kMaxRegistersPerWave = 256;  // two waves per SIMD (docs/emulator.md, ISA facts)
constexpr int kMaxLdsBytes = 163840;
constexpr int kMaxLdsBytesGfx942 = 65536;  // MI300X: 64 KiB of LDS per workgroup (ROCm docs, "AMD GPU specifications"; clang-22's limit for gfx942)

bool write_file(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary);
    out << text;
    return static_cast<bool>(out);
}

// The static rules of the AMD kernels, on the generated program.
std::string static_check(const KernelBuilder& k) {
    for (const Instruction& i : k.emitter().program()) {
        if (i.mnemonic == "v_exp_f32" && k.scheme() == PScheme::LeanP && k.variant().input == VariantInput::Fp8Lean)
            return "v_exp_f32 in a Lean P kernel";
        if (i.mnemonic.find("scratch") != std::string::npos || i.mnemonic.find("buffer_") == 0)
            return "scratch or buffer access: " + i.mnemonic;
    }
    if (k.vgpr_count() > kMaxRegistersPerWave) return "more than 256 VGPRs + AGPRs per wave";
    if (k.layout().lds_bytes > kMaxLdsBytes) return "LDS over 160 KiB";
    if (k.layout().gfx942 && k.layout().lds_bytes > kMaxLdsBytesGfx942) return "LDS over gfx942's 64 KiB";
    return check_program(k.emitter().program());
}

}  // namespace

int main(int argc, char** argv) {
    std::string out_dir;
    PScheme scheme = PScheme::LeanP;
    const char* usage = "usage: %s --out-dir DIR | --estimate-only-exact-exp DIR | --self-test\n";
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--self-test") == 0) {
            return run_hazard_self_test() == 0 ? 0 : 1;
        } else if (std::strcmp(argv[i], "--out-dir") == 0 && i + 1 < argc) {
            out_dir = argv[++i];
        } else if (std::strcmp(argv[i], "--estimate-only-exact-exp") == 0 && i + 1 < argc) {
            out_dir = argv[++i];
            scheme = PScheme::ExactExpEstimate;
        } else {
            std::fprintf(stderr, usage, argv[0]);
            return 2;
        }
    }
    if (out_dir.empty()) {
        std::fprintf(stderr, usage, argv[0]);
        return 2;
    }
    std::vector<EmittedKernel> kernels;
    for (const KernelVariant& v : all_variants()) {
        // The exact-exponential calibration schedules exist for the FP8 kernels only.
        if (scheme == PScheme::ExactExpEstimate && (v.input != VariantInput::Fp8Lean || v.arch != VariantArch::Gfx950)) continue;
        std::string symbol = variant_symbol(v);
        try {
            KernelBuilder k(v, scheme);
            symbol = k.symbol();
            k.build();
            const std::string problem = static_check(k);
            if (!problem.empty()) {
                std::fprintf(stderr, "%s: refused: %s\n", symbol.c_str(), problem.c_str());
                return 1;
            }
            if (!write_file(out_dir + "/" + symbol + ".s", assembly_text(k))) {
                std::fprintf(stderr, "%s: cannot write %s\n", symbol.c_str(), out_dir.c_str());
                return 1;
            }
            EmittedKernel e;
            e.variant = v;
            e.symbol = symbol;
            e.lds_bytes = k.layout().lds_bytes;
            e.vgprs = k.vgpr_count();
            e.agprs = 0;
            e.sgprs = descriptor_sgprs(k);
            e.supported_out_dtypes = {"bf16", "fp16", "fp32"};
            if (k.layout().gfx942) e.supported_out_dtypes = {"bf16", "fp32"};  // gfx942 has no v_cvt_pk_f16_f32
            kernels.push_back(e);
            std::printf("%s: %zu instructions, %d MFMA, %d VGPRs, %d SGPRs, LDS %d bytes\n", symbol.c_str(),
                        k.emitter().program().size(), k.emitter().count(Kind::Mfma), e.vgprs, e.sgprs, e.lds_bytes);
        } catch (const std::exception& ex) {
            std::fprintf(stderr, "%s: %s\n", symbol.c_str(), ex.what());
            return 1;
        }
    }
    // The estimate-only kernels get no manifest: nothing can load them as zyfa kernels.
    if (scheme == PScheme::ExactExpEstimate) return 0;
    if (!write_file(out_dir + "/manifest.json", manifest_json(kernels))) {
        std::fprintf(stderr, "cannot write %s/manifest.json\n", out_dir.c_str());
        return 1;
    }
    return 0;
}
