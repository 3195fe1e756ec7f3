// A HIP runtime for tests that is the emulator's stand-in plus a record of what was launched:
// it links libzyfa_hip_standin.so and defines only hipModuleGetFunction and hipModuleLaunchKernel,
// which forward to the stand-in's after noting the kernel name. libzyfa resolves every entry point
// with dlsym on this library's handle, which searches this library first and then its
// dependencies, so all other calls go straight to the stand-in. Point ZYFA_HIP_LIBRARY here, then
// read zyfa_test_last_launched_kernel() (found with dlsym) to know which code actually ran.
#include <dlfcn.h>

#include <cstdio>
#include <map>
#include <mutex>
#include <string>

namespace {

typedef int hipError_t;
typedef hipError_t (*GetFunction)(void**, void*, const char*);
typedef hipError_t (*LaunchKernel)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*,
                                   void**, void**);

std::mutex g_mutex;
std::map<void*, std::string> g_function_names;
std::string g_last_launched;
unsigned long g_launches = 0;

// The stand-in's own definition of `name` (dlsym on its handle looks there first).
void* standin_symbol(const char* name) {
    static void* standin = dlopen("libzyfa_hip_standin.so", RTLD_NOW | RTLD_NOLOAD);
    void* symbol = standin ? dlsym(standin, name) : nullptr;
    if (!symbol) std::fprintf(stderr, "launch recorder: the stand-in's %s is not loaded\n", name);
    return symbol;
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) hipError_t hipModuleGetFunction(void** function, void* module,
                                                                        const char* name) {
    static const auto forward = reinterpret_cast<GetFunction>(standin_symbol("hipModuleGetFunction"));
    if (!forward) return 500;  // hipErrorNotFound
    const hipError_t status = forward(function, module, name);
    if (status == 0 && function && name) {
        std::lock_guard<std::mutex> lock(g_mutex);
        g_function_names[*function] = name;
    }
    return status;
}

__attribute__((visibility("default"))) hipError_t hipModuleLaunchKernel(void* function, unsigned gx, unsigned gy,
                                                                         unsigned gz, unsigned bx, unsigned by,
                                                                         unsigned bz, unsigned shared, void* stream,
                                                                         void** params, void** extra) {
    static const auto forward = reinterpret_cast<LaunchKernel>(standin_symbol("hipModuleLaunchKernel"));
    if (!forward) return 500;
    {
        std::lock_guard<std::mutex> lock(g_mutex);
        auto it = g_function_names.find(function);
        g_last_launched = it == g_function_names.end() ? "<unknown function>" : it->second;
        ++g_launches;
    }
    return forward(function, gx, gy, gz, bx, by, bz, shared, stream, params, extra);
}

// The kernel name of the most recent launch ("" before any), copied into `out` (NUL-terminated,
// truncated to `size`); returns how many launches were made so far.
__attribute__((visibility("default"))) unsigned long zyfa_test_last_launched_kernel(char* out, unsigned long size) {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (out && size) std::snprintf(out, size, "%s", g_last_launched.c_str());
    return g_launches;
}

}  // extern "C"
