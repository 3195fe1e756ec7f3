// The session of an emulator test that drives a HIP kernel through libzyfa.so's HIP backend with
// ZYFA_HIP_LIBRARY pointing at the HIP stand-in, beside a CPU context for the same inputs: the
// gpu tier's Session (tests/gpu/gpu_session.hpp), with the HIP context in Session::cuda (the GPU
// context under test) and the stand-in's runtime and stream.
#pragma once

#include <cstdio>
#include <cstdlib>

#include "gpu/gpu_session.hpp"
#include "hip/hip_runtime.hpp"

namespace zyfa_gpu_test {

// 0 when the session is open, kSkipExitCode without ZYFA_HIP_LIBRARY (CTest sets it), 1 when a
// context does not open; `name` prefixes every line it prints.
inline int open_emulated_hip_session(const char* name) {
    if (!std::getenv("ZYFA_HIP_LIBRARY")) {
        std::printf("SKIP %s: ZYFA_HIP_LIBRARY is not set (CTest sets it to the stand-in)\n", name);
        return kSkipExitCode;
    }
    Session& s = session();
    zyfa_context_options opts;
    zyfa_context_options_init(&opts, sizeof opts);
    opts.backend = ZYFA_BACKEND_HIP;
    if (zyfa_context_create(&opts, &s.cuda) != ZYFA_SUCCESS) {
        std::printf("FAIL %s: zyfa_context_create(HIP) on the stand-in: %s\n", name, zyfa_last_error_message());
        return 1;
    }
    zyfa_context_options cpu_opts;
    zyfa_context_options_init(&cpu_opts, sizeof cpu_opts);
    cpu_opts.backend = ZYFA_BACKEND_CPU;
    if (zyfa_context_create(&cpu_opts, &s.cpu) != ZYFA_SUCCESS) {
        std::printf("FAIL %s: CPU context: %s\n", name, zyfa_last_error_message());
        return 1;
    }
    s.runtime = zyfa::hip::open_hip_runtime(0);
    s.stream = s.runtime->create_stream();
    std::printf("%s: %s on the emulator; zyfa %s\n", name, zyfa_context_device_name(s.cuda), zyfa_version_string());
    return 0;
}

}  // namespace zyfa_gpu_test
