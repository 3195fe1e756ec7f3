// A test double of the HIP runtime (libamdhip64.so) for the host side of the AMD backend, loaded
// through ZYFA_HIP_LIBRARY. It exports the entry points zyfa resolves (the required ones only)
// and behaves as the environment says:
//   FAKE_HIP_DEVICES=<n>        device count (default 1); 0 -> hipGetDeviceCount fails with
//                               hipErrorNoDevice, as ROCm does with no GPU
//   FAKE_HIP_ARCH=<gcnArchName> default "gfx950:sramecc+:xnack-"
//   FAKE_HIP_REJECT_IMAGES=1    hipModuleLoadData fails with hipErrorInvalidImage
// hipModuleLoadData accepts only an AMDGPU HSA ELF whose e_flags processor is the device's;
// hipModuleGetFunction finds the kernel only if the ELF symbol table has both NAME and NAME.kd
// (the kernel descriptor); hipModuleLaunchKernel records the launch and a copy of the argument
// struct. Nothing executes.
// Memory: hipMalloc (device memory of the current device), hipHostMalloc (pinned host memory,
// mapped at its own address) and hipMallocManaged hand out host memory and remember it, so that
// hipPointerGetAttributes answers as ROCm 6 and later do (clr's hip_memory.cpp): any other
// address is hipSuccess with hipMemoryTypeUnregistered (0) and device -1. ROCm 5 answered
// hipErrorInvalidValue instead; the emulator's stand-in (tools/amdgpu-emu/hip_standin) still does,
// so the emu tier covers zyfa's reading of that answer.
#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include <cstdint>
#include <map>
#include <string>

#include "fake_hip_state.h"

#define EXPORT extern "C" __attribute__((visibility("default")))

namespace {

fake_hip_state state;
int current_device = 0;

struct FakeModule {
    const unsigned char* image;
};
struct FakeFunction {
    std::string symbol;
};

// What an allocation is, in ROCm 6's hipMemoryType values.
struct Allocation {
    size_t bytes;
    int type;  // 1 host (pinned), 2 device, 3 managed
    int device;
    int managed;
};
std::map<uintptr_t, Allocation> allocations;

int allocate(void** pointer, size_t bytes, int type, int managed) {
    if (pointer == nullptr) return 1;
    void* p = aligned_alloc(256, (bytes + 255) / 256 * 256 + 256);
    if (p == nullptr) return 2;
    allocations[reinterpret_cast<uintptr_t>(p)] = Allocation{bytes != 0 ? bytes : 1, type, current_device, managed};
    *pointer = p;
    return 0;
}

int env_int(const char* name, int fallback) {
    const char* text = getenv(name);
    return text != nullptr && text[0] != '\0' ? atoi(text) : fallback;
}

std::string device_arch() {
    const char* text = getenv("FAKE_HIP_ARCH");
    return text != nullptr && text[0] != '\0' ? text : "gfx950:sramecc+:xnack-";
}

unsigned mach_of(const std::string& arch) {
    if (arch.compare(0, 6, "gfx950") == 0) return 0x4f;
    if (arch.compare(0, 6, "gfx942") == 0) return 0x4c;
    return 0x41;  // gfx1100
}

bool elf_has_symbol(const unsigned char* image, const std::string& name) {
    const Elf64_Ehdr* header = reinterpret_cast<const Elf64_Ehdr*>(image);
    const Elf64_Shdr* sections = reinterpret_cast<const Elf64_Shdr*>(image + header->e_shoff);
    for (int i = 0; i < header->e_shnum; ++i) {
        if (sections[i].sh_type != SHT_SYMTAB && sections[i].sh_type != SHT_DYNSYM) continue;
        const Elf64_Sym* symbols = reinterpret_cast<const Elf64_Sym*>(image + sections[i].sh_offset);
        const char* names = reinterpret_cast<const char*>(image + sections[sections[i].sh_link].sh_offset);
        const size_t count = sections[i].sh_size / sizeof(Elf64_Sym);
        for (size_t s = 0; s < count; ++s) {
            if (name == names + symbols[s].st_name) return true;
        }
    }
    return false;
}

}  // namespace

EXPORT fake_hip_state* fake_hip_state_record() { return &state; }

EXPORT const char* hipGetErrorString(int error) {
    switch (error) {
        case 0: return "no error";
        case 100: return "no ROCm-capable device is detected";
        case 200: return "device kernel image is invalid";
        case 500: return "named symbol not found";
        default: return "unknown error";
    }
}

EXPORT const char* hipGetErrorName(int error) {
    switch (error) {
        case 0: return "hipSuccess";
        case 100: return "hipErrorNoDevice";
        case 101: return "hipErrorInvalidDevice";
        case 200: return "hipErrorInvalidImage";
        case 500: return "hipErrorNotFound";
        default: return "hipErrorUnknown";
    }
}

EXPORT int hipGetDeviceCount(int* count) {
    *count = env_int("FAKE_HIP_DEVICES", 1);
    return *count == 0 ? 100 : 0;
}

EXPORT int hipGetDevice(int* device) {
    *device = current_device;
    return 0;
}

EXPORT int hipSetDevice(int device) {
    state.set_device_calls++;
    if (device < 0 || device >= env_int("FAKE_HIP_DEVICES", 1)) return 101;
    current_device = device;
    return 0;
}

// Writes the fields zyfa reads at their hipDeviceProp_tR0600 offsets (ROCm 6 hip_runtime_api.h),
// independently of the struct src/hip declares.
EXPORT int hipGetDevicePropertiesR0600(void* props, int device) {
    if (device < 0 || device >= env_int("FAKE_HIP_DEVICES", 1)) return 101;
    unsigned char* p = static_cast<unsigned char*>(props);
    memset(p, 0, 1472);
    strcpy(reinterpret_cast<char*>(p), "AMD Instinct fake");
    const size_t shared = 65536;
    memcpy(p + 296, &shared, sizeof shared);
    const int cus = 256;
    memcpy(p + 388, &cus, sizeof cus);
    strncpy(reinterpret_cast<char*>(p + 1160), device_arch().c_str(), 255);
    return 0;
}

EXPORT int hipModuleLoadData(void** module, const void* image) {
    const unsigned char* e = static_cast<const unsigned char*>(image);
    const Elf64_Ehdr* header = static_cast<const Elf64_Ehdr*>(image);
    const bool code_object = memcmp(e, ELFMAG, SELFMAG) == 0 && e[EI_CLASS] == ELFCLASS64 &&
                             e[EI_OSABI] == 64 /* ELFOSABI_AMDGPU_HSA */ && header->e_machine == 224 /* EM_AMDGPU */ &&
                             (header->e_flags & 0xff) == mach_of(device_arch());
    if (env_int("FAKE_HIP_REJECT_IMAGES", 0) != 0 || !code_object) {
        state.images_rejected++;
        return 200;
    }
    *module = new FakeModule{e};
    state.modules_loaded++;
    return 0;
}

EXPORT int hipModuleUnload(void* module) {
    delete static_cast<FakeModule*>(module);
    state.modules_unloaded++;
    return 0;
}

EXPORT int hipModuleGetFunction(void** function, void* module, const char* name) {
    const FakeModule* m = static_cast<const FakeModule*>(module);
    if (!elf_has_symbol(m->image, name) || !elf_has_symbol(m->image, std::string(name) + ".kd")) {
        state.functions_missing++;
        return 500;
    }
    *function = new FakeFunction{name};  // leaked: functions live as long as their module here
    state.functions_found++;
    return 0;
}

EXPORT int hipModuleLaunchKernel(void* function, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                 unsigned bz, unsigned shared, void* stream, void** params, void** extra) {
    if (params == nullptr || extra != nullptr) return 1;  // hipErrorInvalidValue
    state.previous_launch = state.last_launch;
    fake_hip_launch& launch = state.last_launch;
    memset(&launch, 0, sizeof launch);
    strncpy(launch.symbol, static_cast<FakeFunction*>(function)->symbol.c_str(), sizeof launch.symbol - 1);
    launch.grid[0] = gx;
    launch.grid[1] = gy;
    launch.grid[2] = gz;
    launch.block[0] = bx;
    launch.block[1] = by;
    launch.block[2] = bz;
    launch.shared_bytes = shared;
    launch.stream = stream;
    memcpy(&launch.args, params[0], sizeof launch.args);
    // The attention kernels' second parameter (the HIP C++ kernels' AttnExtraArgs); the library
    // passes a 2-element parameter array to every attention launch.
    if (strncmp(launch.symbol, "zyfa_attn_fwd_", 14) == 0) memcpy(launch.second, params[1], sizeof launch.second);
    state.launches++;
    return 0;
}

EXPORT int hipMalloc(void** pointer, size_t bytes) { return allocate(pointer, bytes, 2, 0); }
EXPORT int hipHostMalloc(void** pointer, size_t bytes, unsigned) { return allocate(pointer, bytes, 1, 0); }
EXPORT int hipMallocManaged(void** pointer, size_t bytes, unsigned) { return allocate(pointer, bytes, 3, 1); }

EXPORT int hipFree(void* pointer) {
    if (pointer == nullptr) return 0;
    if (allocations.erase(reinterpret_cast<uintptr_t>(pointer)) == 0) return 1;
    free(pointer);
    return 0;
}

// hipPointerAttribute_t, transcribed from ROCm 6's hip_runtime_api.h independently of src/hip.
struct FakePointerAttributes {
    int type;
    int device;
    void* devicePointer;
    void* hostPointer;
    int isManaged;
    unsigned allocationFlags;
};

EXPORT int hipPointerGetAttributes(FakePointerAttributes* attributes, const void* pointer) {
    state.pointer_queries++;
    if (attributes == nullptr) return 1;
    memset(attributes, 0, sizeof *attributes);
    const uintptr_t p = reinterpret_cast<uintptr_t>(pointer);
    auto it = allocations.upper_bound(p);
    if (it != allocations.begin()) --it;
    if (it == allocations.end() || p < it->first || p - it->first >= it->second.bytes) {
        attributes->type = 0;  // hipMemoryTypeUnregistered: memory the runtime does not know
        attributes->device = -1;
        return 0;
    }
    attributes->type = it->second.type;
    attributes->device = it->second.device;
    attributes->devicePointer = const_cast<void*>(pointer);
    attributes->hostPointer = it->second.type == 1 || it->second.managed ? const_cast<void*>(pointer) : nullptr;
    attributes->isManaged = it->second.managed;
    return 0;
}
