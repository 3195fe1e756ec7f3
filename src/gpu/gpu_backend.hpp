// The GPU Backend shared by CUDA and HIP: a gpu::GpuRuntime for the device, the
// embedded code objects (kernel_registry.hpp), and a vendor's attention kernel catalogue that
// says which kernels exist and how to launch one for a problem.
//
// Lifecycle. zyfa_context_create -> make_gpu_backend: picks the device's image arch (the first of
// DeviceInfo::image_archs with an embedded image of this vendor), loads every module the
// catalogue lists for that arch, gets every function and raises its dynamic shared memory limit.
// zyfa_attn_fwd -> plan + AttnKernelArgs + one launch on the caller's stream: nothing is
// allocated, loaded or synchronised there, so it is safe under graph capture and concurrently
// from several threads on one context (the state is read-only after creation).
// zyfa_quantize_fp8 -> four launches on the caller's stream (nvidia/quantize_fp8_args.h; five with
// K smoothing), the caller's descale buffer doubling as the amax scratch: likewise no allocation,
// no synchronisation.
//
// A GPU for which this build embeds no code object still gets a context (so AUTO does not hand
// device pointers to the CPU backend); every zyfa_attn_supported / zyfa_attn_fwd on it returns
// ZYFA_ERROR_NOT_SUPPORTED naming the device arch and the archs this build has.
//
// ---- For the kernel author (N2): what src/cuda/attention_launch_plan.{hpp,cpp} provides -------
//   namespace zyfa { namespace cuda {
//     std::unique_ptr<gpu::AttnKernelCatalogue> make_cuda_attn_catalogue();
//   } }
// implementing gpu::AttnKernelCatalogue below:
//   - kernels(image_arch): every (variant, symbol, max_shared_bytes) a context on that arch may
//     launch. `variant` is the VARIANT given to zyfa_add_embedded_image (VENDOR nvidia, ARCH =
//     image_arch) and `symbol` an extern "C" __global__ function in that cubin. Return an empty
//     list for an arch you have no kernels for.
//   - plan(problem, device, image_arch): the launch for a validated problem, or throw
//     Error(ZYFA_ERROR_NOT_SUPPORTED, "<reason naming the field and value>") (core/errors.hpp:
//     throw_not_supported). The returned (variant, symbol) must be one of kernels(image_arch);
//     kernel_name is a static string (zyfa_attn_kernel_name returns it).
//     problem.key_block is the caller's keys per online-softmax step (0 = the plan's own choice,
//     else 64 or 128, validated): the plan picks a kernel that steps that many keys or throws
//     NOT_SUPPORTED naming params.key_block (HIP: 64 only; CUDA: the chosen kernel's own step,
//     nvidia::ws_key_block or 64 for the mma.sync kernels).
//   - lean_centre(): the Lean P constant c for this target's float-to-int conversion.
//   - quantize_kernels(image_arch): the image and the five symbols of zyfa_quantize_fp8
//     (kernels/nvidia/quantize_fp8_args.h); the default, none, makes it NOT_SUPPORTED.
//   - merge_kernel(image_arch): the image and symbol of zyfa_attn_merge
//     (kernels/common/attn_merge_kernel_args.h); the default, none, makes it NOT_SUPPORTED.
// The kernel's only parameter is zyfa::AttnKernelArgs (kernels/common/attention_kernel_args.h)
// by value, filled by make_attn_kernel_args() below from the validated problem.
// ------------------------------------------------------------------------------------------------
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/attention_kernel_args.h"
#include "common/attn_merge_kernel_args.h"
#include "common/split_kv_args.h"
#include "core/backend.hpp"
#include "gpu_runtime.hpp"
#include "kernel_registry.hpp"
#include "nvidia/quantize_fp8_args.h"

namespace zyfa {
namespace gpu {

// One kernel a context may launch.
struct KernelSpec {
    const char* variant;        // registry variant: one embedded image = one module
    const char* symbol;         // extern "C" kernel name inside that image
    uint32_t max_shared_bytes;  // the most dynamic shared memory any launch of it asks for
};

// How to launch one problem.
struct AttnLaunch {
    const char* variant = nullptr;
    const char* symbol = nullptr;
    const char* kernel_name = nullptr;  // static string for zyfa_attn_kernel_name / ZYFA_LOG=info
    Dim3 grid;
    Dim3 block;
    uint32_t shared_bytes = 0;          // dynamic shared memory of this launch
    bool second_parameter = false;      // the kernel takes the catalogue's second_parameter() too
    // Split-KV: > 1 when the kernel writes that many partial results into the caller's workspace
    // (common/split_kv_args.h) and zyfa_attn_merge's kernel then merges them into o and lse.
    int64_t splits = 1;
};

// Storage for a kernel's second parameter (the sm_90a warp-specialised kernels' tensor maps).
struct alignas(64) SecondKernelParameter {
    unsigned char bytes[512];
};

// The zyfa_quantize_fp8 kernels of an arch: one image holding the five launches of
// quantize_fp8_args.h, in launch order, and zyfa_quantize_int8's one launch (after mean when
// smoothing). All null when the arch has none.
struct QuantKernelSpec {
    const char* variant = nullptr;
    const char* clear = nullptr;
    const char* mean = nullptr;
    const char* amax = nullptr;
    const char* encode = nullptr;
    const char* finish = nullptr;
    const char* int8 = nullptr;  // zyfa_quantize_int8: amax, codes and descales per 64-row block
    bool v_transposed = false;   // the encode kernel writes ZYFA_QUANT_V_TRANSPOSED's layout (NVIDIA)
    const char* key_bias = nullptr;  // ZYFA_QUANT_KEY_BIAS's launch; null where the arch has none
};

// The zyfa_attn_merge kernel of an arch: one image, one symbol. Null when the arch has none.
struct MergeKernelSpec {
    const char* variant = nullptr;
    const char* symbol = nullptr;
};

// The image and symbol names the CUDA and HIP builds of kernels/*/quantize_fp8 and
// attention_merge share (one set of names; each catalogue says which archs have them).
inline QuantKernelSpec quantize_fp8_kernel_names() {
    QuantKernelSpec spec;
    spec.variant = "quantize_fp8";
    spec.clear = "zyfa_quantize_fp8_clear";
    spec.mean = "zyfa_quantize_fp8_mean";
    spec.amax = "zyfa_quantize_fp8_amax";
    spec.encode = "zyfa_quantize_fp8_encode";
    spec.finish = "zyfa_quantize_fp8_finish";
    spec.int8 = "zyfa_quantize_int8_groups";
    return spec;
}
inline MergeKernelSpec attn_merge_kernel_names() {
    MergeKernelSpec spec;
    spec.variant = "attn_merge";
    spec.symbol = "zyfa_attn_merge";
    return spec;
}

class AttnKernelCatalogue {
public:
    virtual ~AttnKernelCatalogue() = default;
    virtual std::vector<KernelSpec> kernels(const std::string& image_arch) const = 0;
    // Throws Error(NOT_SUPPORTED) with a reason when no kernel runs this problem.
    virtual AttnLaunch plan(const AttnProblem& problem, const DeviceInfo& device,
                            const std::string& image_arch) const = 0;
    virtual float lean_centre() const = 0;
    // For a launch with second_parameter: fills it (host-only work on `runtime`, no allocation).
    virtual void second_parameter(const AttnProblem& problem, const AttnLaunch& launch, GpuRuntime& runtime,
                                  SecondKernelParameter& out) const {
        (void)problem;
        (void)launch;
        (void)runtime;
        (void)out;
    }
    // zyfa_attn_fwd_workspace_size: the bytes of workspace plan() would use for a problem whose
    // shape fields alone are set (core/validate.hpp: validate_attn_shape) with an unlimited
    // workspace; 0 when it would not split. The default, a catalogue without split kernels: 0.
    virtual uint64_t split_workspace_bytes(const AttnProblem& shape, const DeviceInfo& device,
                                           const std::string& image_arch) const {
        (void)shape;
        (void)device;
        (void)image_arch;
        return 0;
    }
    virtual QuantKernelSpec quantize_kernels(const std::string& image_arch) const {
        (void)image_arch;
        return {};
    }
    virtual MergeKernelSpec merge_kernel(const std::string& image_arch) const {
        (void)image_arch;
        return {};
    }
};

// The kernel argument struct for a validated problem. Throws Error(NOT_SUPPORTED) when a size
// does not fit the struct's int32 fields.
AttnKernelArgs make_attn_kernel_args(const AttnProblem& problem, float lean_centre);

// The merge launch of a split-KV problem: num_splits fp32 parts in the workspace layout of
// common/split_kv_args.h merged into problem.o and problem.lse.
MergeKernelArgs make_split_merge_kernel_args(const AttnProblem& problem, int64_t splits);

// The quantize kernels' argument struct for a validated problem. Throws Error(NOT_SUPPORTED) when
// a size does not fit its int32 fields or the Hadamard block exceeds kQuantMaxHadamardBlock.
QuantFp8KernelArgs make_quant_kernel_args(const QuantProblem& problem);

// The merge kernel's argument struct for a validated problem. Throws Error(NOT_SUPPORTED) for more
// than kMergeMaxParts parts or sizes beyond its int32 fields.
MergeKernelArgs make_merge_kernel_args(const MergeProblem& problem);

// The registry arch whose images run on `device` (first match of device.image_archs), or "" when
// this build has none.
std::string select_image_arch(const KernelRegistry& registry, const char* vendor, const DeviceInfo& device);

// A Backend of kind `kind` over `runtime`, loading the catalogue's kernels from `registry`.
std::unique_ptr<Backend> make_gpu_backend(zyfa_backend kind, std::unique_ptr<GpuRuntime> runtime,
                                          std::unique_ptr<AttnKernelCatalogue> catalogue,
                                          const KernelRegistry& registry);

}  // namespace gpu
}  // namespace zyfa
