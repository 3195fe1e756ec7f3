#include "cuda_runtime.hpp"

#include <string>

#include "core/errors.hpp"
#include "cuda_driver.hpp"

namespace zyfa {
namespace cuda {
namespace {

// Makes `context` current on this thread for one scope and restores the caller's context, so a
// zyfa call never changes which context (device) the caller's thread works on. When the caller
// already has it current (the usual case: the primary context the CUDA runtime and PyTorch use)
// this costs one cuCtxGetCurrent, a thread-local read in the driver.
class ScopedContext {
public:
    ScopedContext(const CudaDriver& driver, CUcontext context) : driver_(driver) {
        CUcontext current = nullptr;
        driver_.check(driver_.cuCtxGetCurrent(&current), "cuCtxGetCurrent");
        if (current != context) {
            driver_.check(driver_.cuCtxPushCurrent(context), "cuCtxPushCurrent");
            pushed_ = true;
        }
    }
    ~ScopedContext() {
        if (pushed_) {
            CUcontext popped = nullptr;
            driver_.cuCtxPopCurrent(&popped);  // cannot fail for a context this scope pushed
        }
    }
    ScopedContext(const ScopedContext&) = delete;
    ScopedContext& operator=(const ScopedContext&) = delete;

private:
    const CudaDriver& driver_;
    bool pushed_ = false;
};

int device_attribute(const CudaDriver& driver, int attribute, CUdevice device, const char* what) {
    int value = 0;
    driver.check(driver.cuDeviceGetAttribute(&value, attribute, device), what);
    return value;
}

// Registry archs a device of compute capability major.minor runs, best first: the
// arch-specific "a" cubin (exact match only), then cubins of the same major with a minor <= ours.
std::vector<std::string> compatible_image_archs(int major, int minor) {
    std::vector<std::string> archs;
    archs.push_back("sm_" + std::to_string(major) + std::to_string(minor) + "a");
    for (int m = minor; m >= 0; --m) archs.push_back("sm_" + std::to_string(major) + std::to_string(m));
    return archs;
}

class CudaRuntime final : public gpu::GpuRuntime {
public:
    explicit CudaRuntime(int ordinal) : driver_(CudaDriver::get()) {
        int count = 0;
        driver_.check(driver_.cuDeviceGetCount(&count), "cuDeviceGetCount");
        if (ordinal >= count) {
            throw Error(ZYFA_ERROR_NO_DEVICE, "options.device = " + std::to_string(ordinal) + " but the CUDA driver (" +
                                                  driver_.library + ") sees " + std::to_string(count) + " device(s)");
        }
        driver_.check(driver_.cuDeviceGet(&device_, ordinal), "cuDeviceGet");
        char name[256] = {};
        driver_.check(driver_.cuDeviceGetName(name, static_cast<int>(sizeof(name) - 1), device_), "cuDeviceGetName");
        info_.ordinal = ordinal;
        info_.name = name;
        info_.compute_major = device_attribute(driver_, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device_,
                                               "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MAJOR)");
        info_.compute_minor = device_attribute(driver_, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device_,
                                               "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MINOR)");
        info_.multiprocessors = device_attribute(driver_, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device_,
                                                 "cuDeviceGetAttribute(MULTIPROCESSOR_COUNT)");
        info_.max_shared_bytes_per_block = device_attribute(
            driver_, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, device_,
            "cuDeviceGetAttribute(MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)");
        // Optional: a driver that does not answer has no HMM/ATS, so pageable memory is rejected.
        int pageable = 0;
        info_.pageable_memory_access =
            driver_.cuDeviceGetAttribute(&pageable, CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS, device_) ==
                CUDA_SUCCESS &&
            pageable == 1;
        // Optional too (only zyfa-check's report reads it): 0 when the driver does not answer.
        int clock_khz = 0;
        if (driver_.cuDeviceGetAttribute(&clock_khz, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, device_) == CUDA_SUCCESS &&
            clock_khz > 0)
            info_.clock_khz = clock_khz;
        info_.arch = "sm_" + std::to_string(info_.compute_major) + std::to_string(info_.compute_minor);
        info_.image_archs = compatible_image_archs(info_.compute_major, info_.compute_minor);
        driver_.check(driver_.cuDevicePrimaryCtxRetain(&context_, device_), "cuDevicePrimaryCtxRetain");
    }

    ~CudaRuntime() override { driver_.cuDevicePrimaryCtxRelease(device_); }

    const char* vendor() const noexcept override { return "nvidia"; }
    const gpu::DeviceInfo& device() const noexcept override { return info_; }

    gpu::ModuleHandle load_module(const void* image, size_t size) override {
        if (image == nullptr || size == 0) throw Error(ZYFA_ERROR_INTERNAL, "load_module: empty image");
        ScopedContext scope(driver_, context_);
        CUmodule module = nullptr;
        driver_.check(driver_.cuModuleLoadData(&module, image), "cuModuleLoadData");
        return module;
    }

    void unload_module(gpu::ModuleHandle module) noexcept override {
        if (module == nullptr) return;
        try {
            ScopedContext scope(driver_, context_);
            driver_.cuModuleUnload(static_cast<CUmodule>(module));
        } catch (...) {
            // Teardown: a driver that cannot make the context current cannot unload either.
        }
    }

    gpu::FunctionHandle get_function(gpu::ModuleHandle module, const char* symbol) override {
        ScopedContext scope(driver_, context_);
        CUfunction function = nullptr;
        driver_.check(driver_.cuModuleGetFunction(&function, static_cast<CUmodule>(module), symbol),
                      (std::string("cuModuleGetFunction(") + symbol + ")").c_str());
        return function;
    }

    void set_max_dynamic_shared_bytes(gpu::FunctionHandle function, uint32_t bytes) override {
        ScopedContext scope(driver_, context_);
        driver_.check(driver_.cuFuncSetAttribute(static_cast<CUfunction>(function),
                                                 CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(bytes)),
                      ("cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES = " + std::to_string(bytes) + ")").c_str());
    }

    gpu::FunctionInfo function_info(gpu::FunctionHandle function) override {
        ScopedContext scope(driver_, context_);
        const CUfunction f = static_cast<CUfunction>(function);
        gpu::FunctionInfo info;
        driver_.check(driver_.cuFuncGetAttribute(&info.registers, CU_FUNC_ATTRIBUTE_NUM_REGS, f),
                      "cuFuncGetAttribute(NUM_REGS)");
        driver_.check(driver_.cuFuncGetAttribute(&info.local_bytes, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, f),
                      "cuFuncGetAttribute(LOCAL_SIZE_BYTES)");
        driver_.check(driver_.cuFuncGetAttribute(&info.static_shared_bytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f),
                      "cuFuncGetAttribute(SHARED_SIZE_BYTES)");
        driver_.check(
            driver_.cuFuncGetAttribute(&info.max_threads_per_block, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f),
            "cuFuncGetAttribute(MAX_THREADS_PER_BLOCK)");
        return info;
    }

    bool encode_tensor_map(void* map, const gpu::TiledTensorMap4d& r) noexcept override {
        if (driver_.cuTensorMapEncodeTiled == nullptr || (r.element_bytes != 1 && r.element_bytes != 2)) return false;
        const uint32_t element_strides[4] = {1, 1, 1, 1};
        constexpr int kInterleaveNone = 0, kL2Promotion128 = 2, kOutOfBoundsZero = 0;
        const int swizzle = r.swizzle_128b ? 3 : 0;  // CU_TENSOR_MAP_SWIZZLE_128B / _NONE
        try {
            // The driver answers CUDA_ERROR_INVALID_CONTEXT without a current context.
            ScopedContext scope(driver_, context_);
            return driver_.cuTensorMapEncodeTiled(map, r.element_bytes == 1 ? 0 : 1, 4, const_cast<void*>(r.base),
                                                  r.dims, r.strides_bytes, r.box, element_strides, kInterleaveNone,
                                                  swizzle, kL2Promotion128, kOutOfBoundsZero) == CUDA_SUCCESS;
        } catch (...) {
            return false;  // no context: the caller launches without maps
        }
    }

    void launch(gpu::FunctionHandle function, gpu::Dim3 grid, gpu::Dim3 block, uint32_t shared_bytes,
                gpu::StreamHandle stream, void** args) override {
        ScopedContext scope(driver_, context_);
        driver_.check(driver_.cuLaunchKernel(static_cast<CUfunction>(function), grid.x, grid.y, grid.z, block.x,
                                             block.y, block.z, shared_bytes, static_cast<CUstream>(stream), args,
                                             nullptr),
                      "cuLaunchKernel");
    }

    void locate_pointers(const void* const* pointers, size_t count, gpu::PointerLocation* out) override {
        ScopedContext scope(driver_, context_);  // DEVICE_POINTER is relative to the current context
        for (size_t i = 0; i < count; ++i) out[i] = locate(pointers[i]);
    }

    // --- test and tool helpers ---

    void* malloc_device(size_t bytes) override {
        ScopedContext scope(driver_, context_);
        CUdeviceptr pointer = 0;
        driver_.check(driver_.cuMemAlloc(&pointer, bytes == 0 ? 1 : bytes),
                      ("cuMemAlloc(" + std::to_string(bytes) + " bytes)").c_str());
        return reinterpret_cast<void*>(static_cast<uintptr_t>(pointer));
    }

    void free_device(void* pointer) noexcept override {
        if (pointer == nullptr) return;
        try {
            ScopedContext scope(driver_, context_);
            driver_.cuMemFree(device_pointer(pointer));
        } catch (...) {
        }
    }

    void copy_to_device(void* device_dst, const void* host_src, size_t bytes) override {
        if (bytes == 0) return;
        ScopedContext scope(driver_, context_);
        driver_.check(driver_.cuMemcpyHtoD(device_pointer(device_dst), host_src, bytes), "cuMemcpyHtoD");
    }

    void copy_to_host(void* host_dst, const void* device_src, size_t bytes) override {
        if (bytes == 0) return;
        ScopedContext scope(driver_, context_);
        driver_.check(driver_.cuMemcpyDtoH(host_dst, device_pointer(device_src), bytes), "cuMemcpyDtoH");
    }

    void fill_device(void* device_dst, uint8_t byte, size_t bytes) override {
        if (bytes == 0) return;
        ScopedContext scope(driver_, context_);
        driver_.check(driver_.cuMemsetD8(device_pointer(device_dst), byte, bytes), "cuMemsetD8");
        driver_.check(driver_.cuCtxSynchronize(), "cuCtxSynchronize");  // helpers are synchronous
    }

    gpu::StreamHandle create_stream() override {
        ScopedContext scope(driver_, context_);
        CUstream stream = nullptr;
        driver_.check(driver_.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
        return stream;
    }

    void destroy_stream(gpu::StreamHandle stream) noexcept override {
        if (stream == nullptr) return;
        try {
            ScopedContext scope(driver_, context_);
            driver_.cuStreamDestroy(static_cast<CUstream>(stream));
        } catch (...) {
        }
    }

    void synchronize_stream(gpu::StreamHandle stream) override {
        ScopedContext scope(driver_, context_);
        driver_.check(driver_.cuStreamSynchronize(static_cast<CUstream>(stream)), "cuStreamSynchronize");
    }

    void synchronize_device() override {
        ScopedContext scope(driver_, context_);
        driver_.check(driver_.cuCtxSynchronize(), "cuCtxSynchronize");
    }

    gpu::EventHandle create_event() override {
        ScopedContext scope(driver_, context_);
        CUevent event = nullptr;
        driver_.check(driver_.cuEventCreate(&event, CU_EVENT_DEFAULT), "cuEventCreate");
        return event;
    }

    void destroy_event(gpu::EventHandle event) noexcept override {
        if (event == nullptr) return;
        try {
            ScopedContext scope(driver_, context_);
            driver_.cuEventDestroy(static_cast<CUevent>(event));
        } catch (...) {
        }
    }

    void record_event(gpu::EventHandle event, gpu::StreamHandle stream) override {
        ScopedContext scope(driver_, context_);
        driver_.check(driver_.cuEventRecord(static_cast<CUevent>(event), static_cast<CUstream>(stream)),
                      "cuEventRecord");
    }

    float elapsed_ms(gpu::EventHandle start, gpu::EventHandle end) override {
        ScopedContext scope(driver_, context_);
        driver_.check(driver_.cuEventSynchronize(static_cast<CUevent>(end)), "cuEventSynchronize");
        float ms = 0.0f;
        driver_.check(driver_.cuEventElapsedTime(&ms, static_cast<CUevent>(start), static_cast<CUevent>(end)),
                      "cuEventElapsedTime");
        return ms;
    }

    void begin_capture(gpu::StreamHandle stream) override {
        ScopedContext scope(driver_, context_);
        driver_.check(driver_.cuStreamBeginCapture(static_cast<CUstream>(stream), CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
                      "cuStreamBeginCapture");
    }

    gpu::GraphHandle end_capture(gpu::StreamHandle stream) override {
        ScopedContext scope(driver_, context_);
        CUgraph graph = nullptr;
        driver_.check(driver_.cuStreamEndCapture(static_cast<CUstream>(stream), &graph), "cuStreamEndCapture");
        return graph;
    }

    gpu::GraphExecHandle instantiate_graph(gpu::GraphHandle graph) override {
        ScopedContext scope(driver_, context_);
        CUgraphExec exec = nullptr;
        driver_.check(driver_.cuGraphInstantiateWithFlags(&exec, static_cast<CUgraph>(graph), 0),
                      "cuGraphInstantiateWithFlags");
        return exec;
    }

    void launch_graph(gpu::GraphExecHandle graph_exec, gpu::StreamHandle stream) override {
        ScopedContext scope(driver_, context_);
        driver_.check(driver_.cuGraphLaunch(static_cast<CUgraphExec>(graph_exec), static_cast<CUstream>(stream)),
                      "cuGraphLaunch");
    }

    void destroy_graph(gpu::GraphHandle graph) noexcept override {
        if (graph == nullptr) return;
        try {
            ScopedContext scope(driver_, context_);
            driver_.cuGraphDestroy(static_cast<CUgraph>(graph));
        } catch (...) {
        }
    }

    void destroy_graph_exec(gpu::GraphExecHandle graph_exec) noexcept override {
        if (graph_exec == nullptr) return;
        try {
            ScopedContext scope(driver_, context_);
            driver_.cuGraphExecDestroy(static_cast<CUgraphExec>(graph_exec));
        } catch (...) {
        }
    }

private:
    // One cuPointerGetAttributes for device memory, the common case; host memory the driver knows
    // (pinned, registered) takes a second one for its device address.
    gpu::PointerLocation locate(const void* pointer) const {
        unsigned memory_type = 0;
        unsigned managed = 0;  // the driver writes a boolean into the low byte
        int ordinal = -1;
        int attributes[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                            CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
        void* values[] = {&memory_type, &managed, &ordinal};
        const CUresult result = driver_.cuPointerGetAttributes(3, attributes, values, device_pointer(pointer));
        // INVALID_VALUE: a driver that reports unknown pointers as cuPointerGetAttribute does.
        if (result == CUDA_ERROR_INVALID_VALUE) memory_type = 0;
        else driver_.check(result, "cuPointerGetAttributes");

        gpu::PointerLocation where;
        if (managed != 0) {
            where.location = gpu::MemoryLocation::AccessibleHost;
        } else if (memory_type == CU_MEMORYTYPE_DEVICE) {
            where.device = ordinal;
            where.location =
                ordinal == info_.ordinal ? gpu::MemoryLocation::ThisDevice : gpu::MemoryLocation::OtherDevice;
        } else if (info_.pageable_memory_access) {
            where.location = gpu::MemoryLocation::AccessibleHost;
        } else if (memory_type == CU_MEMORYTYPE_HOST) {
            // Pinned memory is mapped at its own address under unified addressing; a host pointer
            // without a device mapping (or with another address) is not what a kernel can use.
            CUdeviceptr mapped = 0;
            int attribute = CU_POINTER_ATTRIBUTE_DEVICE_POINTER;
            void* value = &mapped;
            const bool same_address =
                driver_.cuPointerGetAttributes(1, &attribute, &value, device_pointer(pointer)) == CUDA_SUCCESS &&
                mapped == device_pointer(pointer);
            if (same_address) where.location = gpu::MemoryLocation::AccessibleHost;
        }
        return where;
    }

    static CUdeviceptr device_pointer(const void* pointer) {
        return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(pointer));
    }

    const CudaDriver& driver_;
    CUdevice device_ = 0;
    CUcontext context_ = nullptr;
    gpu::DeviceInfo info_;
};

}  // namespace

std::unique_ptr<gpu::GpuRuntime> open_cuda_runtime(int ordinal) {
    if (ordinal < 0) throw_invalid("CUDA device ordinal " + std::to_string(ordinal) + " is negative");
    return std::make_unique<CudaRuntime>(ordinal);
}

}  // namespace cuda
}  // namespace zyfa
