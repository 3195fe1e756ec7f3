// The HIP implementation of gpu::GpuRuntime: one AMD device through the HIP module API loaded
// with dlopen (hip_api.hpp). Every method makes the context's device current for its own duration
// (hipSetDevice) and restores the caller's device.
#pragma once

#include <memory>

#include "gpu/gpu_runtime.hpp"

namespace zyfa {
namespace hip {

// Opens HIP device `ordinal`. Throws Error(NO_DEVICE) when the runtime is absent, reports no
// device (hipErrorNoDevice, hipErrorInsufficientDriver, hipErrorNotInitialized) or has fewer
// devices than ordinal + 1; Error(DEVICE) for other runtime failures or an unreadable arch name.
// DeviceInfo::arch is the processor of gcnArchName ("gfx950" for "gfx950:sramecc+:xnack-"),
// image_archs is {arch}: AMD code objects run only on the processor they were built for.
std::unique_ptr<gpu::GpuRuntime> open_hip_runtime(int ordinal);

}  // namespace hip
}  // namespace zyfa
