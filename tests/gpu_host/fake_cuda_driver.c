/* A test double of the CUDA driver (libcuda.so.1) for the host side of the NVIDIA backend, loaded
 * through ZYFA_CUDA_LIBRARY. It exports every entry point zyfa resolves and behaves as the
 * environment says:
 *   FAKE_CUDA_INIT_ERROR=<CUresult>  cuInit fails with it (100 no device, 34 stub library)
 *   FAKE_CUDA_CC=<major><minor>      one device of that compute capability (default 90)
 *   FAKE_CUDA_SHARED_OPTIN=<bytes>   its opt-in shared memory per block (default 232448)
 *   FAKE_CUDA_TMA_REJECT=1           cuTensorMapEncodeTiled returns CUDA_ERROR_INVALID_VALUE
 *   FAKE_CUDA_PAGEABLE_ACCESS=1      the device reports pageable memory access (HMM/ATS)
 * cuPointerGetAttributes classifies addresses as fake_cuda_state.h's windows say.
 * It records what zyfa asked for (module images, shared-memory limits, launches and their
 * parameters, tensor-map requests, the current context stack) so tests can check the host logic;
 * fake_cuda_state() returns the record. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_cuda_state.h"

#define EXPORT __attribute__((visibility("default")))

static struct fake_cuda_state state;
static int context_token; /* the primary context is &context_token */
static int module_token;
static int function_token;
static int stream_token;
static int event_token;
static int graph_token;
static int exec_token;

EXPORT struct fake_cuda_state* fake_cuda_state(void) { return &state; }

static int env_int(const char* name, int fallback) {
    const char* text = getenv(name);
    return text != NULL && text[0] != '\0' ? atoi(text) : fallback;
}

EXPORT int cuGetErrorName(int error, const char** name) {
    switch (error) {
        case 0: *name = "CUDA_SUCCESS"; return 0;
        case 34: *name = "CUDA_ERROR_STUB_LIBRARY"; return 0;
        case 100: *name = "CUDA_ERROR_NO_DEVICE"; return 0;
        case 200: *name = "CUDA_ERROR_INVALID_IMAGE"; return 0;
        default: *name = NULL; return 1; /* CUDA_ERROR_INVALID_VALUE, as the driver does */
    }
}

EXPORT int cuGetErrorString(int error, const char** text) {
    switch (error) {
        case 0: *text = "no error"; return 0;
        case 34: *text = "CUDA driver is a stub library"; return 0;
        case 100: *text = "no CUDA-capable device is detected"; return 0;
        case 200: *text = "device kernel image is invalid"; return 0;
        default: *text = NULL; return 1;
    }
}

EXPORT int cuInit(unsigned flags) {
    (void)flags;
    state.init_calls++;
    return env_int("FAKE_CUDA_INIT_ERROR", 0);
}

EXPORT int cuDriverGetVersion(int* version) { *version = 13000; return 0; }
EXPORT int cuDeviceGetCount(int* count) { *count = 1; return 0; }
EXPORT int cuDeviceGet(int* device, int ordinal) { *device = ordinal; return ordinal == 0 ? 0 : 101; }

EXPORT int cuDeviceGetName(char* name, int length, int device) {
    (void)device;
    strncpy(name, "Fake CUDA Device", (size_t)length);
    return 0;
}

EXPORT int cuDeviceGetAttribute(int* value, int attribute, int device) {
    (void)device;
    const int cc = env_int("FAKE_CUDA_CC", 90);
    switch (attribute) {
        case 16: *value = 132; return 0;      /* multiprocessors */
        case 75: *value = cc / 10; return 0;  /* compute capability major */
        case 76: *value = cc % 10; return 0;  /* minor */
        case 88: *value = env_int("FAKE_CUDA_PAGEABLE_ACCESS", 0); return 0;
        case 97: *value = env_int("FAKE_CUDA_SHARED_OPTIN", 232448); return 0;
        default: return 1;
    }
}

EXPORT int cuDevicePrimaryCtxRetain(void** context, int device) {
    (void)device;
    state.primary_retains++;
    *context = &context_token;
    return 0;
}
EXPORT int cuDevicePrimaryCtxRelease_v2(int device) {
    (void)device;
    state.primary_retains--;
    return 0;
}

EXPORT int cuCtxGetCurrent(void** context) {
    *context = state.context_depth > 0 ? state.context_stack[state.context_depth - 1] : NULL;
    return 0;
}
EXPORT int cuCtxPushCurrent_v2(void* context) {
    if (state.context_depth >= FAKE_CUDA_MAX_CONTEXTS) return 1;
    state.context_stack[state.context_depth++] = context;
    state.pushes++;
    return 0;
}
EXPORT int cuCtxPopCurrent_v2(void** context) {
    if (state.context_depth == 0) return 1;
    *context = state.context_stack[--state.context_depth];
    return 0;
}
EXPORT int cuCtxSynchronize(void) { state.synchronizations++; return 0; }

/* Records an operation that needs the primary context current. */
static int need_context(void) {
    if (state.context_depth == 0 || state.context_stack[state.context_depth - 1] != &context_token) {
        state.calls_without_context++;
        return 201; /* CUDA_ERROR_INVALID_CONTEXT */
    }
    return 0;
}

EXPORT int cuModuleLoadData(void** module, const void* image) {
    if (need_context()) return 201;
    if (image == NULL) return 200;
    if (state.modules_loaded < FAKE_CUDA_MAX_MODULES) state.module_images[state.modules_loaded] = image;
    state.modules_loaded++;
    *module = &module_token;
    return 0;
}
EXPORT int cuModuleUnload(void* module) {
    (void)module;
    state.modules_unloaded++;
    return 0;
}
EXPORT int cuModuleGetFunction(void** function, void* module, const char* name) {
    (void)module;
    if (need_context()) return 201;
    if (strncmp(name, "missing", 7) == 0) return 500; /* CUDA_ERROR_NOT_FOUND */
    *function = &function_token;
    return 0;
}
EXPORT int cuFuncSetAttribute(void* function, int attribute, int value) {
    (void)function;
    if (attribute == 8) state.max_dynamic_shared = value;
    return 0;
}
EXPORT int cuFuncGetAttribute(int* value, int attribute, void* function) {
    (void)function;
    *value = attribute == 4 ? 128 : 0;
    return 0;
}

EXPORT int cuLaunchKernel(void* function, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                          unsigned bz, unsigned shared, void* stream, void** params, void** extra) {
    (void)function;
    (void)extra;
    if (need_context()) return 201;
    state.launches++;
    state.grid[0] = gx, state.grid[1] = gy, state.grid[2] = gz;
    state.block[0] = bx, state.block[1] = by, state.block[2] = bz;
    state.shared_bytes = shared;
    state.stream = stream;
    if (params != NULL && params[0] != NULL && state.param_bytes <= sizeof(state.param)) {
        memcpy(state.param, params[0], state.param_bytes);
    }
    /* Only when the test says the kernel has a second parameter: params has no more entries than
     * the kernel has parameters. */
    if (params != NULL && state.second_param_bytes > 0 && state.second_param_bytes <= sizeof(state.second_param)) {
        if (params[1] == NULL) return 1; /* CUDA_ERROR_INVALID_VALUE */
        memcpy(state.second_param, params[1], state.second_param_bytes);
    }
    return 0;
}

/* cuTensorMapEncodeTiled's documented bounds (cuda.h), for the data types, interleave and swizzle
 * zyfa may ask for: the first one broken, or NULL. */
static const char* tma_violation(const void* map, int data_type, unsigned rank, const void* address,
                                 const uint64_t* dims, const uint64_t* strides, const uint32_t* box,
                                 const uint32_t* element_strides, int interleave, int swizzle, int l2, int oob) {
    static char text[120];
    static const unsigned element_bytes[] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4};
    if ((uintptr_t)map % 64 != 0) return "map not 64-byte aligned";
    if (data_type < 0 || data_type > 12) return "data type out of range";
    if (rank == 0 || rank > 5) return "rank not in 1..5";
    if (address == NULL || (uintptr_t)address % 16 != 0) return "global address not 16-byte aligned";
    if (interleave < 0 || interleave > 2 || swizzle < 0 || swizzle > 3 || l2 < 0 || l2 > 3 || oob < 0 || oob > 1) {
        return "enum out of range";
    }
    if (oob == 1 && data_type <= 5) return "NaN fill for an integer data type";
    for (unsigned d = 0; d < rank; ++d) {
        if (dims[d] == 0 || dims[d] > (UINT64_C(1) << 32)) {
            snprintf(text, sizeof(text), "dims[%u] = %llu not in 1..2^32", d, (unsigned long long)dims[d]);
            return text;
        }
        if (box[d] == 0 || box[d] > 256) {
            snprintf(text, sizeof(text), "box[%u] = %u not in 1..256", d, box[d]);
            return text;
        }
        if (element_strides[d] == 0 || element_strides[d] > 8) {
            snprintf(text, sizeof(text), "element_strides[%u] = %u not in 1..8", d, element_strides[d]);
            return text;
        }
    }
    for (unsigned d = 0; d + 1 < rank; ++d) {
        if (strides[d] % 16 != 0 || strides[d] >= (UINT64_C(1) << 40)) {
            snprintf(text, sizeof(text), "strides[%u] = %llu not a multiple of 16 below 2^40", d,
                     (unsigned long long)strides[d]);
            return text;
        }
    }
    if (interleave == 0 && box[0] * element_bytes[data_type] % 16 != 0) return "box[0] bytes not a multiple of 16";
    if (interleave == 0 && swizzle != 0) {
        static const unsigned swizzle_bytes[] = {0, 32, 64, 128};
        if (box[0] * element_bytes[data_type] > swizzle_bytes[swizzle]) return "box[0] bytes beyond the swizzle span";
    }
    return NULL;
}

EXPORT int cuTensorMapEncodeTiled(void* map, int data_type, uint32_t rank, void* address, const uint64_t* dims,
                                  const uint64_t* strides, const uint32_t* box, const uint32_t* element_strides,
                                  int interleave, int swizzle, int l2_promotion, int oob_fill) {
    const int index = state.tma_encodes++;
    /* The real driver answers CUDA_ERROR_INVALID_CONTEXT without a current context (seen on an
     * H200, src/cuda/cuda_runtime.cpp). */
    const int context_error = need_context();
    if (context_error != 0) state.tma_encodes_without_context++;
    const int reject = env_int("FAKE_CUDA_TMA_REJECT", 0) != 0;
    struct fake_cuda_tma_request* r = &state.tma_requests[index % FAKE_CUDA_MAX_TMA_REQUESTS];
    memset(r, 0, sizeof(*r));
    r->map = map;
    r->data_type = data_type;
    r->rank = rank;
    r->global_address = address;
    for (uint32_t d = 0; d < rank && d < 5; ++d) {
        r->dims[d] = dims[d];
        r->box[d] = box[d];
        r->element_strides[d] = element_strides[d];
        if (d + 1 < rank) r->strides[d] = strides[d];
    }
    r->interleave = interleave;
    r->swizzle = swizzle;
    r->l2_promotion = l2_promotion;
    r->oob_fill = oob_fill;

    const char* violation = tma_violation(map, data_type, rank, address, dims, strides, box, element_strides,
                                          interleave, swizzle, l2_promotion, oob_fill);
    if (violation != NULL) {
        if (state.tma_violations++ == 0) {
            snprintf(state.tma_violation, sizeof(state.tma_violation), "call %d: %.120s", index, violation);
        }
    } else if (rank <= 5 && data_type >= 0 && data_type <= 12) {
        /* Nested strides: each dim's stride covers the whole extent of the dims inside it. */
        static const uint64_t element_bytes[] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4};
        uint64_t inner = dims[0] * element_bytes[data_type];
        for (uint32_t d = 0; d + 1 < rank; ++d) {
            if (strides[d] < inner) {
                state.tma_unnested++;
                break;
            }
            inner = strides[d] * dims[d + 1];
        }
    }

    uint64_t pattern[16];
    for (int q = 0; q < 16; ++q) pattern[q] = (uint64_t)index + 1;
    pattern[0] = FAKE_CUDA_TMA_MAGIC;
    pattern[2] = (uint64_t)(uintptr_t)address;
    if (map != NULL) memcpy(map, pattern, sizeof(pattern));
    r->result = context_error != 0 ? context_error : reject || violation != NULL ? 1 /* CUDA_ERROR_INVALID_VALUE */ : 0;
    return r->result;
}

/* cuMemAlloc'd blocks, so that cuPointerGetAttributes knows them as device memory. */
static struct {
    unsigned long long base, bytes;
} allocated[FAKE_CUDA_MAX_ALLOCATIONS];

static int is_allocated(unsigned long long p) {
    for (int i = 0; i < FAKE_CUDA_MAX_ALLOCATIONS; ++i) {
        if (allocated[i].bytes != 0 && p >= allocated[i].base && p - allocated[i].base < allocated[i].bytes) return 1;
    }
    return 0;
}

/* The batched query, as the real driver answers it: an unknown pointer is success with memory type
 * 0, ordinal -2, no device pointer. Attribute sizes as cuda.h documents them. */
EXPORT int cuPointerGetAttributes(unsigned count, const int* attributes, void** data, unsigned long long p) {
    state.pointer_queries++;
    unsigned memory_type = 0, managed = 0;
    int ordinal = -2;
    unsigned long long device_pointer = 0;
    if (is_allocated(p) || (p >= FAKE_CUDA_DEVICE0_BEGIN && p < FAKE_CUDA_DEVICE1_BEGIN)) {
        memory_type = 2, ordinal = 0, device_pointer = p;
    } else if (p >= FAKE_CUDA_DEVICE1_BEGIN && p < FAKE_CUDA_MANAGED_BEGIN) {
        memory_type = 2, ordinal = 1, device_pointer = p;
    } else if (p >= FAKE_CUDA_MANAGED_BEGIN && p < FAKE_CUDA_PINNED_BEGIN) {
        memory_type = 2, ordinal = 0, managed = 1, device_pointer = p;
    } else if (p >= FAKE_CUDA_PINNED_BEGIN && p < FAKE_CUDA_WINDOWS_END) {
        memory_type = 1, ordinal = 0, device_pointer = p;
    }
    for (unsigned i = 0; i < count; ++i) {
        switch (attributes[i]) {
            case 2: memcpy(data[i], &memory_type, sizeof memory_type); break;
            case 3: memcpy(data[i], &device_pointer, sizeof device_pointer); break;
            case 8: *(unsigned char*)data[i] = (unsigned char)managed; break; /* a bool */
            case 9: memcpy(data[i], &ordinal, sizeof ordinal); break;
            default: return 1; /* CUDA_ERROR_INVALID_VALUE */
        }
    }
    return 0;
}

/* Helpers: plausible, never touching memory through the returned "device" pointers. */
EXPORT int cuMemAlloc_v2(unsigned long long* pointer, size_t bytes) {
    if (need_context()) return 201;
    state.allocations++;
    *pointer = (unsigned long long)(uintptr_t)malloc(bytes);
    if (*pointer == 0) return 2;
    for (int i = 0; i < FAKE_CUDA_MAX_ALLOCATIONS; ++i) {
        if (allocated[i].bytes == 0) {
            allocated[i].base = *pointer;
            allocated[i].bytes = bytes != 0 ? bytes : 1;
            break;
        }
    }
    return 0;
}
EXPORT int cuMemFree_v2(unsigned long long pointer) {
    for (int i = 0; i < FAKE_CUDA_MAX_ALLOCATIONS; ++i) {
        if (allocated[i].bytes != 0 && allocated[i].base == pointer) allocated[i].bytes = 0;
    }
    free((void*)(uintptr_t)pointer);
    return 0;
}
EXPORT int cuMemcpyHtoD_v2(unsigned long long dst, const void* src, size_t bytes) {
    memcpy((void*)(uintptr_t)dst, src, bytes);
    return 0;
}
EXPORT int cuMemcpyDtoH_v2(void* dst, unsigned long long src, size_t bytes) {
    memcpy(dst, (const void*)(uintptr_t)src, bytes);
    return 0;
}
EXPORT int cuMemsetD8_v2(unsigned long long dst, unsigned char value, size_t bytes) {
    memset((void*)(uintptr_t)dst, value, bytes);
    return 0;
}
EXPORT int cuStreamCreate(void** stream, unsigned flags) { (void)flags; *stream = &stream_token; return 0; }
EXPORT int cuStreamDestroy_v2(void* stream) { (void)stream; return 0; }
EXPORT int cuStreamSynchronize(void* stream) { (void)stream; state.synchronizations++; return 0; }
EXPORT int cuEventCreate(void** event, unsigned flags) { (void)flags; *event = &event_token; return 0; }
EXPORT int cuEventDestroy_v2(void* event) { (void)event; return 0; }
EXPORT int cuEventRecord(void* event, void* stream) { (void)event; (void)stream; return 0; }
EXPORT int cuEventSynchronize(void* event) { (void)event; return 0; }
EXPORT int cuEventElapsedTime(float* ms, void* start, void* end) { (void)start; (void)end; *ms = 1.5f; return 0; }
EXPORT int cuStreamBeginCapture_v2(void* stream, int mode) { (void)stream; (void)mode; return 0; }
EXPORT int cuStreamEndCapture(void* stream, void** graph) { (void)stream; *graph = &graph_token; return 0; }
EXPORT int cuGraphInstantiateWithFlags(void** exec, void* graph, unsigned long long flags) {
    (void)graph;
    (void)flags;
    *exec = &exec_token;
    return 0;
}
EXPORT int cuGraphLaunch(void* exec, void* stream) { (void)exec; (void)stream; return 0; }
EXPORT int cuGraphDestroy(void* graph) { (void)graph; return 0; }
EXPORT int cuGraphExecDestroy(void* exec) { (void)exec; return 0; }
