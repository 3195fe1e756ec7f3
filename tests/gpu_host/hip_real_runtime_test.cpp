// The HIP backend over the real ROCm runtime on a machine without an AMD GPU: Debian 12's
// libamdhip64.so.5 (ROCm 5.2.3, installed by tools/install-build-deps.sh). The fake runtime of
// tests/amd says what zyfa does with the answers it scripts; this test says what the real library
// answers and that zyfa turns it into ZYFA_ERROR_NO_DEVICE with the runtime's own reason, crashes
// nowhere, leaks nothing (build-asan/), and that AUTO then falls through to the next backend with
// ZYFA_LOG=info saying why. What the runtime answers here (measured, docs/hip-runtime.md):
// hipGetDeviceCount -> hipErrorNoDevice with count 0 (hipInit, which zyfa does not call, ->
// hipErrorInvalidDevice).
//
// argv[1]: "override" loads it through ZYFA_HIP_LIBRARY=<the file the loader resolves
// libamdhip64.so.5 to>; "default_search" through zyfa's own search (libamdhip64.so, then .so.7,
// .so.6, .so.5). One process each: a process loads its HIP runtime once. Exits 77 (CTest: skipped)
// with the reason when there is no HIP runtime here, or when /dev/kfd exists (an AMD GPU driver:
// the no-device path is not what the machine would take).
#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

extern "C" {
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
}

#include "core/errors.hpp"
#include "hip/hip_backend.hpp"
#include "zyfa.h"

namespace {

constexpr int kSkip = 77;

// What zyfa names the library in its messages: the override's path, or the first default name
// that loads here.
std::string expected_library;

// The file the loader resolves `name` to, or "" when it does not load. The handle stays open: it
// is the same object zyfa's dlopen gets, and a HIP runtime is not meant to be unloaded and loaded
// again in one process.
std::string resolved_path(const char* name) {
    void* library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) return "";
    struct link_map* map = nullptr;
    if (dlinfo(library, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr || map->l_name == nullptr) return name;
    return map->l_name;
}

void expect_in(const std::string& text, const std::string& needle) {
    if (text.find(needle) == std::string::npos) fail_msg("\"%s\" lacks \"%s\"", text.c_str(), needle.c_str());
}

// The reason zyfa gives for this runtime: it names the call, the library and the runtime's code.
void expect_no_device_reason(const std::string& message) {
    expect_in(message, "hipGetDeviceCount (" + expected_library + ")");
    expect_in(message, "hipErrorNoDevice");
    expect_in(message, "this HIP runtime sees no AMD GPU it can use");
}

zyfa_status create(zyfa_backend backend, int device, zyfa_context** ctx) {
    zyfa_context_options options;
    zyfa_context_options_init(&options, sizeof options);
    options.backend = backend;
    options.device = device;
    *ctx = nullptr;
    return zyfa_context_create(&options, ctx);
}

// The backend itself (the internal seam zyfa_context_create calls when HIP is compiled in; the
// sanitizer tree builds without the AMD code objects, so this is how it reaches the real runtime).
void backend_creation_is_no_device(void**) {
    for (int attempt = 0; attempt < 2; ++attempt) {  // the second call asks the loaded runtime again
        for (int device : {0, 1}) {
            try {
                zyfa::hip::make_hip_backend(device);
                fail_msg("make_hip_backend(%d) succeeded on a machine without an AMD GPU", device);
            } catch (const zyfa::Error& error) {
                std::printf("make_hip_backend(%d): status %d: %s\n", device, error.status(), error.what());
                assert_int_equal(error.status(), ZYFA_ERROR_NO_DEVICE);
                expect_no_device_reason(error.what());
            }
        }
    }
}

// Through the C API: NO_DEVICE with the runtime's reason, no context, and the next call works.
void hip_context_is_no_device(void**) {
    zyfa_context* ctx = nullptr;
    const zyfa_status status = create(ZYFA_BACKEND_HIP, 0, &ctx);
    const std::string message = zyfa_last_error_message();
    std::printf("ZYFA_BACKEND_HIP: status %d: %s\n", status, message.c_str());
    assert_null(ctx);
#ifdef ZYFA_TEST_HIP_COMPILED_IN
    assert_int_equal(status, ZYFA_ERROR_NO_DEVICE);
    expect_no_device_reason(message);
#else
    assert_int_equal(status, ZYFA_ERROR_NOT_SUPPORTED);  // this build has no HIP slot
    expect_in(message, "not compiled");
#endif
}

// zyfa_context_create(options) with stderr captured into the returned text.
std::string create_capturing_stderr(zyfa_backend backend, zyfa_context** ctx) {
    char path[] = "/tmp/zyfa_hip_real_runtime_XXXXXX";
    const int file = mkstemp(path);
    assert_true(file >= 0);
    std::fflush(stderr);
    const int saved = dup(STDERR_FILENO);
    assert_true(saved >= 0);
    assert_true(dup2(file, STDERR_FILENO) >= 0);
    const zyfa_status status = create(backend, 0, ctx);
    std::fflush(stderr);
    assert_true(dup2(saved, STDERR_FILENO) >= 0);
    close(saved);
    const off_t length = lseek(file, 0, SEEK_END);
    assert_true(length >= 0);
    std::string text(static_cast<size_t>(length), '\0');
    assert_int_equal(pread(file, &text[0], text.size(), 0), length);
    close(file);
    unlink(path);
    if (status != ZYFA_SUCCESS) fail_msg("AUTO: status %d (%s)", status, zyfa_last_error_message());
    return text;
}

// AUTO passes the HIP runtime over and lands on CUDA or the CPU (the CPU on CI), and ZYFA_LOG=info
// (set by main) says which and why.
void auto_falls_through_and_says_why(void**) {
    zyfa_context* ctx = nullptr;
    const std::string log = create_capturing_stderr(ZYFA_BACKEND_AUTO, &ctx);
    std::printf("%s", log.c_str());
    assert_non_null(ctx);
    const zyfa_backend chosen = zyfa_context_backend(ctx);
    assert_int_not_equal(chosen, ZYFA_BACKEND_HIP);
    expect_in(log, chosen == ZYFA_BACKEND_CPU ? "zyfa: AUTO chose CPU (" : "zyfa: AUTO chose CUDA device 0");
#ifdef ZYFA_TEST_HIP_COMPILED_IN
    expect_in(log, "HIP: no device: ");
    expect_no_device_reason(log);
#else
    expect_in(log, "HIP: not compiled in");
#endif
    zyfa_context_destroy(ctx);
}

}  // namespace

int main(int argc, char** argv) {
    const std::string scenario = argc > 1 ? argv[1] : "";
    if (scenario != "override" && scenario != "default_search") {
        std::fprintf(stderr, "usage: gpu_host_hip_real_runtime override|default_search\n");
        return 2;
    }
    if (access("/dev/kfd", F_OK) == 0) {
        std::printf("SKIP: /dev/kfd exists (an AMD GPU driver): the no-device path is not testable here\n");
        return kSkip;
    }
    if (scenario == "override") {
        const std::string path = resolved_path("libamdhip64.so.5");
        if (path.empty()) {
            std::printf("SKIP: no libamdhip64.so.5 here (Debian 12: apt-get install libamdhip64-5)\n");
            return kSkip;
        }
        setenv("ZYFA_HIP_LIBRARY", path.c_str(), 1);
        expected_library = path;
    } else {
        unsetenv("ZYFA_HIP_LIBRARY");
        for (const char* name : {"libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5"}) {
            if (!resolved_path(name).empty()) {
                expected_library = name;
                break;
            }
        }
        if (expected_library.empty()) {
            std::printf("SKIP: no HIP runtime on the loader's path (Debian 12: apt-get install libamdhip64-5)\n");
            return kSkip;
        }
    }
    std::printf("HIP runtime: %s\n", expected_library.c_str());
    setenv("ZYFA_LOG", "info", 1);  // before the first zyfa call, which reads it once
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(backend_creation_is_no_device),
        cmocka_unit_test(hip_context_is_no_device),
        cmocka_unit_test(auto_falls_through_and_says_why),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
