// The CUDA driver API, loaded at run time with dlopen("libcuda.so.1"): libzyfa.so has no link
// dependency on CUDA and builds without the toolkit's headers. Only the few types and entry
// points zyfa uses are declared here, with the driver's ABI (the versioned symbol names that
// cuda.h maps the plain names to, e.g. cuMemAlloc -> cuMemAlloc_v2).
//
// ZYFA_CUDA_LIBRARY=<path> loads another library instead (a test double, or a driver outside the
// loader's path). The toolkit's stub (lib64/stubs/libcuda.so) is never picked up by the default
// soname; if it is loaded anyway, cuInit's CUDA_ERROR_STUB_LIBRARY becomes ZYFA_ERROR_NO_DEVICE.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace zyfa {
namespace cuda {

// The driver's handle and enum types (ABI-compatible with cuda.h).
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUstream_st;
struct CUevent_st;
struct CUgraph_st;
struct CUgraphExec_st;
using CUcontext = CUctx_st*;
using CUmodule = CUmod_st*;
using CUfunction = CUfunc_st*;
using CUstream = CUstream_st*;
using CUevent = CUevent_st*;
using CUgraph = CUgraph_st*;
using CUgraphExec = CUgraphExec_st*;

constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_INVALID_VALUE = 1;
constexpr CUresult CUDA_ERROR_OUT_OF_MEMORY = 2;
constexpr CUresult CUDA_ERROR_NOT_INITIALIZED = 3;
constexpr CUresult CUDA_ERROR_STUB_LIBRARY = 34;
constexpr CUresult CUDA_ERROR_INSUFFICIENT_DRIVER = 35;
constexpr CUresult CUDA_ERROR_NO_DEVICE = 100;
constexpr CUresult CUDA_ERROR_INVALID_DEVICE = 101;
constexpr CUresult CUDA_ERROR_SYSTEM_DRIVER_MISMATCH = 803;
constexpr CUresult CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE = 804;

constexpr int CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13;  // kHz
constexpr int CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
constexpr int CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS = 88;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97;

// cuPointerGetAttributes: CUpointer_attribute and the CUmemorytype values it reports (0: a pointer
// the driver does not know, i.e. unregistered host memory).
constexpr int CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2;     // unsigned int
constexpr int CU_POINTER_ATTRIBUTE_DEVICE_POINTER = 3;  // CUdeviceptr
constexpr int CU_POINTER_ATTRIBUTE_IS_MANAGED = 8;      // a boolean
constexpr int CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9;  // int
constexpr unsigned CU_MEMORYTYPE_HOST = 1;
constexpr unsigned CU_MEMORYTYPE_DEVICE = 2;

constexpr int CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0;
constexpr int CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1;
constexpr int CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3;
constexpr int CU_FUNC_ATTRIBUTE_NUM_REGS = 4;
constexpr int CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;

constexpr unsigned CU_STREAM_NON_BLOCKING = 1;
constexpr unsigned CU_EVENT_DEFAULT = 0;
constexpr int CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1;

// The entry points, resolved once per process. Names are the driver's exported symbols.
struct CudaDriver {
    CUresult (*cuGetErrorName)(CUresult, const char**);
    CUresult (*cuGetErrorString)(CUresult, const char**);
    CUresult (*cuInit)(unsigned);
    CUresult (*cuDriverGetVersion)(int*);
    CUresult (*cuDeviceGetCount)(int*);
    CUresult (*cuDeviceGet)(CUdevice*, int);
    CUresult (*cuDeviceGetName)(char*, int, CUdevice);
    CUresult (*cuDeviceGetAttribute)(int*, int, CUdevice);
    CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice);
    CUresult (*cuDevicePrimaryCtxRelease)(CUdevice);  // _v2
    CUresult (*cuCtxGetCurrent)(CUcontext*);
    CUresult (*cuCtxPushCurrent)(CUcontext);  // _v2
    CUresult (*cuCtxPopCurrent)(CUcontext*);  // _v2
    CUresult (*cuCtxSynchronize)();
    CUresult (*cuModuleLoadData)(CUmodule*, const void*);
    CUresult (*cuModuleUnload)(CUmodule);
    CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*);
    CUresult (*cuFuncSetAttribute)(CUfunction, int, int);
    CUresult (*cuFuncGetAttribute)(int*, int, CUfunction);
    CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                               CUstream, void**, void**);
    // Where a pointer lives (CUDA 7+); unlike cuPointerGetAttribute, a pointer the driver does
    // not know is CUDA_SUCCESS with memory type 0.
    CUresult (*cuPointerGetAttributes)(unsigned, int*, void**, CUdeviceptr);
    // Test and tool helpers.
    CUresult (*cuMemAlloc)(CUdeviceptr*, size_t);                    // _v2
    CUresult (*cuMemFree)(CUdeviceptr);                               // _v2
    CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void*, size_t);      // _v2
    CUresult (*cuMemcpyDtoH)(void*, CUdeviceptr, size_t);            // _v2
    CUresult (*cuMemsetD8)(CUdeviceptr, unsigned char, size_t);      // _v2
    CUresult (*cuStreamCreate)(CUstream*, unsigned);
    CUresult (*cuStreamDestroy)(CUstream);  // _v2
    CUresult (*cuStreamSynchronize)(CUstream);
    CUresult (*cuEventCreate)(CUevent*, unsigned);
    CUresult (*cuEventDestroy)(CUevent);  // _v2
    CUresult (*cuEventRecord)(CUevent, CUstream);
    CUresult (*cuEventSynchronize)(CUevent);
    CUresult (*cuEventElapsedTime)(float*, CUevent, CUevent);
    CUresult (*cuStreamBeginCapture)(CUstream, int);  // _v2
    CUresult (*cuStreamEndCapture)(CUstream, CUgraph*);
    CUresult (*cuGraphInstantiateWithFlags)(CUgraphExec*, CUgraph, unsigned long long);
    CUresult (*cuGraphLaunch)(CUgraphExec, CUstream);
    CUresult (*cuGraphDestroy)(CUgraph);
    CUresult (*cuGraphExecDestroy)(CUgraphExec);

    // Optional (null when the driver has none, CUDA < 12): host-only encoding of a tensor map for
    // the tensor memory accelerator. Enums as cuda.h: data type 0 UINT8 / 1 UINT16, interleave
    // 0 none, swizzle 0 none / 3 128 B, L2 promotion 2 = 128 B, out-of-bounds fill 0 = zeros.
    CUresult (*cuTensorMapEncodeTiled)(void* tensor_map, int data_type, uint32_t rank, void* global_address,
                                       const uint64_t* global_dims, const uint64_t* global_strides,
                                       const uint32_t* box_dims, const uint32_t* element_strides, int interleave,
                                       int swizzle, int l2_promotion, int oob_fill);

    std::string library;  // the path or soname that was loaded
    int driver_version = 0;  // cuDriverGetVersion: 12040 = 12.4

    // The process-wide driver, loaded and initialised (cuInit) on first use; thread-safe. Throws
    // Error(NO_DEVICE) when the library is missing, lacks an entry point, is a stub, or cuInit
    // finds no device or an insufficient driver; Error(DEVICE) for any other cuInit failure.
    static const CudaDriver& get();

    // "CUDA_ERROR_X (the driver's text)"; works for any code, even unknown ones.
    std::string describe(CUresult result) const;
    // Throws Error(DEVICE, "<what>: CUDA_ERROR_X (text)") (OUT_OF_MEMORY for that code) unless
    // result is CUDA_SUCCESS.
    void check(CUresult result, const char* what) const;
};

}  // namespace cuda
}  // namespace zyfa
