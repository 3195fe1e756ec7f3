// The NVIDIA backend: the CUDA driver (cuda_runtime.hpp), the embedded cubins and the launch plan
// of the NVIDIA kernels (attention_launch_plan.hpp), over the generic GPU backend.
#pragma once

#include <memory>

#include "attention_launch_plan.hpp"
#include "core/backend.hpp"
#include "gpu/gpu_backend.hpp"

namespace zyfa {
namespace cuda {

// A ZYFA_BACKEND_CUDA backend on device `ordinal`. Throws Error(NO_DEVICE) without a driver or
// device (see open_cuda_runtime). On a GPU this build has no cubin for, creation succeeds and
// every attention call is NOT_SUPPORTED with the reason.
std::unique_ptr<Backend> make_cuda_backend(int ordinal);

// The same with the launch plan's kernel choice given (attention_launch_plan.hpp): the public
// path passes CudaKernelChoice::Automatic; tests pass CpAsync to run the cp.async producer.
std::unique_ptr<Backend> make_cuda_backend(int ordinal, CudaKernelChoice choice);

// The same over any runtime, catalogue and registry: the seam tests use for doubles.
std::unique_ptr<Backend> make_cuda_backend(std::unique_ptr<gpu::GpuRuntime> runtime,
                                           std::unique_ptr<gpu::AttnKernelCatalogue> catalogue,
                                           const gpu::KernelRegistry& registry);

// The NVIDIA kernel catalogue of this build (attention_launch_plan.hpp).
std::unique_ptr<gpu::AttnKernelCatalogue> make_default_cuda_catalogue();

}  // namespace cuda
}  // namespace zyfa
