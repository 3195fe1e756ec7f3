// The interface every backend implements (CPU now; HIP and CUDA load their runtimes with dlopen).
// Backends receive validated problems; they throw zyfa::Error for what they cannot do.
#pragma once

#include <memory>

#include "problem.hpp"

namespace zyfa {

class Backend {
public:
    virtual ~Backend() = default;
    virtual zyfa_backend kind() const = 0;
    virtual const char* device_name() const = 0;
    // Throws Error(NOT_SUPPORTED or INVALID_ARGUMENT) if attn_fwd could not run this problem.
    virtual void check_attn_supported(const AttnProblem& problem) const = 0;
    // Static string naming the kernel attn_fwd runs; call only after check_attn_supported.
    virtual const char* attn_kernel_name(const AttnProblem& problem) const = 0;
    virtual void attn_fwd(const AttnProblem& problem, void* stream) = 0;
    // zyfa_attn_fwd_workspace_size: the split-KV workspace bytes of a problem whose shape fields
    // alone are set (validate_attn_shape); 0 = it would not split (the CPU backend never does).
    virtual uint64_t attn_workspace_bytes(const AttnProblem& shape) const {
        (void)shape;
        return 0;
    }
    virtual void check_quantize_supported(const QuantProblem& problem) const = 0;
    // zyfa_quantize_fp8 and zyfa_quantize_int8: problem.out.dtype says which.
    virtual void quantize_fp8(const QuantProblem& problem, void* stream) = 0;
    // zyfa_attn_merge; throws Error(NOT_SUPPORTED) for what this backend cannot merge.
    virtual void check_merge_supported(const MergeProblem& problem) const = 0;
    virtual void attn_merge(const MergeProblem& problem, void* stream) = 0;
};

}  // namespace zyfa

// The opaque handle of the C ABI.
struct zyfa_context {
    std::unique_ptr<zyfa::Backend> backend;
};
