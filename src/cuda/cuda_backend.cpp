#include "cuda_backend.hpp"

#include "attention_launch_plan.hpp"
#include "cuda_runtime.hpp"

namespace zyfa {
namespace cuda {

std::unique_ptr<gpu::AttnKernelCatalogue> make_default_cuda_catalogue() { return make_cuda_attn_catalogue(); }

std::unique_ptr<Backend> make_cuda_backend(std::unique_ptr<gpu::GpuRuntime> runtime,
                                           std::unique_ptr<gpu::AttnKernelCatalogue> catalogue,
                                           const gpu::KernelRegistry& registry) {
    return gpu::make_gpu_backend(ZYFA_BACKEND_CUDA, std::move(runtime), std::move(catalogue), registry);
}

std::unique_ptr<Backend> make_cuda_backend(int ordinal, CudaKernelChoice choice) {
    return make_cuda_backend(open_cuda_runtime(ordinal), make_cuda_attn_catalogue(choice),
                             gpu::KernelRegistry::embedded());
}

std::unique_ptr<Backend> make_cuda_backend(int ordinal) {
    return make_cuda_backend(open_cuda_runtime(ordinal), make_default_cuda_catalogue(),
                             gpu::KernelRegistry::embedded());
}

}  // namespace cuda
}  // namespace zyfa
