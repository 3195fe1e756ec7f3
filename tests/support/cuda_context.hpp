// A CUDA context whose launch plan makes a given kernel choice (src/cuda/attention_launch_plan.hpp,
// CudaKernelChoice). zyfa_context_create always plans Automatic: the sm_90a warp-specialised
// kernels copy with the tensor memory accelerator wherever the problem allows its maps. The GPU
// tests also run their cp.async producer on those problems, so they build the context through the
// internal seam (zyfa_internal), not through a public switch.
#pragma once

#include <memory>
#include <string>

#include "core/backend.hpp"
#include "cuda/cuda_backend.hpp"
#include "zyfa.h"

namespace zyfa_test {

// Device 0 of the CUDA driver zyfa would load (ZYFA_CUDA_LIBRARY in the host tests). Null with the
// reason in *error when creation fails; destroy the context with zyfa_context_destroy.
inline zyfa_context* cuda_context_with(zyfa::cuda::CudaKernelChoice choice, std::string* error) {
    try {
        std::unique_ptr<zyfa_context> ctx(new zyfa_context);
        ctx->backend = zyfa::cuda::make_cuda_backend(0, choice);
        return ctx.release();
    } catch (const std::exception& e) {
        if (error) *error = e.what();
        return nullptr;
    }
}

}  // namespace zyfa_test
