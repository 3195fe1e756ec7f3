/* A test double of the CUDA driver (libcuda.so.1) for the host side of the NVIDIA backend, loaded
 * through ZYFA_CUDA_LIBRARY. It exports every entry point zyfa resolves and behaves as the
 * environment says:
 *   FAKE_CUDA_INIT_ERROR=<CUresult>  cuInit fails with it (100 no device, 34 stub library)
 *   FAKE_CUDA_CC=<major><minor>      one device of that compute capability (default 90)
 *   FAKE_CUDA_SHARED_OPTIN=<bytes>   its opt-in shared memory per block (default 232448)
 * It records what zyfa asked for (module images, shared-memory limits, launches, the current
 * context stack) so tests can check the host logic; fake_cuda_state() returns the record. */
#include <stdint.h>
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
    return 0;
}

/* Helpers: plausible, never touching memory through the returned "device" pointers. */
EXPORT int cuMemAlloc_v2(unsigned long long* pointer, size_t bytes) {
    if (need_context()) return 201;
    state.allocations++;
    *pointer = (unsigned long long)(uintptr_t)malloc(bytes);
    return *pointer != 0 ? 0 : 2;
}
EXPORT int cuMemFree_v2(unsigned long long pointer) { free((void*)(uintptr_t)pointer); return 0; }
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
