// The extern "C" entry points of include/zyfa.h: a thin layer that validates, dispatches to the
// context's backend and turns every C++ exception into a status and a thread-local message.
// Nothing here may throw or abort across the C boundary.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <new>

#include "core/backend.hpp"
#include "core/context_factory.hpp"
#include "core/errors.hpp"
#include "core/log.hpp"
#include "core/validate.hpp"
#include "core/version.hpp"
#include "zyfa.h"

namespace {

// Stores "function: detail" as this thread's last error message; never throws.
void record_failure(const char* function, const char* detail) noexcept {
    char message[1024];
    std::snprintf(message, sizeof(message), "%s: %s", function, detail);
    zyfa::set_last_error(message);
}

// Runs body, mapping exceptions to a status (and a message; success leaves the message as it was).
template <class Body>
zyfa_status guarded(const char* function, Body&& body) noexcept {
    try {
        body();
        return ZYFA_SUCCESS;
    } catch (const zyfa::Error& error) {
        record_failure(function, error.what());
        return error.status() != ZYFA_SUCCESS ? error.status() : ZYFA_ERROR_INTERNAL;
    } catch (const std::bad_alloc&) {
        record_failure(function, "out of host memory");
        return ZYFA_ERROR_OUT_OF_MEMORY;
    } catch (const std::exception& error) {
        char detail[960];
        std::snprintf(detail, sizeof(detail), "internal error: %s", error.what());
        record_failure(function, detail);
        return ZYFA_ERROR_INTERNAL;
    } catch (...) {
        record_failure(function, "internal error: unknown exception");
        return ZYFA_ERROR_INTERNAL;
    }
}

zyfa::Backend& backend_of(zyfa_context* ctx) {
    if (ctx == nullptr) zyfa::throw_invalid("ctx is NULL");
    if (!ctx->backend) throw zyfa::Error(ZYFA_ERROR_INTERNAL, "ctx has no backend");
    return *ctx->backend;
}

// ZYFA_LOG=info reports the chosen kernel of each zyfa_attn_fwd on stderr.
bool log_kernels() noexcept { return zyfa::log_info(); }

// Zeroes the first struct_size bytes and records struct_size when the field fits.
template <class Struct>
void init_growable(Struct* s, size_t struct_size) noexcept {
    std::memset(static_cast<void*>(s), 0, struct_size);
    if (struct_size >= sizeof(uint32_t)) {
        s->struct_size = struct_size > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(struct_size);
    }
}

#define ZYFA_FIELD_FITS(type, member, size) (offsetof(type, member) + sizeof(((type*)nullptr)->member) <= (size))

}  // namespace

extern "C" {

ZYFA_API uint32_t zyfa_version(void) { return zyfa::version_number(); }

ZYFA_API const char* zyfa_version_string(void) { return zyfa::version_string(); }

ZYFA_API const char* zyfa_build_info(void) { return zyfa::build_info(); }

ZYFA_API const char* zyfa_status_string(zyfa_status status) { return zyfa::status_string(status); }

ZYFA_API const char* zyfa_last_error_message(void) { return zyfa::last_error(); }

ZYFA_API void zyfa_context_options_init(zyfa_context_options* opts, size_t struct_size) {
    if (opts == nullptr) return;
    init_growable(opts, struct_size);
    if (ZYFA_FIELD_FITS(zyfa_context_options, backend, struct_size)) opts->backend = ZYFA_BACKEND_AUTO;
    if (ZYFA_FIELD_FITS(zyfa_context_options, device, struct_size)) opts->device = 0;
    if (ZYFA_FIELD_FITS(zyfa_context_options, num_threads, struct_size)) opts->num_threads = 0;
}

ZYFA_API zyfa_status zyfa_context_create(const zyfa_context_options* opts, zyfa_context** out) {
    return guarded("zyfa_context_create", [&] {
        if (out == nullptr) zyfa::throw_invalid("out is NULL");
        *out = nullptr;
        std::unique_ptr<zyfa_context> ctx(new zyfa_context);
        ctx->backend = zyfa::create_backend(opts);
        *out = ctx.release();
    });
}

ZYFA_API void zyfa_context_destroy(zyfa_context* ctx) {
    // A backend's destructor must not throw; if one does anyway, the C caller must not see it.
    try {
        delete ctx;
    } catch (...) {
        record_failure("zyfa_context_destroy", "internal error: backend teardown threw");
    }
}

ZYFA_API zyfa_backend zyfa_context_backend(const zyfa_context* ctx) {
    if (ctx == nullptr || !ctx->backend) return ZYFA_BACKEND_AUTO;
    return ctx->backend->kind();
}

ZYFA_API const char* zyfa_context_device_name(const zyfa_context* ctx) {
    if (ctx == nullptr || !ctx->backend) return "";
    const char* name = ctx->backend->device_name();
    return name != nullptr ? name : "";
}

ZYFA_API void zyfa_attn_params_init(zyfa_attn_params* p, size_t struct_size) {
    if (p == nullptr) return;
    init_growable(p, struct_size);
    if (ZYFA_FIELD_FITS(zyfa_attn_params, softmax, struct_size)) p->softmax = ZYFA_SOFTMAX_AUTO;
    if (ZYFA_FIELD_FITS(zyfa_attn_params, window_left, struct_size)) p->window_left = -1;
    if (ZYFA_FIELD_FITS(zyfa_attn_params, window_right, struct_size)) p->window_right = -1;
}

ZYFA_API zyfa_status zyfa_attn_supported(zyfa_context* ctx, const zyfa_attn_params* p, const zyfa_tensor* q,
                                         const zyfa_tensor* k, const zyfa_tensor* v, const zyfa_tensor* o) {
    return guarded("zyfa_attn_supported", [&] {
        zyfa::Backend& backend = backend_of(ctx);
        const zyfa::AttnProblem problem = zyfa::validate_attn(p, q, k, v, o, backend.kind());
        backend.check_attn_supported(problem);
    });
}

ZYFA_API const char* zyfa_attn_kernel_name(zyfa_context* ctx, const zyfa_attn_params* p, const zyfa_tensor* q,
                                           const zyfa_tensor* k, const zyfa_tensor* v, const zyfa_tensor* o) {
    const char* name = nullptr;
    const zyfa_status status = guarded("zyfa_attn_kernel_name", [&] {
        zyfa::Backend& backend = backend_of(ctx);
        const zyfa::AttnProblem problem = zyfa::validate_attn(p, q, k, v, o, backend.kind());
        backend.check_attn_supported(problem);
        name = backend.attn_kernel_name(problem);
        if (name == nullptr) throw zyfa::Error(ZYFA_ERROR_INTERNAL, "backend named no kernel");
    });
    return status == ZYFA_SUCCESS ? name : nullptr;
}

ZYFA_API zyfa_status zyfa_attn_fwd(zyfa_context* ctx, const zyfa_attn_params* p, const zyfa_tensor* q,
                                   const zyfa_tensor* k, const zyfa_tensor* v, const zyfa_tensor* o, void* stream) {
    return guarded("zyfa_attn_fwd", [&] {
        zyfa::Backend& backend = backend_of(ctx);
        const zyfa::AttnProblem problem = zyfa::validate_attn(p, q, k, v, o, backend.kind());
        backend.check_attn_supported(problem);
        if (problem.empty()) return;  // valid, nothing to write
        if (log_kernels()) std::fprintf(stderr, "zyfa: kernel %s\n", backend.attn_kernel_name(problem));
        backend.attn_fwd(problem, stream);
    });
}

ZYFA_API zyfa_status zyfa_attn_fwd_workspace_size(zyfa_context* ctx, const zyfa_attn_params* p, size_t* bytes) {
    return guarded("zyfa_attn_fwd_workspace_size", [&] {
        zyfa::Backend& backend = backend_of(ctx);
        if (bytes == nullptr) zyfa::throw_invalid("bytes is NULL");
        const zyfa::AttnProblem shape = zyfa::validate_attn_shape(p, backend.kind());
        const uint64_t needed = backend.attn_workspace_bytes(shape);
        if (needed > SIZE_MAX) zyfa::throw_not_supported("the split-KV workspace exceeds size_t");
        *bytes = static_cast<size_t>(needed);
    });
}

ZYFA_API void zyfa_quant_params_init(zyfa_quant_params* p, size_t struct_size) {
    if (p == nullptr) return;
    init_growable(p, struct_size);  // every default is zero
}

ZYFA_API zyfa_status zyfa_quantize_fp8(zyfa_context* ctx, const zyfa_quant_params* p, const zyfa_tensor* in,
                                       const zyfa_tensor* out, float* descale, void* stream) {
    return guarded("zyfa_quantize_fp8", [&] {
        zyfa::Backend& backend = backend_of(ctx);
        const zyfa::QuantProblem problem = zyfa::validate_quant(p, in, out, descale, backend.kind());
        backend.check_quantize_supported(problem);
        if (problem.empty()) return;  // valid, nothing to write
        backend.quantize_fp8(problem, stream);
    });
}

ZYFA_API zyfa_status zyfa_quantize_int8(zyfa_context* ctx, const zyfa_quant_params* p, const zyfa_tensor* in,
                                        const zyfa_tensor* out, float* descale, void* stream) {
    return guarded("zyfa_quantize_int8", [&] {
        zyfa::Backend& backend = backend_of(ctx);
        const zyfa::QuantProblem problem =
            zyfa::validate_quant(p, in, out, descale, backend.kind(), zyfa::QuantEntry::Int8);
        backend.check_quantize_supported(problem);
        if (problem.empty()) return;  // valid, nothing to write
        backend.quantize_fp8(problem, stream);
    });
}

ZYFA_API void zyfa_merge_params_init(zyfa_merge_params* p, size_t struct_size) {
    if (p == nullptr) return;
    init_growable(p, struct_size);  // every default is zero
}

ZYFA_API zyfa_status zyfa_attn_merge(zyfa_context* ctx, const zyfa_merge_params* p, const zyfa_tensor* part_o,
                                     const float* const* part_lse, const zyfa_tensor* o, void* stream) {
    return guarded("zyfa_attn_merge", [&] {
        zyfa::Backend& backend = backend_of(ctx);
        const zyfa::MergeProblem problem = zyfa::validate_merge(p, part_o, part_lse, o, backend.kind());
        backend.check_merge_supported(problem);
        if (problem.empty()) return;  // valid, nothing to write
        backend.attn_merge(problem, stream);
    });
}

}  // extern "C"
