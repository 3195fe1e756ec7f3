#include "hip_runtime.hpp"

#include <cstring>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "hip_api.hpp"

namespace zyfa {
namespace hip {
namespace {

// Makes `device` current on this thread for one scope and restores the caller's device, so a zyfa
// call never changes which device the caller's thread works on.
class ScopedDevice {
public:
    ScopedDevice(const HipApi& api, int device) : api_(api) {
        api_.check(api_.hipGetDevice(&previous_), "hipGetDevice");
        if (previous_ != device) {
            api_.check(api_.hipSetDevice(device), "hipSetDevice");
            switched_ = true;
        }
    }
    ~ScopedDevice() {
        if (switched_) api_.hipSetDevice(previous_);  // a device that was current stays valid
    }
    ScopedDevice(const ScopedDevice&) = delete;
    ScopedDevice& operator=(const ScopedDevice&) = delete;

private:
    const HipApi& api_;
    int previous_ = 0;
    bool switched_ = false;
};

bool means_no_device(hipError_t result) {
    return result == hipErrorNoDevice || result == hipErrorInsufficientDriver || result == hipErrorNotInitialized ||
           result == hipErrorInvalidDevice;
}

// A NUL-terminated string of at most `size` bytes inside the property buffer.
std::string read_text(const unsigned char* props, size_t offset, size_t size) {
    const char* text = reinterpret_cast<const char*>(props + offset);
    return std::string(text, strnlen(text, size));
}

template <class T>
T read_value(const unsigned char* props, size_t offset) {
    T value;
    std::memcpy(&value, props + offset, sizeof(T));
    return value;
}

// The "gfx" processor number after the prefix, e.g. 9.5.0 for gfx950 (hex digits, as in gfx90a).
void parse_gfx_version(const std::string& arch, int& major, int& minor) {
    const std::string digits = arch.substr(3);
    major = minor = 0;
    if (digits.size() < 3) return;
    major = std::stoi(digits.substr(0, digits.size() - 2));
    minor = std::stoi(digits.substr(digits.size() - 2, 1), nullptr, 16);
}

class HipRuntime final : public gpu::GpuRuntime {
public:
    explicit HipRuntime(int ordinal) : api_(HipApi::get()), device_(ordinal) {
        int count = 0;
        const hipError_t counted = api_.hipGetDeviceCount(&count);
        // Without an AMD GPU the runtime answers hipErrorNoDevice with a count of 0 (ROCm 5.2.3,
        // measured on a machine without /dev/kfd; docs/hip-runtime.md), which is NO_DEVICE, so AUTO
        // moves on to the next backend.
        if (counted != hipSuccess) {
            std::string why = "hipGetDeviceCount (" + api_.library + "): " + api_.describe(counted);
            if (counted == hipErrorNoDevice) {
                why += ": this HIP runtime sees no AMD GPU it can use (none here, /dev/kfd not accessible, or a GPU "
                       "newer than this ROCm)";
            }
            throw Error(means_no_device(counted) ? ZYFA_ERROR_NO_DEVICE : ZYFA_ERROR_DEVICE, why);
        }
        if (ordinal >= count) {
            throw Error(ZYFA_ERROR_NO_DEVICE, "options.device = " + std::to_string(ordinal) + " but the HIP runtime (" +
                                                  api_.library + ") sees " + std::to_string(count) + " device(s)");
        }
        std::vector<unsigned char> props(kDevicePropBufferBytes, 0);
        api_.check(api_.hipGetDeviceProperties(props.data(), ordinal), "hipGetDeviceProperties");
        const DevicePropLayout& layout = api_.props_layout;
        const std::string gcn_arch_name = read_text(props.data(), layout.gcn_arch_name, 256);
        info_.ordinal = ordinal;
        info_.name = read_text(props.data(), layout.name, 256);
        info_.arch = arch_without_features(gcn_arch_name);
        if (info_.arch.compare(0, 3, "gfx") != 0 || info_.arch.size() < 6) {
            throw Error(ZYFA_ERROR_DEVICE, "hipGetDeviceProperties (" + api_.library + ") reports gcnArchName \"" +
                                               gcn_arch_name + "\", which is not a gfx target");
        }
        info_.image_archs = {info_.arch};
        parse_gfx_version(info_.arch, info_.compute_major, info_.compute_minor);
        info_.multiprocessors = read_value<int>(props.data(), layout.multi_processor_count);
        const size_t shared = read_value<size_t>(props.data(), layout.shared_mem_per_block);
        info_.max_shared_bytes_per_block = shared > 0x7FFFFFFF ? 0x7FFFFFFF : static_cast<int>(shared);
        int pageable = 0;
        info_.pageable_memory_access =
            api_.hipDeviceGetAttribute != nullptr &&
            api_.hipDeviceGetAttribute(&pageable, hipDeviceAttributePageableMemoryAccess, ordinal) == hipSuccess &&
            pageable == 1;
        int clock_khz = 0;
        if (api_.hipDeviceGetAttribute != nullptr &&
            api_.hipDeviceGetAttribute(&clock_khz, hipDeviceAttributeClockRate, ordinal) == hipSuccess && clock_khz > 0)
            info_.clock_khz = clock_khz;
    }

    const char* vendor() const noexcept override { return "amd"; }
    const gpu::DeviceInfo& device() const noexcept override { return info_; }

    gpu::ModuleHandle load_module(const void* image, size_t size) override {
        if (image == nullptr || size == 0) throw Error(ZYFA_ERROR_INTERNAL, "load_module: empty image");
        ScopedDevice scope(api_, device_);
        hipModule_t module = nullptr;
        api_.check(api_.hipModuleLoadData(&module, image), "hipModuleLoadData");
        return module;
    }

    void unload_module(gpu::ModuleHandle module) noexcept override {
        if (module == nullptr) return;
        try {
            ScopedDevice scope(api_, device_);
            api_.hipModuleUnload(static_cast<hipModule_t>(module));
        } catch (...) {
            // Teardown: a runtime that cannot select the device cannot unload either.
        }
    }

    gpu::FunctionHandle get_function(gpu::ModuleHandle module, const char* symbol) override {
        ScopedDevice scope(api_, device_);
        hipFunction_t function = nullptr;
        api_.check(api_.hipModuleGetFunction(&function, static_cast<hipModule_t>(module), symbol),
                   (std::string("hipModuleGetFunction(") + symbol + ")").c_str());
        return function;
    }

    // The AMD kernels use static LDS only (its size is in the code object), so there is no
    // dynamic limit to raise.
    void set_max_dynamic_shared_bytes(gpu::FunctionHandle, uint32_t) override {}

    gpu::FunctionInfo function_info(gpu::FunctionHandle function) override {
        gpu::FunctionInfo info;
        if (api_.hipFuncGetAttribute == nullptr) return info;
        ScopedDevice scope(api_, device_);
        const hipFunction_t f = static_cast<hipFunction_t>(function);
        api_.check(api_.hipFuncGetAttribute(&info.registers, HIP_FUNC_ATTRIBUTE_NUM_REGS, f),
                   "hipFuncGetAttribute(NUM_REGS)");
        api_.check(api_.hipFuncGetAttribute(&info.local_bytes, HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, f),
                   "hipFuncGetAttribute(LOCAL_SIZE_BYTES)");
        api_.check(api_.hipFuncGetAttribute(&info.static_shared_bytes, HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f),
                   "hipFuncGetAttribute(SHARED_SIZE_BYTES)");
        api_.check(api_.hipFuncGetAttribute(&info.max_threads_per_block, HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f),
                   "hipFuncGetAttribute(MAX_THREADS_PER_BLOCK)");
        return info;
    }

    void launch(gpu::FunctionHandle function, gpu::Dim3 grid, gpu::Dim3 block, uint32_t shared_bytes,
                gpu::StreamHandle stream, void** args) override {
        ScopedDevice scope(api_, device_);
        api_.check(api_.hipModuleLaunchKernel(static_cast<hipFunction_t>(function), grid.x, grid.y, grid.z, block.x,
                                              block.y, block.z, shared_bytes, static_cast<hipStream_t>(stream), args,
                                              nullptr),
                   "hipModuleLaunchKernel");
    }

    // hipPointerGetAttributes does not depend on the current device, so no ScopedDevice.
    void locate_pointers(const void* const* pointers, size_t count, gpu::PointerLocation* out) override {
        for (size_t i = 0; i < count; ++i) out[i] = locate(pointers[i]);
    }

    // --- test and tool helpers ---

    void* malloc_device(size_t bytes) override {
        ScopedDevice scope(api_, device_);
        void* pointer = nullptr;
        api_.check(need(api_.hipMalloc, "hipMalloc")(&pointer, bytes == 0 ? 1 : bytes),
                   ("hipMalloc(" + std::to_string(bytes) + " bytes)").c_str());
        return pointer;
    }

    void free_device(void* pointer) noexcept override {
        if (pointer == nullptr || api_.hipFree == nullptr) return;
        try {
            ScopedDevice scope(api_, device_);
            api_.hipFree(pointer);
        } catch (...) {
        }
    }

    void copy_to_device(void* device_dst, const void* host_src, size_t bytes) override {
        if (bytes == 0) return;
        ScopedDevice scope(api_, device_);
        api_.check(need(api_.hipMemcpy, "hipMemcpy")(device_dst, host_src, bytes, hipMemcpyHostToDevice),
                   "hipMemcpy(HostToDevice)");
    }

    void copy_to_host(void* host_dst, const void* device_src, size_t bytes) override {
        if (bytes == 0) return;
        ScopedDevice scope(api_, device_);
        api_.check(need(api_.hipMemcpy, "hipMemcpy")(host_dst, device_src, bytes, hipMemcpyDeviceToHost),
                   "hipMemcpy(DeviceToHost)");
    }

    void fill_device(void* device_dst, uint8_t byte, size_t bytes) override {
        if (bytes == 0) return;
        ScopedDevice scope(api_, device_);
        api_.check(need(api_.hipMemset, "hipMemset")(device_dst, byte, bytes), "hipMemset");
        api_.check(need(api_.hipDeviceSynchronize, "hipDeviceSynchronize")(), "hipDeviceSynchronize");
    }

    gpu::StreamHandle create_stream() override {
        ScopedDevice scope(api_, device_);
        hipStream_t stream = nullptr;
        api_.check(need(api_.hipStreamCreateWithFlags, "hipStreamCreateWithFlags")(&stream, hipStreamNonBlocking),
                   "hipStreamCreateWithFlags");
        return stream;
    }

    void destroy_stream(gpu::StreamHandle stream) noexcept override {
        if (stream == nullptr || api_.hipStreamDestroy == nullptr) return;
        try {
            ScopedDevice scope(api_, device_);
            api_.hipStreamDestroy(static_cast<hipStream_t>(stream));
        } catch (...) {
        }
    }

    void synchronize_stream(gpu::StreamHandle stream) override {
        ScopedDevice scope(api_, device_);
        api_.check(need(api_.hipStreamSynchronize, "hipStreamSynchronize")(static_cast<hipStream_t>(stream)),
                   "hipStreamSynchronize");
    }

    void synchronize_device() override {
        ScopedDevice scope(api_, device_);
        api_.check(need(api_.hipDeviceSynchronize, "hipDeviceSynchronize")(), "hipDeviceSynchronize");
    }

    gpu::EventHandle create_event() override {
        ScopedDevice scope(api_, device_);
        hipEvent_t event = nullptr;
        api_.check(need(api_.hipEventCreate, "hipEventCreate")(&event), "hipEventCreate");
        return event;
    }

    void destroy_event(gpu::EventHandle event) noexcept override {
        if (event == nullptr || api_.hipEventDestroy == nullptr) return;
        try {
            ScopedDevice scope(api_, device_);
            api_.hipEventDestroy(static_cast<hipEvent_t>(event));
        } catch (...) {
        }
    }

    void record_event(gpu::EventHandle event, gpu::StreamHandle stream) override {
        ScopedDevice scope(api_, device_);
        api_.check(need(api_.hipEventRecord, "hipEventRecord")(static_cast<hipEvent_t>(event),
                                                                static_cast<hipStream_t>(stream)),
                   "hipEventRecord");
    }

    float elapsed_ms(gpu::EventHandle start, gpu::EventHandle end) override {
        ScopedDevice scope(api_, device_);
        api_.check(need(api_.hipEventSynchronize, "hipEventSynchronize")(static_cast<hipEvent_t>(end)),
                   "hipEventSynchronize");
        float ms = 0.0f;
        api_.check(need(api_.hipEventElapsedTime, "hipEventElapsedTime")(&ms, static_cast<hipEvent_t>(start),
                                                                          static_cast<hipEvent_t>(end)),
                   "hipEventElapsedTime");
        return ms;
    }

    void begin_capture(gpu::StreamHandle stream) override {
        ScopedDevice scope(api_, device_);
        api_.check(need(api_.hipStreamBeginCapture, "hipStreamBeginCapture")(static_cast<hipStream_t>(stream),
                                                                              hipStreamCaptureModeThreadLocal),
                   "hipStreamBeginCapture");
    }

    gpu::GraphHandle end_capture(gpu::StreamHandle stream) override {
        ScopedDevice scope(api_, device_);
        hipGraph_t graph = nullptr;
        api_.check(need(api_.hipStreamEndCapture, "hipStreamEndCapture")(static_cast<hipStream_t>(stream), &graph),
                   "hipStreamEndCapture");
        return graph;
    }

    gpu::GraphExecHandle instantiate_graph(gpu::GraphHandle graph) override {
        ScopedDevice scope(api_, device_);
        hipGraphExec_t exec = nullptr;
        api_.check(need(api_.hipGraphInstantiate, "hipGraphInstantiate")(&exec, static_cast<hipGraph_t>(graph), nullptr,
                                                                          nullptr, 0),
                   "hipGraphInstantiate");
        return exec;
    }

    void launch_graph(gpu::GraphExecHandle graph_exec, gpu::StreamHandle stream) override {
        ScopedDevice scope(api_, device_);
        api_.check(need(api_.hipGraphLaunch, "hipGraphLaunch")(static_cast<hipGraphExec_t>(graph_exec),
                                                                static_cast<hipStream_t>(stream)),
                   "hipGraphLaunch");
    }

    void destroy_graph(gpu::GraphHandle graph) noexcept override {
        if (graph != nullptr && api_.hipGraphDestroy != nullptr) api_.hipGraphDestroy(static_cast<hipGraph_t>(graph));
    }

    void destroy_graph_exec(gpu::GraphExecHandle graph_exec) noexcept override {
        if (graph_exec != nullptr && api_.hipGraphExecDestroy != nullptr) {
            api_.hipGraphExecDestroy(static_cast<hipGraphExec_t>(graph_exec));
        }
    }

private:
    gpu::PointerLocation locate(const void* pointer) const {
        HipPointerAttributes attributes{};
        const hipError_t result = api_.hipPointerGetAttributes(&attributes, pointer);
        gpu::PointerLocation where;
        // Memory the runtime does not know (unregistered host memory): ROCm 5 answers
        // hipErrorInvalidValue; ROCm 6+ answer hipSuccess with hipMemoryTypeUnregistered (0), which
        // is neither types.host nor types.device below, so both end up in the same place.
        if (result == hipErrorInvalidValue) {
            if (info_.pageable_memory_access) where.location = gpu::MemoryLocation::AccessibleHost;
            return where;
        }
        api_.check(result, "hipPointerGetAttributes");
        const HipMemoryTypes& types = api_.memory_types;
        if (attributes.is_managed != 0) {
            where.location = gpu::MemoryLocation::AccessibleHost;
        } else if (attributes.type == types.device) {
            where.device = attributes.device;
            where.location =
                attributes.device == device_ ? gpu::MemoryLocation::ThisDevice : gpu::MemoryLocation::OtherDevice;
        } else if (info_.pageable_memory_access ||
                   (attributes.type == types.host && attributes.device_pointer == pointer)) {
            // Pinned (hipHostMalloc, hipHostRegister) memory mapped at its own address.
            where.location = gpu::MemoryLocation::AccessibleHost;
        }
        return where;
    }

    // An optional helper entry point, or NOT_SUPPORTED naming it.
    template <class Function>
    Function need(Function function, const char* name) const {
        if (function == nullptr) {
            throw_not_supported(std::string("the HIP runtime ") + api_.library + " has no " + name);
        }
        return function;
    }

    const HipApi& api_;
    int device_;
    gpu::DeviceInfo info_;
};

}  // namespace

std::unique_ptr<gpu::GpuRuntime> open_hip_runtime(int ordinal) { return std::make_unique<HipRuntime>(ordinal); }

}  // namespace hip
}  // namespace zyfa
