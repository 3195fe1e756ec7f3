// A HIP context whose launch plan makes a given kernel choice (src/hip/attention_launch_plan.hpp,
// AmdKernelChoice). zyfa_context_create always plans Automatic: the gfx950 FP8 assembly kernel
// where it supports the problem. The AMD tests also run the HIP C++ kernels on those problems, so
// they build the context through the internal seam (zyfa_internal), not through a public switch.
#pragma once

#include <memory>
#include <string>

#include "core/backend.hpp"
#include "hip/hip_backend.hpp"
#include "zyfa.h"

namespace zyfa_test {

// Device 0 of the HIP runtime zyfa would load (ZYFA_HIP_LIBRARY in the tests). Null with the
// reason in *error when creation fails; destroy the context with zyfa_context_destroy.
inline zyfa_context* hip_context_with(zyfa::hip::AmdKernelChoice choice, std::string* error) {
    try {
        std::unique_ptr<zyfa_context> ctx(new zyfa_context);
        ctx->backend = zyfa::hip::make_hip_backend(0, choice);
        return ctx.release();
    } catch (const std::exception& e) {
        if (error) *error = e.what();
        return nullptr;
    }
}

}  // namespace zyfa_test
