#include "context_factory.hpp"

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <string>

#include "cpu/cpu_backend.hpp"
#include "cuda/cuda_backend.hpp"
#include "errors.hpp"
#include "hip/hip_backend.hpp"
#include "log.hpp"
#include "versioned_struct.hpp"

namespace zyfa {
namespace {

struct BackendSlot {
    zyfa_backend kind;
    const char* name;        // for messages: "HIP"
    const char* build_name;  // for zyfa_build_info: "hip"
    // Null when the backend is not compiled into this build.
    std::unique_ptr<Backend> (*create)(const zyfa_context_options& options);
};

std::unique_ptr<Backend> create_cpu(const zyfa_context_options& options) {
    return cpu::make_cpu_backend(options.num_threads);
}

#ifdef ZYFA_WITH_HIP
std::unique_ptr<Backend> create_hip(const zyfa_context_options& options) {
    return hip::make_hip_backend(options.device);
}
constexpr auto kCreateHip = &create_hip;
#else
constexpr std::unique_ptr<Backend> (*kCreateHip)(const zyfa_context_options&) = nullptr;
#endif

#ifdef ZYFA_WITH_CUDA
std::unique_ptr<Backend> create_cuda(const zyfa_context_options& options) {
    return cuda::make_cuda_backend(options.device);
}
constexpr auto kCreateCuda = &create_cuda;
#else
constexpr std::unique_ptr<Backend> (*kCreateCuda)(const zyfa_context_options&) = nullptr;
#endif

// The order AUTO tries. The GPU backends fill their slots when they are compiled in.
constexpr BackendSlot kBackendSlots[] = {
    {ZYFA_BACKEND_HIP, "HIP", "hip", kCreateHip},
    {ZYFA_BACKEND_CUDA, "CUDA", "cuda", kCreateCuda},
    {ZYFA_BACKEND_CPU, "CPU", "cpu", &create_cpu},
};

zyfa_context_options read_options(const zyfa_context_options* user) {
    zyfa_context_options defaults;
    zyfa_context_options_init(&defaults, sizeof(defaults));
    if (user == nullptr) return defaults;

    const size_t readable =
        checked_struct_size(user, sizeof(zyfa_context_options), sizeof(uint32_t), "options", "struct_size");
    zyfa_context_options options = defaults;
    std::memcpy(&options, user, readable);
    options.struct_size = sizeof(options);
    if (!field_within(readable, offsetof(zyfa_context_options, backend), sizeof(options.backend))) {
        options.backend = defaults.backend;
    }
    if (!field_within(readable, offsetof(zyfa_context_options, device), sizeof(options.device))) {
        options.device = defaults.device;
    }
    if (!field_within(readable, offsetof(zyfa_context_options, num_threads), sizeof(options.num_threads))) {
        options.num_threads = defaults.num_threads;
    }
    return options;
}

// "HIP: not compiled in; CUDA: no device: <why>" for ZYFA_LOG=info.
void note_skipped(std::string& skipped, const char* name, const std::string& why) {
    if (!skipped.empty()) skipped += "; ";
    skipped += std::string(name) + ": " + why;
}

// "CUDA device 0, sm_90"; "CPU" (its device is the host).
std::string describe(const Backend& backend, const BackendSlot& slot, const zyfa_context_options& options) {
    if (slot.kind == ZYFA_BACKEND_CPU) return slot.name;
    return std::string(slot.name) + " device " + std::to_string(options.device) + ", " + backend.device_name();
}

}  // namespace

std::unique_ptr<Backend> create_backend(const zyfa_context_options* user_options) {
    const zyfa_context_options options = read_options(user_options);
    if (options.backend < ZYFA_BACKEND_AUTO || options.backend > ZYFA_BACKEND_CUDA) {
        throw_invalid("options.backend = " + std::to_string(options.backend) + " is not a zyfa_backend");
    }
    if (options.device < 0) {
        throw_invalid("options.device = " + std::to_string(options.device) + " is negative");
    }
    if (options.num_threads < 0) {
        throw_invalid("options.num_threads = " + std::to_string(options.num_threads) +
                      " is negative (0 = all hardware threads)");
    }
    constexpr int kMaxNumThreads = 1024;  // worker threads are started at creation: bound the request
    if (options.num_threads > kMaxNumThreads) {
        throw_invalid("options.num_threads = " + std::to_string(options.num_threads) + " is above the maximum " +
                      std::to_string(kMaxNumThreads));
    }

    if (options.backend == ZYFA_BACKEND_AUTO) {
        std::string skipped;  // why each earlier backend was passed over, for ZYFA_LOG=info
        for (const BackendSlot& slot : kBackendSlots) {
            if (slot.create == nullptr) {
                note_skipped(skipped, slot.name, "not compiled in");
                continue;
            }
            try {
                std::unique_ptr<Backend> backend = slot.create(options);
                if (log_info()) {
                    std::fprintf(stderr, "zyfa: AUTO chose %s (%s)\n", describe(*backend, slot, options).c_str(),
                                 skipped.empty() ? "the first backend AUTO tries" : skipped.c_str());
                }
                return backend;
            } catch (const Error& error) {
                // No device, or its runtime is not installed here: try the next backend.
                if (error.status() != ZYFA_ERROR_NO_DEVICE && error.status() != ZYFA_ERROR_NOT_SUPPORTED) throw;
                note_skipped(skipped, slot.name,
                             std::string(error.status() == ZYFA_ERROR_NO_DEVICE ? "no device: " : "not supported: ") +
                                 error.what());
            }
        }
        if (log_info()) std::fprintf(stderr, "zyfa: AUTO found no backend (%s)\n", skipped.c_str());
        throw Error(ZYFA_ERROR_NO_DEVICE, "options.backend = AUTO: no compiled-in backend found a device");
    }
    for (const BackendSlot& slot : kBackendSlots) {
        if (slot.kind != options.backend) continue;
        if (slot.create == nullptr) {
            throw_not_supported(std::string("options.backend = ") + slot.name + ": backend " + slot.name +
                                " is not compiled into this build");
        }
        std::unique_ptr<Backend> backend = slot.create(options);
        if (log_info()) {
            std::fprintf(stderr, "zyfa: created %s (options.backend)\n", describe(*backend, slot, options).c_str());
        }
        return backend;
    }
    throw Error(ZYFA_ERROR_INTERNAL, "backend " + std::to_string(options.backend) + " has no slot");
}

const char* compiled_backend_names() noexcept {
    struct Names {
        char text[64] = "";
        Names() noexcept {
            for (const BackendSlot& slot : kBackendSlots) {
                if (slot.create == nullptr) continue;
                if (text[0] != '\0') std::strncat(text, ", ", sizeof(text) - std::strlen(text) - 1);
                std::strncat(text, slot.build_name, sizeof(text) - std::strlen(text) - 1);
            }
        }
    };
    static const Names names;
    return names.text;
}

}  // namespace zyfa
