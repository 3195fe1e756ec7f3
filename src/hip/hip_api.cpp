#include "hip_api.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <initializer_list>

#include "core/errors.hpp"

namespace zyfa {
namespace hip {
namespace {

// The unversioned name first (what a ROCm install's ldconfig or LD_LIBRARY_PATH points at), then
// the sonames of ROCm 7, 6 and 5.
constexpr const char* kDefaultLibraries[] = {"libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6",
                                             "libamdhip64.so.5"};

void* find_symbol(void* library, std::initializer_list<const char*> names) {
    for (const char* name : names) {
        if (void* symbol = dlsym(library, name)) return symbol;
    }
    return nullptr;
}

template <class Function>
void resolve_optional(void* library, Function& slot, std::initializer_list<const char*> names) {
    slot = reinterpret_cast<Function>(find_symbol(library, names));
}

// A runtime without an entry point zyfa needs is too old (or not HIP): NO_DEVICE, so AUTO moves on.
template <class Function>
void resolve(void* library, const std::string& path, Function& slot, std::initializer_list<const char*> names) {
    resolve_optional(library, slot, names);
    if (slot == nullptr) {
        throw Error(ZYFA_ERROR_NO_DEVICE, "the HIP runtime " + path + " has no entry point " + *names.begin() +
                                              " (not a HIP runtime zyfa can use)");
    }
}

void* open_library(std::string& loaded) {
    const char* override_path = std::getenv("ZYFA_HIP_LIBRARY");
    const bool overridden = override_path != nullptr && override_path[0] != '\0';
    if (overridden) {
        loaded = override_path;
        // RTLD_LOCAL: the runtime's symbols stay out of the global namespace. Never unloaded:
        // handles it gave out may outlive any one zyfa object.
        void* library = dlopen(override_path, RTLD_NOW | RTLD_LOCAL);
        if (library == nullptr) {
            const char* reason = dlerror();
            throw Error(ZYFA_ERROR_NO_DEVICE, std::string("cannot load the HIP runtime ") + override_path +
                                                  " (from ZYFA_HIP_LIBRARY): " +
                                                  (reason != nullptr ? reason : "unknown dlopen error"));
        }
        return library;
    }
    std::string reasons;
    for (const char* name : kDefaultLibraries) {
        if (void* library = dlopen(name, RTLD_NOW | RTLD_LOCAL)) {
            loaded = name;
            return library;
        }
        const char* reason = dlerror();
        reasons += std::string(reasons.empty() ? "" : "; ") + (reason != nullptr ? reason : name);
    }
    throw Error(ZYFA_ERROR_NO_DEVICE, "cannot load the HIP runtime (libamdhip64.so, .so.7, .so.6, .so.5): " + reasons +
                                          " (ROCm not installed on this machine? ZYFA_HIP_LIBRARY names another path)");
}

HipApi load_api() {
    HipApi api{};
    void* library = open_library(api.library);
    const std::string& path = api.library;
    resolve(library, path, api.hipGetErrorString, {"hipGetErrorString"});
    resolve_optional(library, api.hipGetErrorName, {"hipGetErrorName"});
    resolve(library, path, api.hipGetDeviceCount, {"hipGetDeviceCount"});
    resolve(library, path, api.hipGetDevice, {"hipGetDevice"});
    resolve(library, path, api.hipSetDevice, {"hipSetDevice"});
    if (void* r0600 = find_symbol(library, {"hipGetDevicePropertiesR0600"})) {
        api.hipGetDeviceProperties = reinterpret_cast<hipError_t (*)(void*, int)>(r0600);
        api.props_layout = kPropsR0600;
        api.memory_types = kMemoryTypesR0600;
    } else {
        resolve(library, path, api.hipGetDeviceProperties, {"hipGetDeviceProperties"});
        api.props_layout = kPropsR0000;
        api.memory_types = kMemoryTypesR0000;
    }
    resolve(library, path, api.hipModuleLoadData, {"hipModuleLoadData"});
    resolve(library, path, api.hipModuleUnload, {"hipModuleUnload"});
    resolve(library, path, api.hipModuleGetFunction, {"hipModuleGetFunction"});
    resolve(library, path, api.hipModuleLaunchKernel, {"hipModuleLaunchKernel"});
    resolve(library, path, api.hipPointerGetAttributes, {"hipPointerGetAttributes"});
    resolve_optional(library, api.hipDeviceGetAttribute, {"hipDeviceGetAttribute"});
    resolve_optional(library, api.hipFuncGetAttribute, {"hipFuncGetAttribute"});
    resolve_optional(library, api.hipMalloc, {"hipMalloc"});
    resolve_optional(library, api.hipFree, {"hipFree"});
    resolve_optional(library, api.hipMemcpy, {"hipMemcpy"});
    resolve_optional(library, api.hipMemset, {"hipMemset"});
    resolve_optional(library, api.hipDeviceSynchronize, {"hipDeviceSynchronize"});
    resolve_optional(library, api.hipStreamCreateWithFlags, {"hipStreamCreateWithFlags"});
    resolve_optional(library, api.hipStreamDestroy, {"hipStreamDestroy"});
    resolve_optional(library, api.hipStreamSynchronize, {"hipStreamSynchronize"});
    resolve_optional(library, api.hipEventCreate, {"hipEventCreate"});
    resolve_optional(library, api.hipEventDestroy, {"hipEventDestroy"});
    resolve_optional(library, api.hipEventRecord, {"hipEventRecord"});
    resolve_optional(library, api.hipEventSynchronize, {"hipEventSynchronize"});
    resolve_optional(library, api.hipEventElapsedTime, {"hipEventElapsedTime"});
    resolve_optional(library, api.hipStreamBeginCapture, {"hipStreamBeginCapture"});
    resolve_optional(library, api.hipStreamEndCapture, {"hipStreamEndCapture"});
    resolve_optional(library, api.hipGraphInstantiate, {"hipGraphInstantiate"});
    resolve_optional(library, api.hipGraphLaunch, {"hipGraphLaunch"});
    resolve_optional(library, api.hipGraphDestroy, {"hipGraphDestroy"});
    resolve_optional(library, api.hipGraphExecDestroy, {"hipGraphExecDestroy"});
    return api;
}

}  // namespace

const HipApi& HipApi::get() {
    // A failed load throws out of the initialiser, so the next call tries again.
    static const HipApi api = load_api();
    return api;
}

std::string HipApi::describe(hipError_t result) const {
    const char* name = hipGetErrorName != nullptr ? hipGetErrorName(result) : nullptr;
    const char* text = hipGetErrorString != nullptr ? hipGetErrorString(result) : nullptr;
    std::string description = name != nullptr ? name : "hipError_t " + std::to_string(result);
    // ROCm 5's hipGetErrorString returns the name again ("hipErrorNoDevice"); say it once.
    if (text != nullptr && description != text) description += std::string(" (") + text + ")";
    return description;
}

void HipApi::check(hipError_t result, const char* what) const {
    if (result == hipSuccess) return;
    throw Error(result == hipErrorOutOfMemory ? ZYFA_ERROR_OUT_OF_MEMORY : ZYFA_ERROR_DEVICE,
                std::string(what) + ": " + describe(result));
}

std::string arch_without_features(const std::string& gcn_arch_name) {
    return gcn_arch_name.substr(0, gcn_arch_name.find(':'));
}

}  // namespace hip
}  // namespace zyfa
