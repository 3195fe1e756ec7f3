// What the warp-specialised sm_90a kernel tests ask of a problem before checking it: whether the
// device is sm_90, which kernel the plan names for a shape on a context, and the dims suffix of
// those kernels' names. Shared by ws_kernel_test.cpp and int8_qk_gpu_test.cpp.
#pragma once

#include <cstdint>
#include <string>

#include "gpu_check.hpp"

namespace zyfa_gpu_test {

inline bool is_hopper() {
    const auto& device = session().runtime->device();
    return device.compute_major == 9 && device.compute_minor == 0;
}

// The kernel the plan of `ctx` names for `shape` ("" when it refuses: zyfa_last_error_message says why).
inline std::string kernel_name_of(zyfa_context* ctx, const CaseShape& shape) {
    GpuCase c(*session().runtime, shape);
    const char* name = zyfa_attn_kernel_name(ctx, &c.params, &c.tq, &c.tk, &c.tv, &c.to);
    return name ? name : "";
}

inline bool ends_with(const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// The head dims of the warp-specialised kernels, with the dims suffix of their kernel names.
struct WsDims {
    int64_t qk, v;
    const char* suffix;
};

}  // namespace zyfa_gpu_test
