// The CUDA implementation of gpu::GpuRuntime: one device's primary context, over the driver API
// loaded with dlopen (cuda_driver.hpp).
#pragma once

#include <memory>

#include "gpu/gpu_runtime.hpp"

namespace zyfa {
namespace cuda {

// Opens CUDA device `ordinal` and retains its primary context (released by the destructor).
// Throws Error(NO_DEVICE) when the driver is absent or has no such device (the message names the
// library, the driver's error and the device count), Error(DEVICE) for other driver failures.
std::unique_ptr<gpu::GpuRuntime> open_cuda_runtime(int ordinal);

}  // namespace cuda
}  // namespace zyfa
