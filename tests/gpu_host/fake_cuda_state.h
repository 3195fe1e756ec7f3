/* What the fake CUDA driver (fake_cuda_driver.c) records, read by the tests through
 * dlsym(handle, "fake_cuda_state"). */
#ifndef ZYFA_TESTS_FAKE_CUDA_STATE_H
#define ZYFA_TESTS_FAKE_CUDA_STATE_H

#include <stddef.h>

#define FAKE_CUDA_MAX_CONTEXTS 8
#define FAKE_CUDA_MAX_MODULES 16
#define FAKE_CUDA_MAX_TMA_REQUESTS 8
#define FAKE_CUDA_TMA_MAGIC 0x5a5946415f544d41ull /* "ZYFA_TMA": qword 0 of every map the double writes */
#define FAKE_CUDA_MAX_ALLOCATIONS 64

/* Where cuPointerGetAttributes says a pointer lives. Tests pass placeholder addresses that nothing
 * dereferences; these windows give them a kind. cuMemAlloc'd blocks are device 0 memory too;
 * every other address (malloc, the stack) is host memory the driver does not know (memory type 0),
 * as on the real driver. FAKE_CUDA_PAGEABLE_ACCESS=1 makes the device report pageable memory
 * access (HMM/ATS). */
#define FAKE_CUDA_DEVICE0_BEGIN 0x00100000ull /* [1 MiB, 256 MiB): device 0 memory */
#define FAKE_CUDA_DEVICE1_BEGIN 0x10000000ull /* [256, 512 MiB): device 1 memory */
#define FAKE_CUDA_MANAGED_BEGIN 0x20000000ull /* [512, 768 MiB): managed memory */
#define FAKE_CUDA_PINNED_BEGIN 0x30000000ull  /* [768 MiB, 1 GiB): pinned host memory, mapped */
#define FAKE_CUDA_WINDOWS_END 0x40000000ull

/* One cuTensorMapEncodeTiled request, as the driver received it (ranks up to 5). */
struct fake_cuda_tma_request {
    const void* map;
    int data_type;
    unsigned rank;
    const void* global_address;
    unsigned long long dims[5];
    unsigned long long strides[4]; /* bytes, dims 1..rank-1 */
    unsigned box[5];
    unsigned element_strides[5];
    int interleave, swizzle, l2_promotion, oob_fill;
    int result; /* what the double returned */
};

struct fake_cuda_state {
    int init_calls;
    int primary_retains;  /* retains minus releases */
    void* context_stack[FAKE_CUDA_MAX_CONTEXTS];
    int context_depth;
    int pushes;
    int calls_without_context;  /* driver calls made with the wrong context current */
    int synchronizations;
    int allocations;  /* cuMemAlloc calls */
    int pointer_queries;  /* cuPointerGetAttributes calls */
    int modules_loaded;
    int modules_unloaded;
    const void* module_images[FAKE_CUDA_MAX_MODULES];
    int max_dynamic_shared;
    int launches;
    unsigned grid[3], block[3], shared_bytes;
    void* stream;
    size_t param_bytes;  /* set by the test: how many bytes of the first kernel parameter to copy */
    unsigned char param[1024];
    size_t second_param_bytes;  /* set by the test: bytes of the second kernel parameter to copy, 0 = none */
    unsigned char second_param[512];

    /* cuTensorMapEncodeTiled. Call i (0-based) is recorded in tma_requests[i % 8]; the map it
     * writes holds, as little-endian qwords, FAKE_CUDA_TMA_MAGIC, i + 1, the global address and
     * then i + 1 again (written even when it rejects, as the map is unspecified then).
     * FAKE_CUDA_TMA_REJECT=1 makes every call return CUDA_ERROR_INVALID_VALUE. */
    int tma_encodes;
    int tma_violations;  /* requests the real driver would reject (its documented bounds) */
    char tma_violation[160];  /* the first violation, for the test's message */
    int tma_unnested;  /* requests whose byte strides do not nest (stride[i] < extent of dims <= i) */
    int tma_encodes_without_context;  /* calls made without the primary context current (refused) */
    struct fake_cuda_tma_request tma_requests[FAKE_CUDA_MAX_TMA_REQUESTS];
};

#ifdef __cplusplus
extern "C" {
#endif
typedef struct fake_cuda_state* (*fake_cuda_state_fn)(void);
#ifdef __cplusplus
}
#endif

#endif
