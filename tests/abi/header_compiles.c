/*
 * Compiled, not run: zyfa.h must build as strict C99, C11 and C++ with every warning an error
 * (tests/abi/CMakeLists.txt invokes the compiler once per language standard). Binding each
 * function to a pointer of the signature that docs/api.md gives turns any change of a parameter
 * or return type into a compile error, in C (incompatible pointer, -pedantic-errors) and in C++.
 * The same file is compiled as C and as C++, so it uses only their common subset.
 */
#include <zyfa.h>
#include <zyfa.h> /* twice: the include guard must hold */

#include <stddef.h>
#include <stdint.h>

typedef struct zyfa_signature_table {
    uint32_t (*version)(void);
    const char* (*version_string)(void);
    const char* (*build_info)(void);
    const char* (*status_string)(zyfa_status);
    const char* (*last_error_message)(void);
    void (*context_options_init)(zyfa_context_options*, size_t);
    zyfa_status (*context_create)(const zyfa_context_options*, zyfa_context**);
    void (*context_destroy)(zyfa_context*);
    zyfa_backend (*context_backend)(const zyfa_context*);
    const char* (*context_device_name)(const zyfa_context*);
    void (*attn_params_init)(zyfa_attn_params*, size_t);
    zyfa_status (*attn_supported)(zyfa_context*, const zyfa_attn_params*, const zyfa_tensor*,
                                  const zyfa_tensor*, const zyfa_tensor*, const zyfa_tensor*);
    const char* (*attn_kernel_name)(zyfa_context*, const zyfa_attn_params*, const zyfa_tensor*,
                                    const zyfa_tensor*, const zyfa_tensor*, const zyfa_tensor*);
    zyfa_status (*attn_fwd)(zyfa_context*, const zyfa_attn_params*, const zyfa_tensor*,
                            const zyfa_tensor*, const zyfa_tensor*, const zyfa_tensor*, void*);
    void (*quant_params_init)(zyfa_quant_params*, size_t);
    zyfa_status (*quantize_fp8)(zyfa_context*, const zyfa_quant_params*, const zyfa_tensor*,
                                const zyfa_tensor*, float*, void*);
} zyfa_signature_table;

/* Declared first so that the definition has external linkage in C++ and needs no prototype
 * warning in C; it is never linked. */
extern const zyfa_signature_table zyfa_header_signatures;
const zyfa_signature_table zyfa_header_signatures = {
    zyfa_version,         zyfa_version_string,       zyfa_build_info,
    zyfa_status_string,   zyfa_last_error_message,   zyfa_context_options_init,
    zyfa_context_create,  zyfa_context_destroy,      zyfa_context_backend,
    zyfa_context_device_name, zyfa_attn_params_init, zyfa_attn_supported,
    zyfa_attn_kernel_name, zyfa_attn_fwd,            zyfa_quant_params_init,
    zyfa_quantize_fp8,
};

/* The typedefs are the fixed-width types of the contract: an enum or a plain int here would
 * change the size an FFI reads. A negative array size fails the build when one does not hold. */
typedef char zyfa_check_status_is_int32[sizeof(zyfa_status) == sizeof(int32_t) ? 1 : -1];
typedef char zyfa_check_dtype_is_int32[sizeof(zyfa_dtype) == sizeof(int32_t) ? 1 : -1];
typedef char zyfa_check_backend_is_int32[sizeof(zyfa_backend) == sizeof(int32_t) ? 1 : -1];
typedef char zyfa_check_mask_is_int32[sizeof(zyfa_mask) == sizeof(int32_t) ? 1 : -1];
typedef char zyfa_check_softmax_is_int32[sizeof(zyfa_softmax) == sizeof(int32_t) ? 1 : -1];
typedef char zyfa_check_version_number[ZYFA_VERSION_NUMBER == 100 ? 1 : -1];

/* Every macro is usable in the preprocessor (plain integer literals, no casts). */
#if ZYFA_VERSION_MAJOR != 0 || ZYFA_VERSION_MINOR != 1 || ZYFA_VERSION_PATCH != 0
#error "zyfa.h version macros differ from docs/api.md"
#endif
#if ZYFA_QUANT_HADAMARD != 1u
#error "ZYFA_QUANT_HADAMARD differs from docs/api.md"
#endif
