// The HIP runtime's module API, loaded at run time with dlopen: libzyfa.so has no link dependency
// on ROCm and builds without its headers. Only the few types and entry points zyfa uses are
// declared here, with the runtime's ABI.
//
// Library search: ZYFA_HIP_LIBRARY=<path> if set (a test double, or a ROCm outside the loader's
// path), else libamdhip64.so, then the sonames of ROCm 7, 6 and 5 (libamdhip64.so.7/.6/.5).
//
// Device properties: ROCm 6 and later export hipGetDevicePropertiesR0600 (the layout hip headers
// of ROCm 6+ compile against) and keep a plain hipGetDeviceProperties with the older layout for
// old binaries; ROCm 5 has only that one. So R0600 is looked up first. zyfa reads gcnArchName,
// name, multiProcessorCount and sharedMemPerBlock from whichever it finds.
//
// tests/abi/hip_declarations_check.cpp checks these declarations against a real
// hip_runtime_api.h at build time; docs/hip-runtime.md lists what differs between ROCm 5 and 6/7.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace zyfa {
namespace hip {

using hipError_t = int;
struct ihipModule_t;
struct ihipModuleSymbol_t;
struct ihipStream_t;
struct ihipEvent_t;
struct ihipGraph;
struct hipGraphExec;
using hipModule_t = ihipModule_t*;
using hipFunction_t = ihipModuleSymbol_t*;
using hipStream_t = ihipStream_t*;
using hipEvent_t = ihipEvent_t*;
using hipGraph_t = ihipGraph*;
using hipGraphExec_t = hipGraphExec*;

constexpr hipError_t hipSuccess = 0;
constexpr hipError_t hipErrorInvalidValue = 1;
constexpr hipError_t hipErrorOutOfMemory = 2;
constexpr hipError_t hipErrorNotInitialized = 3;
constexpr hipError_t hipErrorInsufficientDriver = 35;
constexpr hipError_t hipErrorNoDevice = 100;
constexpr hipError_t hipErrorInvalidDevice = 101;

constexpr int hipMemcpyHostToDevice = 1;
constexpr int hipMemcpyDeviceToHost = 2;
constexpr unsigned hipStreamNonBlocking = 1;
constexpr int hipStreamCaptureModeThreadLocal = 1;

constexpr int HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0;
constexpr int HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1;
constexpr int HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3;
constexpr int HIP_FUNC_ATTRIBUTE_NUM_REGS = 4;

constexpr int hipDeviceAttributeClockRate = 5;               // the same in ROCm 5, 6 and 7
constexpr int hipDeviceAttributePageableMemoryAccess = 65;  // the same in ROCm 5, 6 and 7

// hipPointerAttribute_t (ROCm 5 and later: the first field was renamed memoryType -> type, the
// layout never changed). An address the runtime does not know (pageable host memory) is
// hipErrorInvalidValue in ROCm 5; ROCm 6 and later answer hipSuccess with type
// hipMemoryTypeUnregistered (0) and device -1. zyfa reads both as unregistered host memory.
struct HipPointerAttributes {
    int type;  // hipMemoryType: values differ between ROCm 5 and 6, see HipMemoryTypes
    int device;
    void* device_pointer;
    void* host_pointer;
    int is_managed;
    unsigned allocation_flags;
};

// hipMemoryType values that zyfa tells apart. ROCm 6 renumbered the enum to CUDA's (0 is
// hipMemoryTypeUnregistered there); ROCm 5 starts at host = 0, device = 1.
struct HipMemoryTypes {
    int host;
    int device;
};
constexpr HipMemoryTypes kMemoryTypesR0600{1, 2};
constexpr HipMemoryTypes kMemoryTypesR0000{0, 1};

// Byte offsets of the fields zyfa reads in the two hipDeviceProp_t layouts (x86-64 / AArch64 LP64,
// from the ROCm headers: R0600 = ROCm 6+ hipDeviceProp_t, R0000 = ROCm 5). abi_hip_declarations
// checks the generation of the header it is built against (ROCm 5.2 in CI).
struct DevicePropLayout {
    size_t name;                       // char[256]
    size_t shared_mem_per_block;       // size_t
    size_t multi_processor_count;      // int
    size_t gcn_arch_name;              // char[256]
};
constexpr DevicePropLayout kPropsR0600{0, 296, 388, 1160};
constexpr DevicePropLayout kPropsR0000{0, 264, 336, 396};
// Larger than either struct (R0600: 1,472 bytes), so a runtime never writes past the buffer.
constexpr size_t kDevicePropBufferBytes = 4096;

struct HipApi {
    const char* (*hipGetErrorString)(hipError_t);
    const char* (*hipGetErrorName)(hipError_t);  // optional
    hipError_t (*hipGetDeviceCount)(int*);
    hipError_t (*hipGetDevice)(int*);
    hipError_t (*hipSetDevice)(int);
    hipError_t (*hipGetDeviceProperties)(void*, int);  // R0600 or R0000, see props_layout
    DevicePropLayout props_layout;
    hipError_t (*hipModuleLoadData)(hipModule_t*, const void*);
    hipError_t (*hipModuleUnload)(hipModule_t);
    hipError_t (*hipModuleGetFunction)(hipFunction_t*, hipModule_t, const char*);
    hipError_t (*hipModuleLaunchKernel)(hipFunction_t, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                        unsigned, hipStream_t, void**, void**);
    hipError_t (*hipPointerGetAttributes)(HipPointerAttributes*, const void*);
    HipMemoryTypes memory_types;  // the enum of the same ROCm generation as props_layout
    // Optional: without it the device is taken to have no pageable memory access.
    hipError_t (*hipDeviceGetAttribute)(int*, int, int);
    // Optional: function attributes and the test/tool helpers (null when the library lacks them;
    // the runtime then reports NOT_SUPPORTED for that helper).
    hipError_t (*hipFuncGetAttribute)(int*, int, hipFunction_t);
    hipError_t (*hipMalloc)(void**, size_t);
    hipError_t (*hipFree)(void*);
    hipError_t (*hipMemcpy)(void*, const void*, size_t, int);
    hipError_t (*hipMemset)(void*, int, size_t);
    hipError_t (*hipDeviceSynchronize)();
    hipError_t (*hipStreamCreateWithFlags)(hipStream_t*, unsigned);
    hipError_t (*hipStreamDestroy)(hipStream_t);
    hipError_t (*hipStreamSynchronize)(hipStream_t);
    hipError_t (*hipEventCreate)(hipEvent_t*);
    hipError_t (*hipEventDestroy)(hipEvent_t);
    hipError_t (*hipEventRecord)(hipEvent_t, hipStream_t);
    hipError_t (*hipEventSynchronize)(hipEvent_t);
    hipError_t (*hipEventElapsedTime)(float*, hipEvent_t, hipEvent_t);
    hipError_t (*hipStreamBeginCapture)(hipStream_t, int);
    hipError_t (*hipStreamEndCapture)(hipStream_t, hipGraph_t*);
    hipError_t (*hipGraphInstantiate)(hipGraphExec_t*, hipGraph_t, void*, char*, size_t);
    hipError_t (*hipGraphLaunch)(hipGraphExec_t, hipStream_t);
    hipError_t (*hipGraphDestroy)(hipGraph_t);
    hipError_t (*hipGraphExecDestroy)(hipGraphExec_t);

    std::string library;  // the path or soname that was loaded

    // The process-wide runtime, loaded on first use; thread-safe. Throws Error(NO_DEVICE) when no
    // library loads or a required entry point is missing. A failed load is retried next call.
    static const HipApi& get();

    // "hipErrorX (the runtime's text)"; works for any code.
    std::string describe(hipError_t result) const;
    // Throws Error(DEVICE, "<what>: hipErrorX (text)") (OUT_OF_MEMORY for that code) unless
    // result is hipSuccess.
    void check(hipError_t result, const char* what) const;
};

// "gfx950:sramecc+:xnack-" -> "gfx950": the processor without its target features.
std::string arch_without_features(const std::string& gcn_arch_name);

}  // namespace hip
}  // namespace zyfa
