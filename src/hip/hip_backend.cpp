#include "hip_backend.hpp"

#include "attention_launch_plan.hpp"
#include "hip_runtime.hpp"

namespace zyfa {
namespace hip {

std::unique_ptr<Backend> make_hip_backend(std::unique_ptr<gpu::GpuRuntime> runtime,
                                          std::unique_ptr<gpu::AttnKernelCatalogue> catalogue,
                                          const gpu::KernelRegistry& registry) {
    return gpu::make_gpu_backend(ZYFA_BACKEND_HIP, std::move(runtime), std::move(catalogue), registry);
}

std::unique_ptr<Backend> make_hip_backend(int ordinal, AmdKernelChoice choice) {
    return make_hip_backend(open_hip_runtime(ordinal), make_hip_attn_catalogue(choice),
                            gpu::KernelRegistry::embedded());
}

std::unique_ptr<Backend> make_hip_backend(int ordinal) { return make_hip_backend(ordinal, AmdKernelChoice::Automatic); }

}  // namespace hip
}  // namespace zyfa
