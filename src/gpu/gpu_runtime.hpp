// The GPU runtime as zyfa needs it: one device, modules of embedded code objects, kernel launches
// on the caller's stream. Implemented by src/cuda (CUDA driver API, loaded with dlopen) and
// src/hip (HIP module API, loaded with dlopen); a test double can stand in for either. The
// implementations never link a GPU library, so libzyfa.so loads on machines without one.
//
// Every method makes the device's context current on the calling thread for its own duration and
// restores what the caller had (CUDA: the primary context, shared with the CUDA runtime and
// PyTorch, so device pointers and streams from either side are valid on the other).
//
// Errors: zyfa::Error with ZYFA_ERROR_DEVICE and the driver's own error name and text, e.g.
// "cuModuleLoadData: CUDA_ERROR_INVALID_IMAGE (device kernel image is invalid)";
// ZYFA_ERROR_OUT_OF_MEMORY for a failed allocation; ZYFA_ERROR_NO_DEVICE (from the factory) when
// the driver library is absent, is a stub, or sees no such device.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace zyfa {
namespace gpu {

using ModuleHandle = void*;     // CUmodule / hipModule_t
using FunctionHandle = void*;   // CUfunction / hipFunction_t
using StreamHandle = void*;     // CUstream / hipStream_t; null = the legacy default stream
using EventHandle = void*;      // CUevent / hipEvent_t
using GraphHandle = void*;      // CUgraph / hipGraph_t
using GraphExecHandle = void*;  // CUgraphExec / hipGraphExec_t

struct Dim3 {
    uint32_t x = 1, y = 1, z = 1;
};

struct DeviceInfo {
    int ordinal = 0;
    std::string name;          // the driver's name: "NVIDIA H200"
    std::string arch;          // what zyfa_context_device_name returns: "sm_90", "gfx950"
    // Registry archs whose code runs on this device, best first. CUDA 9.0: sm_90a, sm_90 (a cubin
    // runs on the same major with an equal or higher minor; "a" cubins only on the exact arch).
    std::vector<std::string> image_archs;
    int compute_major = 0;     // NVIDIA compute capability; AMD: gfx major/minor
    int compute_minor = 0;
    int multiprocessors = 0;   // SMs / CUs
    // The SM / CU clock the runtime reports, in kHz (CUDA's CLOCK_RATE, HIP's
    // hipDeviceAttributeClockRate): the peak clock, not the one under load; 0 when not reported.
    // Only for reports (zyfa-check's estimated TFLOP/s); no launch decision reads it.
    int clock_khz = 0;
    int max_shared_bytes_per_block = 0;  // opt-in maximum of dynamic + static shared memory
    // The device reads and writes pageable host memory in place (HMM or ATS: CUDA's
    // PAGEABLE_MEMORY_ACCESS, HIP's hipDeviceAttributePageableMemoryAccess).
    bool pageable_memory_access = false;
};

// Where a pointer's memory is, as this runtime's device sees it.
enum class MemoryLocation {
    ThisDevice,        // device memory of this device
    OtherDevice,       // device memory of another device (PointerLocation::device)
    AccessibleHost,    // host memory the device reaches at the same address: pinned and mapped,
                       // managed, or any host memory on a device with pageable_memory_access
    InaccessibleHost,  // pageable host memory, or an address the driver does not know
};

struct PointerLocation {
    MemoryLocation location = MemoryLocation::InaccessibleHost;
    int device = -1;  // the owning device's ordinal (ThisDevice, OtherDevice), else -1
};

// What a loaded kernel uses (for tests: no spills, occupancy checks).
struct FunctionInfo {
    int registers = 0;             // per thread
    int local_bytes = 0;           // per thread; > 0 means spills or a stack
    int static_shared_bytes = 0;
    int max_threads_per_block = 0;
};

// A rank-4 tiled tensor map for the tensor memory accelerator (CUDA's cuTensorMapEncodeTiled):
// dims innermost first (dims[0] contiguous), byte strides of dims 1..3, the box copied per
// instruction, no interleave, out-of-bounds elements read as zero; rows of the box land as they
// are or in the 128-byte swizzle of wgmma operands.
struct TiledTensorMap4d {
    const void* base = nullptr;
    uint32_t element_bytes = 1;  // 1 or 2
    uint64_t dims[4] = {};
    uint64_t strides_bytes[3] = {};
    uint32_t box[4] = {};
    bool swizzle_128b = false;
};

class GpuRuntime {
public:
    virtual ~GpuRuntime() = default;

    virtual const char* vendor() const noexcept = 0;  // "nvidia", "amd": the registry's vendor key
    virtual const DeviceInfo& device() const noexcept = 0;

    // --- what the backends use: context creation loads, zyfa_attn_fwd only launches ------------
    virtual ModuleHandle load_module(const void* image, size_t size) = 0;
    virtual void unload_module(ModuleHandle module) noexcept = 0;
    // Throws ZYFA_ERROR_DEVICE naming the symbol when the module has no such kernel.
    virtual FunctionHandle get_function(ModuleHandle module, const char* symbol) = 0;
    // Allows up to `bytes` of dynamic shared memory per block (needed above 48 KiB on CUDA).
    virtual void set_max_dynamic_shared_bytes(FunctionHandle function, uint32_t bytes) = 0;
    virtual FunctionInfo function_info(FunctionHandle function) = 0;
    // Enqueues asynchronously on `stream`; args[i] points at the i-th kernel parameter. Never
    // synchronises or allocates, so it may be captured in a graph.
    virtual void launch(FunctionHandle function, Dim3 grid, Dim3 block, uint32_t shared_bytes, StreamHandle stream,
                        void** args) = 0;
    // Writes a 128-byte, 64-byte aligned tensor map for `request` into `map` (a kernel
    // parameter). false, with `map` unspecified, when the driver lacks tensor maps or rejects the
    // request; the caller then launches without them. Host-only: no device work, no allocation.
    virtual bool encode_tensor_map(void* map, const TiledTensorMap4d& request) noexcept {
        (void)map;
        (void)request;
        return false;
    }
    // Where each of pointers[0..count) lives, into out[0..count). A driver query per pointer
    // (cuPointerGetAttributes, hipPointerGetAttributes): host-only, no synchronisation, no
    // allocation, so it may run during graph capture. Throws ZYFA_ERROR_DEVICE on a driver failure
    // other than "unknown pointer".
    virtual void locate_pointers(const void* const* pointers, size_t count, PointerLocation* out) = 0;

    // --- test and tool helpers: never used by zyfa_attn_fwd --------------------------------------
    // Device memory and synchronous copies (the copies wait for the device to finish them).
    virtual void* malloc_device(size_t bytes) = 0;
    virtual void free_device(void* pointer) noexcept = 0;
    virtual void copy_to_device(void* device_dst, const void* host_src, size_t bytes) = 0;
    virtual void copy_to_host(void* host_dst, const void* device_src, size_t bytes) = 0;
    virtual void fill_device(void* device_dst, uint8_t byte, size_t bytes) = 0;
    // Streams (non-blocking with respect to the default stream) and synchronisation.
    virtual StreamHandle create_stream() = 0;
    virtual void destroy_stream(StreamHandle stream) noexcept = 0;
    virtual void synchronize_stream(StreamHandle stream) = 0;
    virtual void synchronize_device() = 0;
    // Events for timing: elapsed_ms waits for `end`.
    virtual EventHandle create_event() = 0;
    virtual void destroy_event(EventHandle event) noexcept = 0;
    virtual void record_event(EventHandle event, StreamHandle stream) = 0;
    virtual float elapsed_ms(EventHandle start, EventHandle end) = 0;
    // Graph capture of a (non-default) stream: begin, enqueue work, end -> graph; instantiate and
    // replay. Capture mode is thread-local (other threads may keep using the device).
    virtual void begin_capture(StreamHandle stream) = 0;
    virtual GraphHandle end_capture(StreamHandle stream) = 0;
    virtual GraphExecHandle instantiate_graph(GraphHandle graph) = 0;
    virtual void launch_graph(GraphExecHandle graph_exec, StreamHandle stream) = 0;
    virtual void destroy_graph(GraphHandle graph) noexcept = 0;
    virtual void destroy_graph_exec(GraphExecHandle graph_exec) noexcept = 0;
};

}  // namespace gpu
}  // namespace zyfa
