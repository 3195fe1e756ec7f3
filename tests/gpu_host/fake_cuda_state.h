/* What the fake CUDA driver (fake_cuda_driver.c) records, read by the tests through
 * dlsym(handle, "fake_cuda_state"). */
#ifndef ZYFA_TESTS_FAKE_CUDA_STATE_H
#define ZYFA_TESTS_FAKE_CUDA_STATE_H

#include <stddef.h>

#define FAKE_CUDA_MAX_CONTEXTS 8
#define FAKE_CUDA_MAX_MODULES 16

struct fake_cuda_state {
    int init_calls;
    int primary_retains;  /* retains minus releases */
    void* context_stack[FAKE_CUDA_MAX_CONTEXTS];
    int context_depth;
    int pushes;
    int calls_without_context;  /* driver calls made with the wrong context current */
    int synchronizations;
    int allocations;  /* cuMemAlloc calls */
    int modules_loaded;
    int modules_unloaded;
    const void* module_images[FAKE_CUDA_MAX_MODULES];
    int max_dynamic_shared;
    int launches;
    unsigned grid[3], block[3], shared_bytes;
    void* stream;
    size_t param_bytes;  /* set by the test: how many bytes of the first kernel parameter to copy */
    unsigned char param[1024];
};

#ifdef __cplusplus
extern "C" {
#endif
typedef struct fake_cuda_state* (*fake_cuda_state_fn)(void);
#ifdef __cplusplus
}
#endif

#endif
