#include "attention_launch_plan.hpp"

#include <climits>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>

#include "amd/attention_extra_args.h"
#include "amd/attention_tile_shape.h"
#include "amd/gfx950_fp8/generator/kernel_variant.hpp"
#include "common/lean_p.h"
#include "common/paged_kv_args.h"
#include "core/errors.hpp"
#include "core/validate.hpp"
#include "gpu/vector_alignment.hpp"
#include "split_kv_plan.hpp"

namespace zyfa {
namespace hip {
namespace {

static_assert(amd::kVectorBytes == gpu::kVectorLoadBytes, "the AMD kernels' vector loads are the 16 bytes checked");
using validation::dtype_name;

struct KernelFamily {
    bool fp8;   // FP8 P and V: FP8 inputs, or the INT8 Q/K mode
    bool int8;  // the INT8 Q/K mode (q, k INT8; v in the arch's FP8 format)
    bool paged;  // K and V through a block table (PagedKvArgs as the second parameter)
    int head_dim_qk;
    int head_dim_v;
    const char* variant;
    const char* bf16_symbol;             // BF16 family
    const char* e4m3fn_lean_symbol;      // FP8 and INT8 families on gfx950 (v e4m3fn)
    const char* e4m3fn_exact_symbol;
    const char* e4m3fnuz_lean_symbol;    // FP8 and INT8 families on gfx942 (v e4m3fnuz)
    const char* e4m3fnuz_exact_symbol;
};

constexpr KernelFamily kFamilies[] = {
    {false, false, false, 128, 128, "attn_fwd_bf16_d128", "zyfa_attn_fwd_bf16_d128", nullptr, nullptr, nullptr,
     nullptr},
    {false, false, false, 192, 128, "attn_fwd_bf16_d192_128", "zyfa_attn_fwd_bf16_d192_128", nullptr, nullptr,
     nullptr, nullptr},
    {true, false, false, 128, 128, "attn_fwd_fp8_d128", nullptr, "zyfa_attn_fwd_e4m3_lean_d128",
     "zyfa_attn_fwd_e4m3_exact_d128", "zyfa_attn_fwd_e4m3fnuz_lean_d128", "zyfa_attn_fwd_e4m3fnuz_exact_d128"},
    {true, false, false, 192, 128, "attn_fwd_fp8_d192_128", nullptr, "zyfa_attn_fwd_e4m3_lean_d192_128",
     "zyfa_attn_fwd_e4m3_exact_d192_128", "zyfa_attn_fwd_e4m3fnuz_lean_d192_128",
     "zyfa_attn_fwd_e4m3fnuz_exact_d192_128"},
    // The INT8 Q/K mode: head dims 64 and 128, as the sm_90a INT8 kernels.
    {true, true, false, 64, 64, "attn_fwd_int8_d64", nullptr, "zyfa_attn_fwd_i8e4m3_lean_d64",
     "zyfa_attn_fwd_i8e4m3_exact_d64", "zyfa_attn_fwd_i8e4m3fnuz_lean_d64", "zyfa_attn_fwd_i8e4m3fnuz_exact_d64"},
    {true, true, false, 128, 128, "attn_fwd_int8_d128", nullptr, "zyfa_attn_fwd_i8e4m3_lean_d128",
     "zyfa_attn_fwd_i8e4m3_exact_d128", "zyfa_attn_fwd_i8e4m3fnuz_lean_d128", "zyfa_attn_fwd_i8e4m3fnuz_exact_d128"},
    // Paged K/V (kernels/amd/CMakeLists.txt: head dim 128 only).
    {false, false, true, 128, 128, "attn_fwd_paged_bf16_d128", "zyfa_attn_fwd_paged_bf16_d128", nullptr, nullptr,
     nullptr, nullptr},
    {true, false, true, 128, 128, "attn_fwd_paged_fp8_d128", nullptr, "zyfa_attn_fwd_paged_e4m3_lean_d128",
     "zyfa_attn_fwd_paged_e4m3_exact_d128", "zyfa_attn_fwd_paged_e4m3fnuz_lean_d128",
     "zyfa_attn_fwd_paged_e4m3fnuz_exact_d128"},
    {true, true, true, 128, 128, "attn_fwd_paged_int8_d128", nullptr, "zyfa_attn_fwd_paged_i8e4m3_lean_d128",
     "zyfa_attn_fwd_paged_i8e4m3_exact_d128", "zyfa_attn_fwd_paged_i8e4m3fnuz_lean_d128",
     "zyfa_attn_fwd_paged_i8e4m3fnuz_exact_d128"},
};

// The gfx950 FP8 LEAN, FP8 EXACT and BF16 kernels and the gfx942 BF16, FP8 EXACT and FP8 LEAN (e4m3fnuz) kernels
// in generated assembly (kernels/amd/gfx950_fp8) that this build embeds: one row per committed code object, generated at configure time from
// prebuilt/manifest.json. Each has one compile-time input dtype, softmax, mask and head dims (windows at run time).
struct AsmKernel {
    const char* variant;  // registry variant: attn_fwd_asm_{fp8,fp8_exact,bf16}_<dims>_<mask>
    const char* symbol;   // zyfa_gfx950_{fp8_lean,fp8_exact,bf16}_<dims>_<mask>
    int in_dtype;         // zyfa_dtype of Q, K, V: e4m3fn or bf16
    int softmax;          // zyfa_softmax: LEAN or EXACT (BF16: EXACT)
    int mask;             // zyfa_mask
    int head_dim_qk;
    int head_dim_v;
    uint32_t out_dtypes;  // bit (1 << zyfa_dtype) for each supported output dtype
    const char* arch;     // gfx950, or gfx942 (zyfa_gfx942_bf16_*, zyfa_gfx942_fp8_exact_*, zyfa_gfx942_fp8_lean_*)
    bool paged;           // K/V through a block table; the HIP C++ kernels' second parameter follows AttnKernelArgs
};

constexpr AsmKernel kAsmKernels[] = {
#if defined(ZYFA_GFX950_FP8_TABLE)
#include "gfx950_fp8_kernels.inc"
#endif
    {nullptr, nullptr, 0, 0, 0, 0, 0, 0u, nullptr, false},  // end of the table
};

// Every AMD kernel steps the same number of keys, the only params.key_block it can honour.
static_assert(gfx950_fp8::kKeysPerBlock == amd::kKeyBlock, "the asm and HIP C++ kernels step the same key blocks");

// The asm kernels launch exactly like the HIP C++ ones: the host side computes one grid.
static_assert(gfx950_fp8::kRowsPerWorkgroup == amd::kRows && gfx950_fp8::kThreadsPerWorkgroup == amd::kThreads,
              "the gfx950 FP8 asm kernels use the HIP C++ kernels' launch geometry");

// Whether the paged asm kernels can read a paged problem's K/V: power-of-two pages of 8 to 256 keys
// (a wave's 8 rows of a 64-key block in one page) and row strides whose 7 rows plus a 256-byte row
// stay below 2^32 bytes (each lane's offset from its wave's first row is 32 bits).
bool asm_takes_pages(const AttnProblem& p) {
    const int64_t page = p.page_size;
    if (page < 8 || page > 256 || (page & (page - 1)) != 0) return false;
    for (const TensorView* t : {&p.k, &p.v}) {
        const int64_t element_bytes = t->dtype == ZYFA_DTYPE_BF16 || t->dtype == ZYFA_DTYPE_FP16 ? 2 : 1;
        const int64_t row_bytes = t->stride_seq * element_bytes;
        if (row_bytes < 0 || row_bytes > (int64_t{UINT32_MAX} - 256) / 7) return false;
    }
    return true;
}

// The asm kernel that computes `p` as the HIP C++ kernel would (FP8 LEAN: the same codes; FP8
// EXACT and BF16: the same exact online softmax up to fp32 summation order and v_exp_f32), or null.
const AsmKernel* asm_kernel_for(const AttnProblem& p, const std::string& image_arch) {
    // e4m3fn: the gfx950 kernels; e4m3fnuz: gfx942's (FP8 EXACT and LEAN); the table row's dtype decides.
    const bool fp8 = (p.q.dtype == ZYFA_DTYPE_FP8_E4M3FN || p.q.dtype == ZYFA_DTYPE_FP8_E4M3FNUZ) &&
                     (p.softmax == ZYFA_SOFTMAX_LEAN || p.softmax == ZYFA_SOFTMAX_EXACT);
    const bool bf16 = p.q.dtype == ZYFA_DTYPE_BF16 && p.softmax != ZYFA_SOFTMAX_LEAN;
    if (!fp8 && !bf16) return nullptr;
    const int softmax = bf16 ? ZYFA_SOFTMAX_EXACT : p.softmax;
    // Paged K/V: a paged asm kernel where a wave's 8 key rows of a block lie in one page and its lanes'
    // offsets from the first of them fit 32 bits (kernels/amd/gfx950_fp8/generator/paged_kv.cpp); the HIP
    // C++ paged kernel otherwise.
    if (p.paged() && !asm_takes_pages(p)) return nullptr;
    if (p.key_bias) return nullptr;  // nor a per-key bias: the HIP C++ kernel adds it
    // Windows: every asm kernel takes them at run time (int32 kernel arguments).
    if (p.window_left > INT32_MAX || p.window_right > INT32_MAX) return nullptr;
    if (p.o.dtype < 0 || p.o.dtype >= 32) return nullptr;
    for (const AsmKernel& k : kAsmKernels) {
        if (k.symbol == nullptr) break;
        if (image_arch == k.arch && k.paged == p.paged() && k.in_dtype == p.q.dtype && k.softmax == softmax && k.mask == p.mask &&
            k.head_dim_qk == p.head_dim_qk && k.head_dim_v == p.head_dim_v && (k.out_dtypes & (1u << p.o.dtype)) != 0) {
            return &k;
        }
    }
    return nullptr;
}

// The FP8 format an arch's matrix unit reads (the same mnemonics read e4m3fnuz on gfx942 and OCP
// e4m3fn on gfx950), or 0 for an arch with no kernels.
zyfa_dtype fp8_dtype_of(const std::string& arch) {
    if (arch == "gfx950") return ZYFA_DTYPE_FP8_E4M3FN;
    if (arch == "gfx942") return ZYFA_DTYPE_FP8_E4M3FNUZ;
    return 0;
}

const char* symbol_of(const KernelFamily& family, const std::string& arch, bool lean) {
    if (!family.fp8) return family.bf16_symbol;
    if (fp8_dtype_of(arch) == ZYFA_DTYPE_FP8_E4M3FN) return lean ? family.e4m3fn_lean_symbol : family.e4m3fn_exact_symbol;
    return lean ? family.e4m3fnuz_lean_symbol : family.e4m3fnuz_exact_symbol;
}

// The split count of a problem on this device (1: unsplit); workspace_bytes -1 = no limit. The HIP
// C++ kernels split any problem they run (sinks, paged K/V and every input family included); the
// gfx950 assembly kernels do not split, so a split problem runs on the HIP C++ kernel.
int64_t split_count(const AttnProblem& p, const gpu::DeviceInfo& device, int64_t workspace_bytes) {
    const gpu::SplitKvShape shape = gpu::split_kv_shape(p);
    const int64_t splits = choose_split_count(shape, device.multiprocessors, p.num_splits, workspace_bytes);
    if (splits < 2) return 1;
    // Grid limits of the split launch and the merge launch: unsplit beyond them.
    if (split_kv_query_tiles(shape) * splits * amd::kThreads > INT32_MAX || p.batch > 65535 || p.heads_q > 65535 ||
        p.seqlen_q > 65535) {
        return 1;
    }
    return splits;
}

// zyfa_attn_kernel_name of a split launch: "<symbol>+split_kv" (static strings, one per HIP C++
// kernel symbol), so that callers and tests see that the problem splits.
const char* split_kernel_name(const char* symbol) {
    static const std::map<std::string, std::string> names = [] {
        std::map<std::string, std::string> m;
        for (const KernelFamily& f : kFamilies) {
            for (const char* sym : {f.bf16_symbol, f.e4m3fn_lean_symbol, f.e4m3fn_exact_symbol, f.e4m3fnuz_lean_symbol,
                                    f.e4m3fnuz_exact_symbol}) {
                if (sym != nullptr) m.emplace(sym, std::string(sym) + "+split_kv");
            }
        }
        return m;
    }();
    const auto it = names.find(symbol);
    if (it == names.end()) throw Error(ZYFA_ERROR_INTERNAL, std::string("no split name for ") + symbol);
    return it->second.c_str();
}

class HipAttnCatalogue final : public gpu::AttnKernelCatalogue {
public:
    explicit HipAttnCatalogue(AmdKernelChoice choice) : choice_(choice) {}

    std::vector<gpu::KernelSpec> kernels(const std::string& image_arch) const override {
        std::vector<gpu::KernelSpec> specs;
        if (fp8_dtype_of(image_arch) == 0) return specs;
        for (const KernelFamily& family : kFamilies) {
            specs.push_back(gpu::KernelSpec{family.variant, symbol_of(family, image_arch, true), 0});
            if (family.fp8) specs.push_back(gpu::KernelSpec{family.variant, symbol_of(family, image_arch, false), 0});
        }
        if (uses_asm(image_arch)) {
            for (const AsmKernel& k : kAsmKernels) {
                if (k.symbol != nullptr && image_arch == k.arch) specs.push_back(gpu::KernelSpec{k.variant, k.symbol, 0});
            }
        }
        return specs;
    }

    gpu::AttnLaunch plan(const AttnProblem& p, const gpu::DeviceInfo& device,
                         const std::string& image_arch) const override {
        const zyfa_dtype dtype = p.q.dtype;
        const zyfa_dtype arch_fp8 = fp8_dtype_of(image_arch);
        if (arch_fp8 == 0) throw_not_supported("no AMD kernels for " + device.arch);
        if (p.v_transposed) {  // the NVIDIA kernels' byte order of V (kernels/common/v_transposed.h)
            throw_not_supported("params.flags has ZYFA_ATTN_V_TRANSPOSED: the AMD kernels read V row-major only");
        }
        if (p.paged() && p.num_pages > INT32_MAX) {
            throw_not_supported("params.num_pages = " + std::to_string(p.num_pages) +
                                " exceeds the AMD kernels' int32 page indices");
        }
        // 0 is the backend's own choice; another step would change LEAN's block scales.
        if (p.key_block != 0 && p.key_block != amd::kKeyBlock) {
            throw_not_supported("params.key_block = " + std::to_string(p.key_block) + ": the AMD kernels step " +
                                std::to_string(amd::kKeyBlock) + " keys (0 or " + std::to_string(amd::kKeyBlock) +
                                ")");
        }
        const bool fp8 = dtype == ZYFA_DTYPE_FP8_E4M3FN || dtype == ZYFA_DTYPE_FP8_E4M3FNUZ;
        if (fp8 && dtype != arch_fp8) {
            throw_not_supported(std::string("q.dtype = ") + dtype_name(dtype) + " on " + device.arch + ": its matrix " +
                                "unit reads " + dtype_name(arch_fp8) + " (gfx950: OCP e4m3fn, gfx942: e4m3fnuz)");
        }
        // The INT8 Q/K mode rounds P to v's FP8 format and multiplies it by V on the arch's FP8
        // instruction: v must be in the format that instruction reads.
        const bool int8 = dtype == ZYFA_DTYPE_INT8;
        if (int8 && p.v.dtype != arch_fp8) {
            throw_not_supported(std::string("v.dtype = ") + dtype_name(p.v.dtype) + " with INT8 q/k on " + device.arch +
                                ": P and V go through its FP8 matrix unit, which reads " + dtype_name(arch_fp8) +
                                " (gfx950: OCP e4m3fn, gfx942: e4m3fnuz)");
        }
        if (!fp8 && !int8 && dtype != ZYFA_DTYPE_BF16) {
            throw_not_supported(std::string("q.dtype = ") + dtype_name(dtype) + " has no AMD kernel (BF16 and " +
                                dtype_name(arch_fp8) + " on " + device.arch + ")");
        }
        if (!fp8 && !int8 && p.softmax == ZYFA_SOFTMAX_LEAN) {
            throw_not_supported("params.softmax = LEAN needs FP8 inputs (or INT8 q/k)");
        }
        const KernelFamily* family = nullptr;
        for (const KernelFamily& f : kFamilies) {
            if (f.fp8 == (fp8 || int8) && f.int8 == int8 && f.paged == p.paged() && f.head_dim_qk == p.head_dim_qk &&
                f.head_dim_v == p.head_dim_v)
                family = &f;
        }
        if (family == nullptr && p.paged()) {
            throw_not_supported("params.block_table is set: the AMD paged kernels (HIP C++) take head dims 128/128, "
                                "this request " + std::to_string(p.head_dim_qk) + "/" + std::to_string(p.head_dim_v));
        }
        if (family == nullptr) {
            throw_not_supported("head_dim_qk = " + std::to_string(p.head_dim_qk) + ", head_dim_v = " +
                                std::to_string(p.head_dim_v) +
                                (int8 ? ": the AMD INT8 Q/K kernels support head dims 64 and 128"
                                      : ": the AMD kernels support head dims 128 and 192/128"));
        }
        const int64_t elem_bytes = fp8 || int8 ? 1 : 2;
        gpu::require_vector_aligned(p.q, "q", elem_bytes, "AMD");
        gpu::require_vector_aligned(p.k, "k", elem_bytes, "AMD");
        gpu::require_vector_aligned(p.v, "v", elem_bytes, "AMD");

        const int64_t tiles = (p.seqlen_q + amd::kRows - 1) / amd::kRows;
        if (tiles * amd::kThreads > INT32_MAX || p.heads_q > 65535 || p.batch > 65535) {
            throw_not_supported("grid (" + std::to_string(tiles) + ", heads_q = " + std::to_string(p.heads_q) +
                                ", batch = " + std::to_string(p.batch) +
                                ") exceeds the HIP grid limits (2^31-1 threads, 65535, 65535)");
        }
        // Split-KV: a short query chunk against long keys, with the caller's workspace.
        const int64_t splits = p.workspace != nullptr ? split_count(p, device, p.workspace_bytes) : 1;
        gpu::AttnLaunch launch;
        launch.variant = family->variant;
        launch.symbol = symbol_of(*family, image_arch, p.softmax == ZYFA_SOFTMAX_LEAN);
        launch.second_parameter = true;  // amd::AttnExtraArgs
        if (const AsmKernel* asm_kernel = uses_asm(image_arch) && splits == 1 ? asm_kernel_for(p, image_arch) : nullptr) {
            launch.variant = asm_kernel->variant;
            launch.symbol = asm_kernel->symbol;
            launch.second_parameter = asm_kernel->paged;  // AttnKernelArgs only, or (paged) AttnExtraArgs too
        }
        launch.kernel_name = splits > 1 ? split_kernel_name(launch.symbol) : launch.symbol;
        launch.grid.x = static_cast<uint32_t>(tiles * splits);
        launch.grid.y = static_cast<uint32_t>(p.heads_q);
        launch.grid.z = static_cast<uint32_t>(p.batch);
        launch.block.x = amd::kThreads;
        launch.shared_bytes = 0;  // static LDS only
        launch.splits = splits;
        return launch;
    }

    // The HIP C++ kernels' second parameter (kernels/amd/attention_extra_args.h): the block table
    // (kernels/common/paged_kv_args.h) of the paged kernels, and the split-KV parts in the
    // workspace (common/split_kv_args.h's layout) when the plan split the problem.
    void second_parameter(const AttnProblem& p, const gpu::AttnLaunch& launch, gpu::GpuRuntime& runtime,
                          gpu::SecondKernelParameter& out) const override {
        (void)runtime;
        static_assert(sizeof(amd::AttnExtraArgs) <= sizeof(out.bytes), "AttnExtraArgs fits the parameter storage");
        amd::AttnExtraArgs extra;
        std::memset(&extra, 0, sizeof(extra));
        if (p.paged()) {
            extra.paged.block_table = p.block_table;
            extra.paged.seqused_k = p.seqused_k;
            extra.paged.block_table_stride = p.block_table_stride;
            extra.paged.page_size = static_cast<int32_t>(p.page_size);
            extra.paged.num_pages = static_cast<int32_t>(p.num_pages);
        }
        if (launch.splits > 1) {
            const SplitKvLayout layout = split_kv_layout(p.batch, p.seqlen_q, p.heads_q, p.head_dim_v, launch.splits);
            extra.split.part_o = static_cast<float*>(p.workspace);
            extra.split.part_lse = extra.split.part_o + launch.splits * layout.o_stride;
            extra.split.part_o_stride = layout.o_stride;
            extra.split.part_lse_stride = layout.lse_stride;
            extra.split.num_splits = static_cast<int32_t>(launch.splits);
        }
        extra.key_bias = p.key_bias;
        std::memcpy(out.bytes, &extra, sizeof(extra));
    }

    uint64_t split_workspace_bytes(const AttnProblem& shape, const gpu::DeviceInfo& device,
                                   const std::string& image_arch) const override {
        if (fp8_dtype_of(image_arch) == 0) return 0;
        // Head dims and key_block no AMD kernel takes: such a problem never runs, so never splits.
        if (shape.key_block != 0 && shape.key_block != amd::kKeyBlock) return 0;
        bool covered = false;
        for (const KernelFamily& f : kFamilies)
            covered = covered || (f.head_dim_qk == shape.head_dim_qk && f.head_dim_v == shape.head_dim_v);
        if (!covered) return 0;
        const int64_t splits = split_count(shape, device, -1);
        return splits > 1 ? static_cast<uint64_t>(gpu::split_kv_workspace_bytes(gpu::split_kv_shape(shape), splits))
                          : 0;
    }

    // v_cvt_i32_f32 truncates toward zero.
    float lean_centre() const override { return numerics::lean_p_centre_for(numerics::FloatToIntRounding::TowardZero); }

    // kernels/amd/attention_merge.hip, built for every arch of ZYFA_AMD_ARCHS.
    gpu::MergeKernelSpec merge_kernel(const std::string& image_arch) const override {
        if (image_arch != "gfx950" && image_arch != "gfx942") return {};
        return gpu::attn_merge_kernel_names();
    }

    // kernels/amd/quantize_fp8.hip, built for every arch of ZYFA_AMD_ARCHS.
    gpu::QuantKernelSpec quantize_kernels(const std::string& image_arch) const override {
        if (image_arch != "gfx950" && image_arch != "gfx942") return {};
        gpu::QuantKernelSpec spec = gpu::quantize_fp8_kernel_names();
        spec.key_bias = "zyfa_quantize_fp8_key_bias";
        return spec;
    }

private:
    bool uses_asm(const std::string& image_arch) const {
        return choice_ == AmdKernelChoice::Automatic && (image_arch == "gfx950" || image_arch == "gfx942");
    }

    AmdKernelChoice choice_;
};

}  // namespace

std::unique_ptr<gpu::AttnKernelCatalogue> make_hip_attn_catalogue(AmdKernelChoice choice) {
    return std::make_unique<HipAttnCatalogue>(choice);
}

}  // namespace hip
}  // namespace zyfa
