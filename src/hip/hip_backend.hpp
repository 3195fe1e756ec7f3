// The AMD backend: the HIP runtime (hip_runtime.hpp), the embedded code objects and the launch
// plan of the AMD kernels (attention_launch_plan.hpp), over the generic GPU backend.
#pragma once

#include <memory>

#include "attention_launch_plan.hpp"
#include "core/backend.hpp"
#include "gpu/gpu_backend.hpp"

namespace zyfa {
namespace hip {

// A ZYFA_BACKEND_HIP backend on device `ordinal`. Throws Error(NO_DEVICE) without a HIP runtime or
// device (see open_hip_runtime). On a GPU this build has no code object for, creation succeeds and
// every attention call is NOT_SUPPORTED naming the device's arch and the embedded ones.
std::unique_ptr<Backend> make_hip_backend(int ordinal);

// The same with the launch plan's kernel choice given (attention_launch_plan.hpp): the public
// path passes AmdKernelChoice::Automatic; tests pass HipCpp to run the HIP C++ kernels.
std::unique_ptr<Backend> make_hip_backend(int ordinal, AmdKernelChoice choice);

// The same over any runtime, catalogue and registry: the seam tests use for doubles.
std::unique_ptr<Backend> make_hip_backend(std::unique_ptr<gpu::GpuRuntime> runtime,
                                          std::unique_ptr<gpu::AttnKernelCatalogue> catalogue,
                                          const gpu::KernelRegistry& registry);

}  // namespace hip
}  // namespace zyfa
