// A stand-in for the HIP runtime (libamdhip64.so) over the emulator: device memory is host
// memory, a kernel launch runs the grid in the emulator on the calling thread (streams are
// synchronous). It exports exactly the entry points src/hip/hip_api.cpp loads with dlsym.
// Point zyfa at it with ZYFA_HIP_LIBRARY=<path to libzyfa_hip_standin.so>.
//
// Environment:
//   ZYFA_EMU_ARCH     gfx950 (default) or gfx942: the device's gcnArchName
//   ZYFA_EMU_SEED     scheduling seed (default 1)
//   ZYFA_EMU_THREADS  host threads for the workgroups of a grid (default: all cores)
// A fault found by the emulator (hazard, early read, out-of-bounds, unknown instruction) fails
// the launch with hipErrorLaunchFailure and prints the emulator's message to stderr;
// zyfa_emu_last_error() returns it.
#include <sys/mman.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "code_object.hpp"
#include "emu_error.hpp"
#include "runner.hpp"

namespace {

using zyfa::emu::Arch;
using zyfa::emu::CodeObject;
using zyfa::emu::EmuError;
using zyfa::emu::Kernel;

typedef int hipError_t;
constexpr hipError_t hipSuccess = 0;
constexpr hipError_t hipErrorInvalidValue = 1;
constexpr hipError_t hipErrorOutOfMemory = 2;
constexpr hipError_t hipErrorInvalidDevice = 101;
constexpr hipError_t hipErrorInvalidImage = 200;
constexpr hipError_t hipErrorNoBinaryForGpu = 209;
constexpr hipError_t hipErrorNotFound = 500;
constexpr hipError_t hipErrorLaunchFailure = 719;
constexpr hipError_t hipErrorNotSupported = 801;

struct Module {
    std::shared_ptr<CodeObject> object;
};
struct Function {
    std::shared_ptr<CodeObject> object;
    const Kernel* kernel;
};
struct Event {
    std::chrono::steady_clock::time_point when;
};

std::mutex g_mutex;
std::map<uintptr_t, size_t> g_allocations;

// Allocations from this size on are sparse: reserved address space whose pages the host maps on
// first touch (MAP_NORESERVE), so a test can place heads, batches or rows more than 4 GiB apart
// while touching a few MB. Their untouched bytes read as 0, not 0xA5 (filling would map them all).
constexpr size_t kSparseAllocationBytes = size_t{256} << 20;

size_t rounded_allocation(size_t bytes) { return ((bytes ? bytes : 1) + 255) / 256 * 256; }
std::string g_last_error;
thread_local hipError_t g_thread_error = hipSuccess;

Arch device_arch() {
    const char* env = std::getenv("ZYFA_EMU_ARCH");
    return env && std::strcmp(env, "gfx942") == 0 ? Arch::Gfx942 : Arch::Gfx950;
}

hipError_t record(hipError_t e) {
    g_thread_error = e;
    return e;
}

void fail_message(const std::string& message) {
    {
        std::lock_guard<std::mutex> lock(g_mutex);
        g_last_error = message;
    }
    std::fprintf(stderr, "zyfa HIP stand-in (emulator): %s\n", message.c_str());
}

// Kernarg segment from kernelParams (one pointer per explicit argument, in metadata order) plus
// the hidden arguments the emulator can give meaning to.
bool build_kernarg(const Kernel& k, void** params, void** extra, const uint32_t grid[3], const uint32_t block[3],
                   std::vector<uint8_t>& out) {
    const size_t size = std::max<size_t>(k.kernarg_segment_size, k.descriptor.kernarg_size);
    out.assign(size, 0);
    if (extra) {
        // HIP_LAUNCH_PARAM_BUFFER_POINTER (1), _SIZE (2), _END (3).
        const void* buffer = nullptr;
        size_t bytes = 0;
        for (int i = 0; extra[i] != reinterpret_cast<void*>(3); i += 2) {
            if (extra[i] == reinterpret_cast<void*>(1)) buffer = extra[i + 1];
            if (extra[i] == reinterpret_cast<void*>(2)) bytes = *static_cast<size_t*>(extra[i + 1]);
        }
        if (!buffer || bytes > size) return false;
        std::memcpy(out.data(), buffer, bytes);
        return true;
    }
    if (!params && !k.args.empty()) return false;
    int explicit_index = 0;
    for (const auto& a : k.args) {
        if (a.offset + a.size > size) return false;
        uint8_t* dst = out.data() + a.offset;
        auto put = [&](uint64_t v) { std::memcpy(dst, &v, std::min<uint32_t>(a.size, 8)); };
        const std::string& kind = a.value_kind;
        if (kind.rfind("hidden_", 0) != 0) {
            std::memcpy(dst, params[explicit_index++], a.size);
        } else if (kind == "hidden_block_count_x") {
            put(grid[0]);
        } else if (kind == "hidden_block_count_y") {
            put(grid[1]);
        } else if (kind == "hidden_block_count_z") {
            put(grid[2]);
        } else if (kind == "hidden_group_size_x") {
            put(block[0]);
        } else if (kind == "hidden_group_size_y") {
            put(block[1]);
        } else if (kind == "hidden_group_size_z") {
            put(block[2]);
        } else if (kind == "hidden_grid_dims") {
            put(grid[2] > 1 ? 3 : grid[1] > 1 ? 2 : 1);
        }  // other hidden arguments (printf buffer, queue, ...) stay zero
    }
    return true;
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) const char* zyfa_emu_last_error() {
    std::lock_guard<std::mutex> lock(g_mutex);
    static thread_local std::string copy;
    copy = g_last_error;
    return copy.c_str();
}

__attribute__((visibility("default"))) const char* hipGetErrorName(hipError_t e) {
    switch (e) {
        case hipSuccess: return "hipSuccess";
        case hipErrorInvalidValue: return "hipErrorInvalidValue";
        case hipErrorOutOfMemory: return "hipErrorOutOfMemory";
        case hipErrorInvalidDevice: return "hipErrorInvalidDevice";
        case hipErrorInvalidImage: return "hipErrorInvalidImage";
        case hipErrorNoBinaryForGpu: return "hipErrorNoBinaryForGpu";
        case hipErrorNotFound: return "hipErrorNotFound";
        case hipErrorLaunchFailure: return "hipErrorLaunchFailure";
        case hipErrorNotSupported: return "hipErrorNotSupported";
        default: return "hipErrorUnknown";
    }
}

__attribute__((visibility("default"))) const char* hipGetErrorString(hipError_t e) {
    if (e == hipErrorLaunchFailure) return "kernel fault found by the zyfa ISA emulator (see stderr)";
    return hipGetErrorName(e);
}

__attribute__((visibility("default"))) hipError_t hipGetDeviceCount(int* count) {
    if (!count) return record(hipErrorInvalidValue);
    *count = 1;
    return hipSuccess;
}
__attribute__((visibility("default"))) hipError_t hipGetDevice(int* device) {
    if (!device) return record(hipErrorInvalidValue);
    *device = 0;
    return hipSuccess;
}
__attribute__((visibility("default"))) hipError_t hipSetDevice(int device) {
    return device == 0 ? hipSuccess : record(hipErrorInvalidDevice);
}

// The ROCm 6+ hipDeviceProp_t: name at 0, sharedMemPerBlock at 296, multiProcessorCount at 388,
// gcnArchName at 1160 (the offsets src/hip/hip_api.hpp reads).
__attribute__((visibility("default"))) hipError_t hipGetDevicePropertiesR0600(void* props, int device) {
    if (!props || device != 0) return record(hipErrorInvalidValue);
    std::memset(props, 0, 1472);
    const bool gfx950 = device_arch() == Arch::Gfx950;
    char* p = static_cast<char*>(props);
    std::snprintf(p, 256, "%s", gfx950 ? "zyfa emulated MI355X (gfx950)" : "zyfa emulated MI300X (gfx942)");
    const size_t shared = gfx950 ? 163840 : 65536;
    std::memcpy(p + 296, &shared, sizeof shared);
    const int cus = gfx950 ? 256 : 304;
    std::memcpy(p + 388, &cus, sizeof cus);
    std::snprintf(p + 1160, 256, "%s", gfx950 ? "gfx950:sramecc+:xnack-" : "gfx942:sramecc+:xnack-");
    return hipSuccess;
}

// hipDeviceAttributeClockRate (5): AMD's published peak engine clock of the part the stand-in
// names, MI355X 2,400 MHz, MI300X 2,100 MHz (kHz, as ROCm reports it), so zyfa-check's estimate
// column has a clock on the emulated device; nothing is timed at that clock. Pageable memory
// access (65): no, as when the attribute is missing. Any other attribute: hipErrorInvalidValue.
__attribute__((visibility("default"))) hipError_t hipDeviceGetAttribute(int* value, int attribute, int device) {
    if (!value || device != 0) return record(hipErrorInvalidValue);
    if (attribute == 5) {
        *value = device_arch() == Arch::Gfx950 ? 2400000 : 2100000;
        return hipSuccess;
    }
    if (attribute == 65) {
        *value = 0;
        return hipSuccess;
    }
    return record(hipErrorInvalidValue);
}

__attribute__((visibility("default"))) hipError_t hipModuleLoadData(void** module, const void* image) {
    if (!module || !image) return record(hipErrorInvalidValue);
    // The image is an ELF: its size is the end of the section header table.
    const uint8_t* bytes = static_cast<const uint8_t*>(image);
    uint64_t shoff;
    uint16_t shentsize, shnum;
    std::memcpy(&shoff, bytes + 0x28, 8);
    std::memcpy(&shentsize, bytes + 0x3a, 2);
    std::memcpy(&shnum, bytes + 0x3c, 2);
    const size_t size = shoff + size_t(shentsize) * shnum;
    try {
        auto object = CodeObject::load(image, size);
        if (object->arch() != device_arch()) {
            fail_message(std::string("code object is for ") + zyfa::emu::arch_name(object->arch()) +
                         ", the emulated device is " + zyfa::emu::arch_name(device_arch()));
            return record(hipErrorNoBinaryForGpu);
        }
        *module = new Module{object};
        return hipSuccess;
    } catch (const std::exception& e) {
        fail_message(e.what());
        return record(hipErrorInvalidImage);
    }
}

__attribute__((visibility("default"))) hipError_t hipModuleUnload(void* module) {
    delete static_cast<Module*>(module);
    return hipSuccess;
}

__attribute__((visibility("default"))) hipError_t hipModuleGetFunction(void** function, void* module,
                                                                        const char* name) {
    if (!function || !module || !name) return record(hipErrorInvalidValue);
    Module* m = static_cast<Module*>(module);
    const Kernel* k = m->object->find_kernel(name);
    if (!k) return record(hipErrorNotFound);
    *function = new Function{m->object, k};  // owned by the module's lifetime in HIP; leaked here
    return hipSuccess;
}

__attribute__((visibility("default"))) hipError_t hipFuncGetAttribute(int* value, int attribute, void* function) {
    if (!value || !function) return record(hipErrorInvalidValue);
    const Kernel& k = *static_cast<Function*>(function)->kernel;
    switch (attribute) {
        case 0: *value = k.max_flat_workgroup_size ? int(k.max_flat_workgroup_size) : 1024; return hipSuccess;
        case 1: *value = int(k.descriptor.group_segment_fixed_size); return hipSuccess;
        case 3: *value = int(k.descriptor.private_segment_fixed_size); return hipSuccess;
        case 4: *value = k.descriptor.total_vgprs; return hipSuccess;
        default: return record(hipErrorNotSupported);
    }
}

__attribute__((visibility("default"))) hipError_t hipModuleLaunchKernel(void* function, unsigned gx, unsigned gy,
                                                                         unsigned gz, unsigned bx, unsigned by,
                                                                         unsigned bz, unsigned shared, void*,
                                                                         void** params, void** extra) {
    if (!function || gx == 0 || gy == 0 || gz == 0 || bx == 0 || by == 0 || bz == 0 || bx * by * bz > 1024) {
        return record(hipErrorInvalidValue);
    }
    const Function& f = *static_cast<Function*>(function);
    zyfa::emu::LaunchConfig config;
    config.grid[0] = gx;
    config.grid[1] = gy;
    config.grid[2] = gz;
    config.block[0] = bx;
    config.block[1] = by;
    config.block[2] = bz;
    config.dynamic_lds = shared;
    if (const char* seed = std::getenv("ZYFA_EMU_SEED")) config.seed = std::strtoull(seed, nullptr, 0);
    if (!build_kernarg(*f.kernel, params, extra, config.grid, config.block, config.kernarg)) {
        return record(hipErrorInvalidValue);
    }
    {
        std::lock_guard<std::mutex> lock(g_mutex);
        for (const auto& a : g_allocations) config.memory.push_back(zyfa::emu::MemoryRange{a.first, a.second, true});
    }
    try {
        zyfa::emu::run_kernel(*f.object, *f.kernel, config);
    } catch (const std::exception& e) {
        fail_message(std::string("kernel ") + f.kernel->name + ": " + e.what());
        return record(hipErrorLaunchFailure);
    }
    return hipSuccess;
}

__attribute__((visibility("default"))) hipError_t hipMalloc(void** pointer, size_t bytes) {
    if (!pointer) return record(hipErrorInvalidValue);
    const size_t rounded = rounded_allocation(bytes);
    void* p = nullptr;
    if (rounded >= kSparseAllocationBytes) {
        p = mmap(nullptr, rounded, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED) return record(hipErrorOutOfMemory);
    } else {
        p = std::aligned_alloc(256, rounded);
        if (!p) return record(hipErrorOutOfMemory);
        std::memset(p, 0xA5, rounded);  // not zero: kernels must not rely on fresh memory being 0
    }
    std::lock_guard<std::mutex> lock(g_mutex);
    g_allocations[reinterpret_cast<uintptr_t>(p)] = bytes ? bytes : 1;
    *pointer = p;
    return hipSuccess;
}

__attribute__((visibility("default"))) hipError_t hipFree(void* pointer) {
    if (!pointer) return hipSuccess;
    std::lock_guard<std::mutex> lock(g_mutex);
    auto it = g_allocations.find(reinterpret_cast<uintptr_t>(pointer));
    if (it == g_allocations.end()) return record(hipErrorInvalidValue);
    const size_t rounded = rounded_allocation(it->second);
    g_allocations.erase(it);
    if (rounded >= kSparseAllocationBytes) {
        munmap(pointer, rounded);
    } else {
        std::free(pointer);
    }
    return hipSuccess;
}

// hipPointerAttribute_t as ROCm 6 lays it out (the stand-in exports hipGetDevicePropertiesR0600,
// so zyfa reads ROCm 6's hipMemoryType values: 2 = device).
struct PointerAttributes {
    int type;
    int device;
    void* device_pointer;
    void* host_pointer;
    int is_managed;
    unsigned allocation_flags;
};

// Device memory is what hipMalloc handed out (anywhere inside a block); anything else is host
// memory the emulated device cannot read, answered as ROCm 5 does (hipErrorInvalidValue). ROCm 6
// and later answer hipSuccess with hipMemoryTypeUnregistered; the fake runtime of tests/amd gives
// that answer, so zyfa's reading of both is tested (docs/hip-runtime.md). Only looks.
__attribute__((visibility("default"))) hipError_t hipPointerGetAttributes(PointerAttributes* attributes,
                                                                           const void* pointer) {
    if (!attributes) return record(hipErrorInvalidValue);
    const uintptr_t p = reinterpret_cast<uintptr_t>(pointer);
    std::lock_guard<std::mutex> lock(g_mutex);
    auto it = g_allocations.upper_bound(p);
    if (it == g_allocations.begin()) return record(hipErrorInvalidValue);
    --it;
    if (p - it->first >= it->second) return record(hipErrorInvalidValue);
    *attributes = PointerAttributes{2, 0, const_cast<void*>(pointer), nullptr, 0, 0};
    return hipSuccess;
}

__attribute__((visibility("default"))) hipError_t hipMemcpy(void* dst, const void* src, size_t bytes, int) {
    if (bytes && (!dst || !src)) return record(hipErrorInvalidValue);
    std::memmove(dst, src, bytes);
    return hipSuccess;
}

__attribute__((visibility("default"))) hipError_t hipMemset(void* dst, int value, size_t bytes) {
    if (bytes && !dst) return record(hipErrorInvalidValue);
    std::memset(dst, value, bytes);
    return hipSuccess;
}

__attribute__((visibility("default"))) hipError_t hipDeviceSynchronize() { return hipSuccess; }

__attribute__((visibility("default"))) hipError_t hipStreamCreateWithFlags(void** stream, unsigned) {
    if (!stream) return record(hipErrorInvalidValue);
    *stream = new int(0);
    return hipSuccess;
}
__attribute__((visibility("default"))) hipError_t hipStreamDestroy(void* stream) {
    delete static_cast<int*>(stream);
    return hipSuccess;
}
__attribute__((visibility("default"))) hipError_t hipStreamSynchronize(void*) { return hipSuccess; }

__attribute__((visibility("default"))) hipError_t hipEventCreate(void** event) {
    if (!event) return record(hipErrorInvalidValue);
    *event = new Event{std::chrono::steady_clock::now()};
    return hipSuccess;
}
__attribute__((visibility("default"))) hipError_t hipEventDestroy(void* event) {
    delete static_cast<Event*>(event);
    return hipSuccess;
}
__attribute__((visibility("default"))) hipError_t hipEventRecord(void* event, void*) {
    if (!event) return record(hipErrorInvalidValue);
    static_cast<Event*>(event)->when = std::chrono::steady_clock::now();
    return hipSuccess;
}
__attribute__((visibility("default"))) hipError_t hipEventSynchronize(void*) { return hipSuccess; }
__attribute__((visibility("default"))) hipError_t hipEventElapsedTime(float* ms, void* start, void* end) {
    if (!ms || !start || !end) return record(hipErrorInvalidValue);
    *ms = std::chrono::duration<float, std::milli>(static_cast<Event*>(end)->when - static_cast<Event*>(start)->when)
              .count();
    return hipSuccess;
}

}  // extern "C"
