#include "cuda_driver.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <initializer_list>

#include "core/errors.hpp"

namespace zyfa {
namespace cuda {
namespace {

// The soname, never "libcuda.so": that name is the toolkit's link-time stub.
constexpr const char* kDefaultLibrary = "libcuda.so.1";

// Resolves the first of `names` the library exports into `slot`, or throws NO_DEVICE: a driver
// without an entry point zyfa needs is too old for it.
template <class Function>
void resolve(void* library, const std::string& path, Function& slot, std::initializer_list<const char*> names) {
    for (const char* name : names) {
        if (void* symbol = dlsym(library, name)) {
            slot = reinterpret_cast<Function>(symbol);
            return;
        }
    }
    throw Error(ZYFA_ERROR_NO_DEVICE, "the CUDA driver " + path + " has no entry point " + *names.begin() +
                                          " (a driver too old for zyfa)");
}

CudaDriver load_driver() {
    CudaDriver driver{};
    const char* override_path = std::getenv("ZYFA_CUDA_LIBRARY");
    const bool overridden = override_path != nullptr && override_path[0] != '\0';
    driver.library = overridden ? override_path : kDefaultLibrary;

    // RTLD_LOCAL: the driver's symbols stay out of the global namespace. Never unloaded: handles
    // the driver gave out may outlive any one zyfa object.
    void* library = dlopen(driver.library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
        const char* reason = dlerror();
        throw Error(ZYFA_ERROR_NO_DEVICE,
                    "cannot load the CUDA driver " + driver.library + (overridden ? " (from ZYFA_CUDA_LIBRARY)" : "") +
                        ": " + (reason != nullptr ? reason : "unknown dlopen error") +
                        (overridden ? "" : " (no NVIDIA driver installed on this machine?)"));
    }
    const std::string& path = driver.library;
    resolve(library, path, driver.cuGetErrorName, {"cuGetErrorName"});
    resolve(library, path, driver.cuGetErrorString, {"cuGetErrorString"});
    resolve(library, path, driver.cuInit, {"cuInit"});
    resolve(library, path, driver.cuDriverGetVersion, {"cuDriverGetVersion"});
    resolve(library, path, driver.cuDeviceGetCount, {"cuDeviceGetCount"});
    resolve(library, path, driver.cuDeviceGet, {"cuDeviceGet"});
    resolve(library, path, driver.cuDeviceGetName, {"cuDeviceGetName"});
    resolve(library, path, driver.cuDeviceGetAttribute, {"cuDeviceGetAttribute"});
    resolve(library, path, driver.cuDevicePrimaryCtxRetain, {"cuDevicePrimaryCtxRetain"});
    resolve(library, path, driver.cuDevicePrimaryCtxRelease, {"cuDevicePrimaryCtxRelease_v2"});
    resolve(library, path, driver.cuCtxGetCurrent, {"cuCtxGetCurrent"});
    resolve(library, path, driver.cuCtxPushCurrent, {"cuCtxPushCurrent_v2"});
    resolve(library, path, driver.cuCtxPopCurrent, {"cuCtxPopCurrent_v2"});
    resolve(library, path, driver.cuCtxSynchronize, {"cuCtxSynchronize"});
    resolve(library, path, driver.cuModuleLoadData, {"cuModuleLoadData"});
    resolve(library, path, driver.cuModuleUnload, {"cuModuleUnload"});
    resolve(library, path, driver.cuModuleGetFunction, {"cuModuleGetFunction"});
    resolve(library, path, driver.cuFuncSetAttribute, {"cuFuncSetAttribute"});
    resolve(library, path, driver.cuFuncGetAttribute, {"cuFuncGetAttribute"});
    resolve(library, path, driver.cuLaunchKernel, {"cuLaunchKernel"});
    resolve(library, path, driver.cuPointerGetAttributes, {"cuPointerGetAttributes"});
    resolve(library, path, driver.cuMemAlloc, {"cuMemAlloc_v2"});
    resolve(library, path, driver.cuMemFree, {"cuMemFree_v2"});
    resolve(library, path, driver.cuMemcpyHtoD, {"cuMemcpyHtoD_v2"});
    resolve(library, path, driver.cuMemcpyDtoH, {"cuMemcpyDtoH_v2"});
    resolve(library, path, driver.cuMemsetD8, {"cuMemsetD8_v2"});
    resolve(library, path, driver.cuStreamCreate, {"cuStreamCreate"});
    resolve(library, path, driver.cuStreamDestroy, {"cuStreamDestroy_v2"});
    resolve(library, path, driver.cuStreamSynchronize, {"cuStreamSynchronize"});
    resolve(library, path, driver.cuEventCreate, {"cuEventCreate"});
    resolve(library, path, driver.cuEventDestroy, {"cuEventDestroy_v2"});
    resolve(library, path, driver.cuEventRecord, {"cuEventRecord"});
    resolve(library, path, driver.cuEventSynchronize, {"cuEventSynchronize"});
    // The _v2 (CUDA 12.8+) and the original have the same signature; older drivers only export
    // the original.
    resolve(library, path, driver.cuEventElapsedTime, {"cuEventElapsedTime_v2", "cuEventElapsedTime"});
    resolve(library, path, driver.cuStreamBeginCapture, {"cuStreamBeginCapture_v2"});
    resolve(library, path, driver.cuStreamEndCapture, {"cuStreamEndCapture"});
    resolve(library, path, driver.cuGraphInstantiateWithFlags, {"cuGraphInstantiateWithFlags"});
    resolve(library, path, driver.cuGraphLaunch, {"cuGraphLaunch"});
    resolve(library, path, driver.cuGraphDestroy, {"cuGraphDestroy"});
    resolve(library, path, driver.cuGraphExecDestroy, {"cuGraphExecDestroy"});
    // Optional: without it the warp-specialised kernels copy with cp.async instead.
    driver.cuTensorMapEncodeTiled =
        reinterpret_cast<decltype(driver.cuTensorMapEncodeTiled)>(dlsym(library, "cuTensorMapEncodeTiled"));

    const CUresult init = driver.cuInit(0);
    if (init != CUDA_SUCCESS) {
        const bool no_device = init == CUDA_ERROR_NO_DEVICE || init == CUDA_ERROR_STUB_LIBRARY ||
                               init == CUDA_ERROR_INSUFFICIENT_DRIVER || init == CUDA_ERROR_SYSTEM_DRIVER_MISMATCH ||
                               init == CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE;
        throw Error(no_device ? ZYFA_ERROR_NO_DEVICE : ZYFA_ERROR_DEVICE,
                    "cuInit (" + driver.library + "): " + driver.describe(init));
    }
    driver.check(driver.cuDriverGetVersion(&driver.driver_version), "cuDriverGetVersion");
    return driver;
}

}  // namespace

const CudaDriver& CudaDriver::get() {
    // A failed load throws out of the initialiser, so the next call tries again.
    static const CudaDriver driver = load_driver();
    return driver;
}

std::string CudaDriver::describe(CUresult result) const {
    const char* name = nullptr;
    const char* text = nullptr;
    if (cuGetErrorName == nullptr || cuGetErrorName(result, &name) != CUDA_SUCCESS || name == nullptr) {
        name = nullptr;
    }
    if (cuGetErrorString == nullptr || cuGetErrorString(result, &text) != CUDA_SUCCESS || text == nullptr) {
        text = nullptr;
    }
    std::string description = name != nullptr ? name : "CUresult " + std::to_string(result);
    if (text != nullptr) description += std::string(" (") + text + ")";
    return description;
}

void CudaDriver::check(CUresult result, const char* what) const {
    if (result == CUDA_SUCCESS) return;
    throw Error(result == CUDA_ERROR_OUT_OF_MEMORY ? ZYFA_ERROR_OUT_OF_MEMORY : ZYFA_ERROR_DEVICE,
                std::string(what) + ": " + describe(result));
}

}  // namespace cuda
}  // namespace zyfa
