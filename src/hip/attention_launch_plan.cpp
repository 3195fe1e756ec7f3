#include "attention_launch_plan.hpp"

#include <climits>
#include <cstdint>
#include <string>

#include "amd/attention_tile_shape.h"
#include "common/lean_p.h"
#include "core/errors.hpp"
#include "core/validate.hpp"
#include "gpu/vector_alignment.hpp"

namespace zyfa {
namespace hip {
namespace {

static_assert(amd::kVectorBytes == gpu::kVectorLoadBytes, "the AMD kernels' vector loads are the 16 bytes checked");
using validation::dtype_name;

struct KernelFamily {
    bool fp8;
    int head_dim_qk;
    int head_dim_v;
    const char* variant;
    const char* bf16_symbol;         // BF16 family
    const char* e4m3fn_symbol;       // FP8 family on gfx950
    const char* e4m3fnuz_symbol;     // FP8 family on gfx942
};

constexpr KernelFamily kFamilies[] = {
    {false, 128, 128, "attn_fwd_bf16_d128", "zyfa_attn_fwd_bf16_d128", nullptr, nullptr},
    {false, 192, 128, "attn_fwd_bf16_d192_128", "zyfa_attn_fwd_bf16_d192_128", nullptr, nullptr},
    {true, 128, 128, "attn_fwd_fp8_d128", nullptr, "zyfa_attn_fwd_e4m3_lean_d128", "zyfa_attn_fwd_e4m3fnuz_lean_d128"},
    {true, 192, 128, "attn_fwd_fp8_d192_128", nullptr, "zyfa_attn_fwd_e4m3_lean_d192_128",
     "zyfa_attn_fwd_e4m3fnuz_lean_d192_128"},
};

// The FP8 format an arch's matrix unit reads (the same mnemonics read e4m3fnuz on gfx942 and OCP
// e4m3fn on gfx950), or 0 for an arch with no kernels.
zyfa_dtype fp8_dtype_of(const std::string& arch) {
    if (arch == "gfx950") return ZYFA_DTYPE_FP8_E4M3FN;
    if (arch == "gfx942") return ZYFA_DTYPE_FP8_E4M3FNUZ;
    return 0;
}

const char* symbol_of(const KernelFamily& family, const std::string& arch) {
    if (!family.fp8) return family.bf16_symbol;
    return fp8_dtype_of(arch) == ZYFA_DTYPE_FP8_E4M3FN ? family.e4m3fn_symbol : family.e4m3fnuz_symbol;
}

class HipAttnCatalogue final : public gpu::AttnKernelCatalogue {
public:
    std::vector<gpu::KernelSpec> kernels(const std::string& image_arch) const override {
        std::vector<gpu::KernelSpec> specs;
        if (fp8_dtype_of(image_arch) == 0) return specs;
        for (const KernelFamily& family : kFamilies) {
            specs.push_back(gpu::KernelSpec{family.variant, symbol_of(family, image_arch), 0});
        }
        return specs;
    }

    gpu::AttnLaunch plan(const AttnProblem& p, const gpu::DeviceInfo& device,
                         const std::string& image_arch) const override {
        const zyfa_dtype dtype = p.q.dtype;
        const zyfa_dtype arch_fp8 = fp8_dtype_of(image_arch);
        if (arch_fp8 == 0) throw_not_supported("no AMD kernels for " + device.arch);
        const bool fp8 = dtype == ZYFA_DTYPE_FP8_E4M3FN || dtype == ZYFA_DTYPE_FP8_E4M3FNUZ;
        if (fp8 && dtype != arch_fp8) {
            throw_not_supported(std::string("q.dtype = ") + dtype_name(dtype) + " on " + device.arch + ": its matrix " +
                                "unit reads " + dtype_name(arch_fp8) + " (gfx950: OCP e4m3fn, gfx942: e4m3fnuz)");
        }
        if (!fp8 && dtype != ZYFA_DTYPE_BF16) {
            throw_not_supported(std::string("q.dtype = ") + dtype_name(dtype) + " has no AMD kernel (BF16 and " +
                                dtype_name(arch_fp8) + " on " + device.arch + ")");
        }
        if (fp8 && p.softmax != ZYFA_SOFTMAX_LEAN) {
            throw_not_supported("params.softmax = EXACT with FP8 inputs has no AMD kernel (the AMD FP8 kernels use "
                                "LEAN, the default for FP8)");
        }
        if (!fp8 && p.softmax == ZYFA_SOFTMAX_LEAN) throw_not_supported("params.softmax = LEAN needs FP8 inputs");
        const KernelFamily* family = nullptr;
        for (const KernelFamily& f : kFamilies) {
            if (f.fp8 == fp8 && f.head_dim_qk == p.head_dim_qk && f.head_dim_v == p.head_dim_v) family = &f;
        }
        if (family == nullptr) {
            throw_not_supported("head_dim_qk = " + std::to_string(p.head_dim_qk) + ", head_dim_v = " +
                                std::to_string(p.head_dim_v) + ": the AMD kernels support head dims 128 and 192/128");
        }
        const int64_t elem_bytes = fp8 ? 1 : 2;
        gpu::require_vector_aligned(p.q, "q", elem_bytes, "AMD");
        gpu::require_vector_aligned(p.k, "k", elem_bytes, "AMD");
        gpu::require_vector_aligned(p.v, "v", elem_bytes, "AMD");

        const int64_t tiles = (p.seqlen_q + amd::kRows - 1) / amd::kRows;
        if (tiles * amd::kThreads > INT32_MAX || p.heads_q > 65535 || p.batch > 65535) {
            throw_not_supported("grid (" + std::to_string(tiles) + ", heads_q = " + std::to_string(p.heads_q) +
                                ", batch = " + std::to_string(p.batch) +
                                ") exceeds the HIP grid limits (2^31-1 threads, 65535, 65535)");
        }
        gpu::AttnLaunch launch;
        launch.variant = family->variant;
        launch.symbol = symbol_of(*family, image_arch);
        launch.kernel_name = launch.symbol;
        launch.grid.x = static_cast<uint32_t>(tiles);
        launch.grid.y = static_cast<uint32_t>(p.heads_q);
        launch.grid.z = static_cast<uint32_t>(p.batch);
        launch.block.x = amd::kThreads;
        launch.shared_bytes = 0;  // static LDS only
        return launch;
    }

    // v_cvt_i32_f32 truncates toward zero.
    float lean_centre() const override { return numerics::lean_p_centre_for(numerics::FloatToIntRounding::TowardZero); }
};

}  // namespace

std::unique_ptr<gpu::AttnKernelCatalogue> make_hip_attn_catalogue() { return std::make_unique<HipAttnCatalogue>(); }

}  // namespace hip
}  // namespace zyfa
