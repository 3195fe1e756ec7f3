#include "version.hpp"

#include <cstdio>
#include <exception>
#include <string>

#include "context_factory.hpp"
#include "gpu/kernel_registry.hpp"

#ifndef ZYFA_VERSION_STRING
#error "ZYFA_VERSION_STRING must come from the build (the CMake project version)"
#endif
#ifndef ZYFA_COMPILER
#define ZYFA_COMPILER "unknown"
#endif

namespace zyfa {
namespace {

#define ZYFA_STRINGIFY_INNER(x) #x
#define ZYFA_STRINGIFY(x) ZYFA_STRINGIFY_INNER(x)

constexpr bool same_text(const char* a, const char* b) {
    while (*a != '\0' && *a == *b) {
        ++a;
        ++b;
    }
    return *a == *b;
}

// The CMake project version and the header's macros must never drift apart.
static_assert(same_text(ZYFA_VERSION_STRING, ZYFA_STRINGIFY(ZYFA_VERSION_MAJOR) "." ZYFA_STRINGIFY(
                                                 ZYFA_VERSION_MINOR) "." ZYFA_STRINGIFY(ZYFA_VERSION_PATCH)),
              "CMake project version differs from ZYFA_VERSION_MAJOR/MINOR/PATCH in zyfa.h");

struct BuildInfoText {
    char text[512];
    BuildInfoText() noexcept {
        // The archs of the GPU code objects embedded in this build ("sm_90a, sm_80"), or "none".
        std::string targets;
        try {
            targets = gpu::KernelRegistry::embedded().list_archs();
        } catch (const std::exception& error) {
            targets = std::string("unreadable (") + error.what() + ")";
        }
        std::snprintf(text, sizeof(text), "zyfa %s; backends: %s; gpu targets: %s; compiler %s",
                      ZYFA_VERSION_STRING, compiled_backend_names(), targets.c_str(), ZYFA_COMPILER);
    }
};

}  // namespace

uint32_t version_number() noexcept { return ZYFA_VERSION_NUMBER; }

const char* version_string() noexcept { return ZYFA_VERSION_STRING; }

const char* build_info() noexcept {
    static const BuildInfoText info;  // built once; static initialisation is thread-safe
    return info.text;
}

const char* status_string(zyfa_status status) noexcept {
    switch (status) {
        case ZYFA_SUCCESS: return "success";
        case ZYFA_ERROR_INVALID_ARGUMENT: return "invalid argument";
        case ZYFA_ERROR_NOT_SUPPORTED: return "not supported";
        case ZYFA_ERROR_NO_DEVICE: return "no device";
        case ZYFA_ERROR_DEVICE: return "device error";
        case ZYFA_ERROR_OUT_OF_MEMORY: return "out of memory";
        case ZYFA_ERROR_INTERNAL: return "internal error";
        default: return "unknown status";
    }
}

}  // namespace zyfa
