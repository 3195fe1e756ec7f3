/*
 * libFuzzer target for the public C ABI on the CPU backend: zyfa_attn_supported,
 * zyfa_attn_kernel_name, zyfa_attn_fwd, zyfa_quantize_fp8 and zyfa_attn_merge with fuzzer-chosen params, strides,
 * dtypes, cu_seqlens, struct_size values and data (format: fuzz_input.h).
 *
 * The contract fuzzed is the one docs/api.md states: tensors are views whose memory the caller
 * guarantees, so this harness sizes every buffer from the request it passes (the largest element
 * offset the view can reach, in bytes, allocated exactly so that AddressSanitizer sees one byte
 * too far). A request whose memory the harness cannot provide (a span above a few MiB) goes only
 * to zyfa_attn_supported / zyfa_attn_kernel_name, which read no tensor data, unless the request
 * is malformed in a way the harness can tell (then every call must fail before touching memory).
 * Params structs are allocated with exactly struct_size bytes, so a read beyond it is caught.
 *
 * Checks (a failure prints the reason and aborts, which libFuzzer records as a crash):
 *  - no crash, no sanitizer report (the build adds ASan + UBSan);
 *  - every failure is INVALID_ARGUMENT or NOT_SUPPORTED, with a non-empty message;
 *  - zyfa_attn_supported, zyfa_attn_kernel_name and zyfa_attn_fwd agree on each request;
 *  - a malformed request the harness recognises fails; a request well formed by construction
 *    (constructed layouts, in-range fields) is supported, since the CPU backend runs every one;
 *  - a failed call leaves every output byte as it was (sentinel), a successful one writes no byte
 *    of the output buffer outside the view, and fills every lse entry;
 *  - a successful call leaves zyfa_last_error_message as it was.
 *
 * LLVMFuzzerTestOneInput is also linked into fuzz_regression_main.c, which replays the corpus in
 * the normal build (no libFuzzer needed).
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_input.h"
#include "zyfa.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
void fuzz_api_teardown(void);
/* Calls made so far, and how many of them ran attention or quantisation to completion. */
void fuzz_api_counts(long* calls, long* completed_runs);

/* Bounds that keep one input fast under ASan + UBSan (a few milliseconds at most). */
#define FUZZ_MAX_BUFFER_BYTES ((int64_t)2 << 20)
#define FUZZ_MAX_ATTN_MACS 400000.0 /* batch * heads_q * rows_q * keys * (head_dim_qk + head_dim_v) */
#define FUZZ_MAX_QUANT_ELEMENTS 400000.0
#define FUZZ_MAX_STRUCT_BYTES 8192
#define FUZZ_SENTINEL 0xA5
#define FUZZ_DUMMY_BYTES 64

/* ---- failure ------------------------------------------------------------------------------- */

static void fuzz_fail(const char* format, ...) {
    va_list args;
    va_start(args, format);
    fprintf(stderr, "zyfa fuzz contract violation: ");
    vfprintf(stderr, format, args);
    fprintf(stderr, "\n  last error message: \"%s\"\n", zyfa_last_error_message());
    va_end(args);
    fflush(stderr);
    abort();
}

/* ZYFA_FUZZ_VERBOSE=1 prints each request before it is made (to read a reproducer). */
static int verbose(void) {
    static int value = -1;
    if (value < 0) value = getenv("ZYFA_FUZZ_VERBOSE") != NULL;
    return value;
}

static void describe_tensor(const char* name, const zyfa_tensor* t, size_t buffer_bytes) {
    fprintf(stderr, "  %s: data %p dtype %d reserved %d strides batch %lld seq %lld head %lld, buffer %zu bytes\n", name,
            t->data, (int)t->dtype, (int)t->reserved, (long long)t->stride_batch, (long long)t->stride_seq,
            (long long)t->stride_head, buffer_bytes);
}

static void describe_cu(const char* name, const int32_t* cu, int64_t batch) {
    if (cu == NULL || batch < 0 || batch > FUZZ_MAX_VARLEN_BATCH) return;
    fprintf(stderr, "  %s:", name);
    for (int64_t i = 0; i <= batch; ++i) fprintf(stderr, " %d", (int)cu[i]);
    fprintf(stderr, "\n");
}

/* ---- memory -------------------------------------------------------------------------------- */

/* Every allocation of one input, released at its end. */
#define FUZZ_MAX_ALLOCATIONS 32
static void* g_allocations[FUZZ_MAX_ALLOCATIONS];
static int g_allocation_count;

static void* fuzz_alloc(size_t bytes, unsigned char fill) {
    if (g_allocation_count == FUZZ_MAX_ALLOCATIONS) fuzz_fail("harness: too many allocations");
    void* p = malloc(bytes > 0 ? bytes : 1);
    if (p == NULL) fuzz_fail("harness: out of memory for %zu bytes", bytes);
    memset(p, fill, bytes > 0 ? bytes : 1);
    g_allocations[g_allocation_count++] = p;
    return p;
}

static void fuzz_free_all(void) {
    for (int i = 0; i < g_allocation_count; ++i) free(g_allocations[i]);
    g_allocation_count = 0;
}

static int all_bytes_are(const void* p, size_t bytes, unsigned char value) {
    const unsigned char* b = (const unsigned char*)p;
    for (size_t i = 0; i < bytes; ++i) {
        if (b[i] != value) return 0;
    }
    return 1;
}

static long g_calls, g_completed_runs;

void fuzz_api_counts(long* calls, long* completed_runs) {
    *calls = g_calls;
    *completed_runs = g_completed_runs;
}

/* ---- contexts: created once (worker threads are started at creation) ----------------------- */

static zyfa_context* g_contexts[2];

static zyfa_context* fuzz_context(int which) {
    if (g_contexts[which] == NULL) {
        zyfa_context_options options;
        zyfa_context_options_init(&options, sizeof options);
        options.backend = ZYFA_BACKEND_CPU;
        options.num_threads = which + 1;
        if (zyfa_context_create(&options, &g_contexts[which]) != ZYFA_SUCCESS) {
            fuzz_fail("harness: cannot create a CPU context");
        }
    }
    return g_contexts[which];
}

void fuzz_api_teardown(void) {
    for (int i = 0; i < 2; ++i) {
        zyfa_context_destroy(g_contexts[i]);
        g_contexts[i] = NULL;
    }
}

/* ---- data ---------------------------------------------------------------------------------- */

static uint32_t next_random(uint32_t* state) {
    /* xorshift32; a zero state would stay zero */
    uint32_t x = *state != 0 ? *state : 0x9E3779B9u;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    *state = x;
    return x;
}

static int64_t dtype_bytes(int64_t dtype) {
    switch (dtype) {
        case ZYFA_DTYPE_FP32: return 4;
        case ZYFA_DTYPE_FP16:
        case ZYFA_DTYPE_BF16: return 2;
        case ZYFA_DTYPE_FP8_E4M3FN:
        case ZYFA_DTYPE_FP8_E4M3FNUZ:
        case ZYFA_DTYPE_INT8: return 1;
        default: return 0;
    }
}

static int is_fp8(int64_t dtype) { return dtype == ZYFA_DTYPE_FP8_E4M3FN || dtype == ZYFA_DTYPE_FP8_E4M3FNUZ; }

static uint16_t float_to_bf16(float x) {
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    return (uint16_t)(bits >> 16);
}

/* Normal fp16 values only (enough for inputs); mantissa truncated. */
static uint16_t float_to_fp16(float x) {
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    const uint32_t sign = (bits >> 16) & 0x8000u;
    const int32_t exponent = (int32_t)((bits >> 23) & 0xFFu) - 127 + 15;
    if (exponent <= 0) return (uint16_t)sign;
    if (exponent >= 31) return (uint16_t)(sign | 0x7BFFu);
    return (uint16_t)(sign | ((uint32_t)exponent << 10) | ((bits >> 13) & 0x3FFu));
}

/* Fills a buffer of `dtype` elements according to the data choice. */
static void fill_data(void* buffer, size_t bytes, int64_t dtype, int kind, uint32_t* state) {
    unsigned char* b = (unsigned char*)buffer;
    const int64_t element = dtype_bytes(dtype) > 0 ? dtype_bytes(dtype) : 1;
    const size_t count = bytes / (size_t)element;
    if (kind == FUZZ_DATA_BITS) {
        for (size_t i = 0; i < bytes; ++i) b[i] = (unsigned char)next_random(state);
        return;
    }
    if (kind == FUZZ_DATA_ZERO) {
        memset(b, 0, bytes);
        return;
    }
    for (size_t i = 0; i < count; ++i) {
        const float unit = (float)(next_random(state) >> 8) / (float)(1u << 23) - 1.0f; /* [-1, 1) */
        const int large = kind == FUZZ_DATA_LARGE;
        switch (dtype) {
            case ZYFA_DTYPE_FP32: {
                const float x = large ? unit * 3.0e38f : unit * 2.0f;
                memcpy(b + i * 4, &x, 4);
                break;
            }
            case ZYFA_DTYPE_BF16: {
                const uint16_t h = float_to_bf16(large ? unit * 3.0e38f : unit * 2.0f);
                memcpy(b + i * 2, &h, 2);
                break;
            }
            case ZYFA_DTYPE_FP16: {
                const uint16_t h = float_to_fp16(large ? unit * 65504.0f : unit * 2.0f);
                memcpy(b + i * 2, &h, 2);
                break;
            }
            default: {
                /* e4m3: sign + exponent/mantissa codes below the NaN codes of both variants (as
                 * INT8, values within +-127). */
                const uint32_t r = next_random(state);
                const uint8_t magnitude = large ? (uint8_t)(0x70 + (r & 0x0E)) : (uint8_t)(0x20 + (r & 0x3F));
                b[i] = (uint8_t)(magnitude | ((r >> 8) & 0x80));
                break;
            }
        }
    }
}

/* ---- struct_size --------------------------------------------------------------------------- */

/* The caller's struct as the library gets it: exactly struct_size bytes (at least the 4 of the
 * struct_size field), the first ones from the full struct, bytes beyond the known struct zero but
 * for one (the fuzzer's tail byte). */
typedef struct sized_struct {
    void* bytes;
    uint32_t struct_size;
    size_t readable;   /* what the library may read: min(struct_size, known size) */
    int dirty_tail;    /* a non-zero byte lies beyond the known struct */
    int implausible;   /* struct_size beyond the plausibility bound (api: uninitialised) */
} sized_struct;

static sized_struct make_sized_struct(const fuzz_size_choice* choice, const void* full, size_t known_size,
                                      const size_t* boundaries, size_t boundary_count) {
    sized_struct s;
    memset(&s, 0, sizeof s);
    size_t allocated = 0;
    switch (choice->kind) {
        case FUZZ_SIZE_CURRENT: s.struct_size = (uint32_t)known_size; break;
        case FUZZ_SIZE_BOUNDARY:
            s.struct_size = (uint32_t)boundaries[(uint64_t)choice->value % boundary_count];
            break;
        case FUZZ_SIZE_ANY: s.struct_size = (uint32_t)((uint64_t)choice->value % FUZZ_MAX_STRUCT_BYTES); break;
        default: s.struct_size = UINT32_MAX; break;
    }
    /* Larger than any real struct: zyfa rejects it without reading beyond the known size
     * (src/core/versioned_struct.hpp), so only the known struct is allocated. */
    s.implausible = s.struct_size > 4096;
    allocated = s.implausible ? known_size : s.struct_size;
    if (allocated < sizeof(uint32_t)) allocated = sizeof(uint32_t);
    unsigned char* bytes = (unsigned char*)fuzz_alloc(allocated, 0);
    memcpy(bytes, full, allocated < known_size ? allocated : known_size);
    memcpy(bytes, &s.struct_size, sizeof s.struct_size);
    if (allocated > known_size && choice->tail_byte != 0) {
        bytes[known_size + (uint64_t)choice->tail_pos % (allocated - known_size)] = choice->tail_byte;
        s.dirty_tail = !s.implausible;
    }
    s.bytes = bytes;
    s.readable = s.struct_size < known_size ? s.struct_size : known_size;
    return s;
}

#define FIELD_END(type, member) (offsetof(type, member) + sizeof(((type*)0)->member))
#define FIELD_WITHIN(type, member, size) (FIELD_END(type, member) <= (size))

/* ---- tensors ------------------------------------------------------------------------------- */

typedef struct tensor_plan {
    zyfa_tensor view;
    int64_t batch, rows, heads, dim; /* batch is 1 when packed */
    int constructed;                 /* layout non-overlapping by construction */
    int malformed;                   /* negative stride or int64 overflow: must be rejected */
    int has_elements;
    int64_t span_bytes;              /* valid when has_elements and not malformed */
    size_t buffer_bytes;
    unsigned char* buffer;           /* NULL when the span is too large to provide */
} tensor_plan;

static int64_t add_or_max(int64_t a, int64_t b, int* overflow) {
    int64_t r;
    if (__builtin_add_overflow(a, b, &r)) {
        *overflow = 1;
        return INT64_MAX;
    }
    return r;
}

static int64_t mul_or_max(int64_t a, int64_t b, int* overflow) {
    int64_t r;
    if (__builtin_mul_overflow(a, b, &r)) {
        *overflow = 1;
        return INT64_MAX;
    }
    return r;
}

/* Strides per the layout choice; shape: batch (1 when packed), rows, heads, dim. */
static tensor_plan plan_tensor(const fuzz_tensor_choice* c, int64_t dtype, int64_t batch, int64_t rows,
                               int64_t heads, int64_t dim, int packed) {
    tensor_plan t;
    memset(&t, 0, sizeof t);
    t.batch = packed ? 1 : batch;
    t.rows = rows;
    t.heads = heads;
    t.dim = dim;
    t.view.dtype = (zyfa_dtype)dtype;
    t.view.reserved = (int32_t)c->reserved;
    int overflow = 0;
    const int64_t pad = c->pad;
    const int64_t r = rows > 0 ? rows : 0, h = heads > 0 ? heads : 0, d = dim > 0 ? dim : 0;
    switch (c->layout) {
        case FUZZ_LAYOUT_DENSE:
        case FUZZ_LAYOUT_PADDED: {
            const int64_t p = c->layout == FUZZ_LAYOUT_PADDED ? pad : 0;
            t.view.stride_head = add_or_max(d, p, &overflow);
            t.view.stride_seq = add_or_max(mul_or_max(h, t.view.stride_head, &overflow), p, &overflow);
            t.view.stride_batch = add_or_max(mul_or_max(r, t.view.stride_seq, &overflow), p, &overflow);
            t.constructed = p >= 0 && !overflow;
            break;
        }
        case FUZZ_LAYOUT_HEAD_MAJOR:
            t.view.stride_seq = add_or_max(d, pad, &overflow);
            t.view.stride_head = add_or_max(mul_or_max(r, t.view.stride_seq, &overflow), pad, &overflow);
            t.view.stride_batch = add_or_max(mul_or_max(h, t.view.stride_head, &overflow), pad, &overflow);
            t.constructed = pad >= 0 && !overflow;
            break;
        default:
            t.view.stride_batch = c->stride[0];
            t.view.stride_seq = c->stride[1];
            t.view.stride_head = c->stride[2];
            t.constructed = 0;
            break;
    }

    /* What docs/api.md makes invalid whatever the rest: negative strides (stride_batch is
     * ignored when packed) and element or byte offsets that overflow int64. */
    if (t.view.stride_seq < 0 || t.view.stride_head < 0 || (!packed && t.view.stride_batch < 0)) t.malformed = 1;
    t.has_elements = t.batch > 0 && t.rows > 0 && t.heads > 0 && t.dim > 0;
    if (t.has_elements && !t.malformed) {
        int span_overflow = 0;
        int64_t span = t.dim;
        const int64_t strides[3] = {packed ? 0 : t.view.stride_batch, t.view.stride_seq, t.view.stride_head};
        const int64_t sizes[3] = {t.batch, t.rows, t.heads};
        for (int i = 0; i < 3; ++i) {
            if (sizes[i] > 1) span = add_or_max(span, mul_or_max(strides[i], sizes[i] - 1, &span_overflow), &span_overflow);
        }
        const int64_t element = dtype_bytes(dtype);
        if (element > 0) t.span_bytes = mul_or_max(span, element, &span_overflow);
        if (span_overflow) t.malformed = 1;
    }
    if (!t.has_elements) t.span_bytes = 0;
    return t;
}

/* Allocates the tensor's memory when it can be provided; otherwise a small dummy, which a
 * well-behaved library never touches because the harness then expects the call to fail or does
 * not make it. */
static void back_tensor(tensor_plan* t, int null_data, int is_input, int data_kind, uint32_t* state) {
    const int providable = !t->malformed && dtype_bytes(t->view.dtype) > 0 && t->span_bytes <= FUZZ_MAX_BUFFER_BYTES;
    t->buffer_bytes = providable ? (size_t)t->span_bytes : FUZZ_DUMMY_BYTES;
    t->buffer = (unsigned char*)fuzz_alloc(t->buffer_bytes, FUZZ_SENTINEL);
    if (is_input && providable) fill_data(t->buffer, t->buffer_bytes, t->view.dtype, data_kind, state);
    if (!providable && t->has_elements) t->buffer_bytes = 0; /* marks "not provided" */
    t->view.data = null_data ? NULL : t->buffer;
}

static int tensor_provided(const tensor_plan* t) { return !t->has_elements || t->buffer_bytes > 0; }

/* The bytes a view reaches, per the harness's own reading of zyfa.h (0 when it has none). */
static int64_t tensor_bytes(const tensor_plan* t) { return t->has_elements && !t->malformed ? t->span_bytes : 0; }

/* Whether [a, a + a_bytes) and [b, b + b_bytes) share a byte (NULL or 0 bytes: never). */
static int ranges_overlap(const void* a, int64_t a_bytes, const void* b, int64_t b_bytes) {
    if (a == NULL || b == NULL || a_bytes <= 0 || b_bytes <= 0) return 0;
    const uintptr_t a0 = (uintptr_t)a, b0 = (uintptr_t)b;
    const uintptr_t a1 = (uint64_t)a_bytes > UINTPTR_MAX - a0 ? UINTPTR_MAX : a0 + (uintptr_t)a_bytes;
    const uintptr_t b1 = (uint64_t)b_bytes > UINTPTR_MAX - b0 ? UINTPTR_MAX : b0 + (uintptr_t)b_bytes;
    return a0 < b1 && b0 < a1;
}

static int misaligned(const void* pointer, int64_t alignment) {
    return pointer != NULL && alignment > 1 && (uintptr_t)pointer % (uintptr_t)alignment != 0;
}

/* A NaN in the first element of a buffer of `dtype`. */
static void plant_nan(void* data, int64_t dtype) {
    switch (dtype) {
        case ZYFA_DTYPE_FP32: { const uint32_t bits = 0x7FC00000u; memcpy(data, &bits, 4); break; }
        case ZYFA_DTYPE_BF16: { const uint16_t bits = 0x7FC0u; memcpy(data, &bits, 2); break; }
        case ZYFA_DTYPE_FP16: { const uint16_t bits = 0x7E00u; memcpy(data, &bits, 2); break; }
        case ZYFA_DTYPE_FP8_E4M3FN: *(uint8_t*)data = 0x7F; break;
        case ZYFA_DTYPE_FP8_E4M3FNUZ: *(uint8_t*)data = 0x80; break;
        default: break;
    }
}

/* After a successful call: no byte of the output buffer outside the view was written. */
static void check_gaps_untouched(const tensor_plan* t, const char* name) {
    if (!t->has_elements || t->buffer_bytes == 0 || t->view.data == NULL) return;
    const int64_t element = dtype_bytes(t->view.dtype);
    unsigned char* in_view = (unsigned char*)calloc(t->buffer_bytes, 1);
    if (in_view == NULL) fuzz_fail("harness: out of memory");
    for (int64_t b = 0; b < t->batch; ++b) {
        for (int64_t s = 0; s < t->rows; ++s) {
            for (int64_t h = 0; h < t->heads; ++h) {
                const int64_t offset = (b * t->view.stride_batch + s * t->view.stride_seq + h * t->view.stride_head) * element;
                memset(in_view + offset, 1, (size_t)(t->dim * element));
            }
        }
    }
    for (size_t i = 0; i < t->buffer_bytes; ++i) {
        if (!in_view[i] && t->buffer[i] != FUZZ_SENTINEL) {
            free(in_view);
            fuzz_fail("%s: byte %zu of the buffer lies outside the view but was written", name, i);
        }
    }
    free(in_view);
}

/* ---- packed lengths ------------------------------------------------------------------------ */

typedef struct cu_plan {
    int32_t* values; /* batch + 1 entries, or NULL */
    int well_formed; /* starts at 0, never decreases, lengths <= max_len */
    int64_t total;   /* values[batch] when well formed */
} cu_plan;

static cu_plan plan_cu(int kind, const int64_t* choice, int64_t batch, int64_t max_len) {
    cu_plan cu;
    memset(&cu, 0, sizeof cu);
    if (batch < 0 || batch > FUZZ_MAX_VARLEN_BATCH) return cu;
    cu.values = (int32_t*)fuzz_alloc(sizeof(int32_t) * (size_t)(batch + 1), 0);
    if (kind == FUZZ_VARLEN_RAW) {
        for (int64_t i = 0; i <= batch; ++i) cu.values[i] = (int32_t)(uint32_t)(uint64_t)choice[i];
    } else {
        /* Lengths value % (max_len + 1), bounded so the prefix sums stay far from INT32_MAX. */
        const int64_t bound = max_len < 0 ? 0 : max_len > (1 << 20) ? (1 << 20) : max_len;
        int64_t sum = 0;
        for (int64_t i = 0; i < batch; ++i) {
            cu.values[i] = (int32_t)sum;
            sum += (int64_t)((uint64_t)choice[i] % (uint64_t)(bound + 1));
        }
        cu.values[batch] = (int32_t)sum;
    }
    cu.well_formed = cu.values[0] == 0;
    for (int64_t i = 0; i < batch && cu.well_formed; ++i) {
        const int64_t length = (int64_t)cu.values[i + 1] - cu.values[i];
        if (length < 0 || length > max_len) cu.well_formed = 0;
    }
    cu.total = cu.well_formed ? cu.values[batch] : 0;
    return cu;
}

/* ---- results ------------------------------------------------------------------------------- */

static void check_message_present(const char* call) {
    const char* message = zyfa_last_error_message();
    if (message == NULL || message[0] == '\0') fuzz_fail("%s failed with an empty message", call);
}

static void check_failure_status(zyfa_status status, const char* call) {
    if (status != ZYFA_ERROR_INVALID_ARGUMENT && status != ZYFA_ERROR_NOT_SUPPORTED) {
        fuzz_fail("%s returned %d (%s), expected SUCCESS, INVALID_ARGUMENT or NOT_SUPPORTED", call, (int)status,
                  zyfa_status_string(status));
    }
    check_message_present(call);
}

/* The expectation the harness can derive from the request alone. */
enum expectation { EXPECT_ANY, EXPECT_FAILURE, EXPECT_SUCCESS };

static void check_expectation(enum expectation expected, zyfa_status status, const char* call) {
    if (expected == EXPECT_FAILURE && status == ZYFA_SUCCESS) fuzz_fail("%s accepted a malformed request", call);
    if (expected == EXPECT_SUCCESS && status != ZYFA_SUCCESS) {
        fuzz_fail("%s rejected a well-formed request with %s", call, zyfa_status_string(status));
    }
}

/* Message before a call, to check that success leaves it as it was. */
static char g_message_before[1200];

static void remember_message(void) {
    snprintf(g_message_before, sizeof g_message_before, "%s", zyfa_last_error_message());
}

static void check_message_kept(const char* call) {
    if (strncmp(g_message_before, zyfa_last_error_message(), sizeof g_message_before - 1) != 0) {
        fuzz_fail("%s succeeded but changed zyfa_last_error_message", call);
    }
}

/* ---- attention ----------------------------------------------------------------------------- */

static const size_t kAttnBoundaries[] = {
    FIELD_END(zyfa_attn_params, head_dim_v), /* the smallest accepted */
    FIELD_END(zyfa_attn_params, softmax_scale), FIELD_END(zyfa_attn_params, softmax),
    FIELD_END(zyfa_attn_params, window_left), FIELD_END(zyfa_attn_params, window_right),
    FIELD_END(zyfa_attn_params, cu_seqlens_q), FIELD_END(zyfa_attn_params, cu_seqlens_k),
    FIELD_END(zyfa_attn_params, q_descale), FIELD_END(zyfa_attn_params, k_descale),
    FIELD_END(zyfa_attn_params, v_descale), FIELD_END(zyfa_attn_params, lse),
    FIELD_END(zyfa_attn_params, flags), /* 0.1's struct */
    0, 4, FIELD_END(zyfa_attn_params, head_dim_qk), /* too small */
    offsetof(zyfa_attn_params, window_left) + 2,     /* cuts a field in two */
    /* Fixed: a new entry would change value % count, and with it what older corpus inputs ask
     * for. The sizes around key_block and reserved (136 to 144) come from FUZZ_SIZE_ANY. */
};

/* The params the library acts on: fields beyond struct_size at their defaults (docs/api.md). */
static zyfa_attn_params effective_attn_params(const zyfa_attn_params* full, size_t readable) {
    zyfa_attn_params e;
    zyfa_attn_params_init(&e, sizeof e);
#define TAKE(member) \
    if (FIELD_WITHIN(zyfa_attn_params, member, readable)) e.member = full->member;
    TAKE(mask) TAKE(batch) TAKE(seqlen_q) TAKE(seqlen_k) TAKE(heads_q) TAKE(heads_kv) TAKE(head_dim_qk)
    TAKE(head_dim_v) TAKE(softmax_scale) TAKE(softmax) TAKE(window_left) TAKE(window_right)
    TAKE(cu_seqlens_q) TAKE(cu_seqlens_k) TAKE(q_descale) TAKE(k_descale) TAKE(v_descale) TAKE(lse) TAKE(flags)
    TAKE(key_block) TAKE(reserved) TAKE(sinks)
#undef TAKE
    return e;
}

static float choose_scale(uint8_t kind, int64_t value) {
    if (kind == 0) return 0.0f;
    if (kind == 1) return (float)value / 16.0f;
    const uint32_t bits = (uint32_t)(uint64_t)value;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* dtype fields are int32_t: the harness reasons about the value the library sees. */
static int64_t as_int32(int64_t value) { return (int32_t)(uint32_t)(uint64_t)value; }

static int64_t resolve_dtype(int64_t chosen, int64_t q_dtype) { return chosen == 0 ? q_dtype : as_int32(chosen); }

static void fuzz_attention(const fuzz_choice* c) {
    const fuzz_attn_choice* a = &c->attn;
    uint32_t state = c->seed;
    zyfa_context* ctx = fuzz_context(c->context);

    const int64_t q_dtype = as_int32(a->q.dtype);
    const int64_t k_dtype = resolve_dtype(a->k.dtype, q_dtype), v_dtype = resolve_dtype(a->v.dtype, q_dtype);
    const int64_t o_dtype = as_int32(a->o.dtype);

    zyfa_attn_params full;
    zyfa_attn_params_init(&full, sizeof full);
    full.mask = (zyfa_mask)a->mask;
    full.batch = a->batch;
    full.seqlen_q = a->seqlen_q;
    full.seqlen_k = a->seqlen_k;
    full.heads_q = a->heads_q;
    full.heads_kv = a->heads_kv;
    full.head_dim_qk = a->head_dim_qk;
    full.head_dim_v = a->head_dim_v;
    full.softmax_scale = choose_scale(a->scale_kind, a->scale_value);
    full.softmax = (zyfa_softmax)a->softmax;
    full.window_left = (int32_t)a->window_left;
    full.window_right = (int32_t)a->window_right;
    full.flags = (uint64_t)a->flags;
    full.key_block = (int32_t)as_int32(fuzz_key_block(a));
    full.reserved = fuzz_reserved(a);

    /* Packed lengths: arrays of batch + 1 entries, or none. */
    cu_plan cu_q = {NULL, 0, 0}, cu_k = {NULL, 0, 0};
    if (a->varlen != FUZZ_VARLEN_NONE) {
        const int kind = a->varlen == FUZZ_VARLEN_RAW ? FUZZ_VARLEN_RAW : FUZZ_VARLEN_LENGTHS;
        if (a->varlen != FUZZ_VARLEN_K_ONLY) cu_q = plan_cu(kind, a->cu_q, a->batch, a->seqlen_q);
        if (a->varlen != FUZZ_VARLEN_Q_ONLY) cu_k = plan_cu(kind, a->cu_k, a->batch, a->seqlen_k);
    }
    full.cu_seqlens_q = cu_q.values;
    full.cu_seqlens_k = cu_k.values;

    /* Pointers are needed before the struct is sized: descales [batch, heads_kv], lse. Each is
     * real memory of the documented size when that size is small, else a dummy. */
    int64_t descale_count = -1;
    int descale_overflow = 0;
    if (a->batch >= 0 && a->heads_kv > 0) {
        descale_count = mul_or_max(a->batch, a->heads_kv, &descale_overflow);
        (void)mul_or_max(descale_count, 4, &descale_overflow);
    }
    const int descale_provided = descale_count >= 0 && !descale_overflow && descale_count <= (1 << 16);
    float* descale_memory[3] = {NULL, NULL, NULL};
    for (int i = 0; i < 3; ++i) {
        if (!(a->descales & (1 << i))) continue;
        const size_t count = descale_provided ? (size_t)descale_count : 1;
        descale_memory[i] = (float*)fuzz_alloc(count * sizeof(float), 0);
        if (c->data == FUZZ_DATA_BITS) {
            fill_data(descale_memory[i], count * sizeof(float), ZYFA_DTYPE_FP32, FUZZ_DATA_BITS, &state);
        } else {
            for (size_t j = 0; j < count; ++j) descale_memory[i][j] = 0.25f + (float)(next_random(&state) % 8) * 0.25f;
        }
    }
    full.q_descale = descale_memory[0];
    full.k_descale = descale_memory[1];
    full.v_descale = descale_memory[2];

    /* The struct as passed; then the params the library acts on. */
    const sized_struct passed = make_sized_struct(&a->size, &full, sizeof full, kAttnBoundaries,
                                                  sizeof kAttnBoundaries / sizeof kAttnBoundaries[0]);
    zyfa_attn_params e = effective_attn_params(&full, passed.readable);
    const int packed = e.cu_seqlens_q != NULL && e.cu_seqlens_k != NULL;
    const int64_t rows_q = packed ? cu_q.total : e.seqlen_q;
    const int64_t rows_k = packed ? cu_k.total : e.seqlen_k;

    tensor_plan q = plan_tensor(&a->q, q_dtype, e.batch, rows_q, e.heads_q, e.head_dim_qk, packed);
    tensor_plan k = plan_tensor(&a->k, k_dtype, e.batch, rows_k, e.heads_kv, e.head_dim_qk, packed);
    /* ZYFA_ATTN_V_TRANSPOSED: v's rows are 16-key groups (seqlen_k padded to 128 keys) of 16 *
     * head_dim_v bytes (docs/api.md), planned as the validator reads them; packed keys are refused. */
    const int v_transposed = (e.flags & ZYFA_ATTN_V_TRANSPOSED) != 0;
    const int64_t vt_groups = e.seqlen_k >= 0 && e.seqlen_k <= INT32_MAX ? (e.seqlen_k + 127) / 128 * 8 : e.seqlen_k;
    const int64_t vt_dim = e.head_dim_v > 0 && e.head_dim_v <= 512 ? 16 * e.head_dim_v : e.head_dim_v;
    tensor_plan v = v_transposed ? plan_tensor(&a->v, v_dtype, e.batch, vt_groups, e.heads_kv, vt_dim, 0)
                                 : plan_tensor(&a->v, v_dtype, e.batch, rows_k, e.heads_kv, e.head_dim_v, packed);
    tensor_plan o = plan_tensor(&a->o, o_dtype, e.batch, rows_q, e.heads_q, e.head_dim_v, packed);
    back_tensor(&q, a->q.null_data, 1, c->data, &state);
    back_tensor(&k, a->k.null_data, 1, c->data, &state);
    back_tensor(&v, a->v.null_data, 1, c->data, &state);
    back_tensor(&o, a->o.null_data, 0, c->data, &state);

    /* lse: [batch, heads_q, seqlen_q], or [heads_q, total_q] when packed. Its pointer goes into
     * the passed struct only when the field lies within struct_size. */
    int lse_overflow = 0;
    int64_t lse_count = 0;
    if (e.batch >= 0 && e.seqlen_q >= 0 && e.heads_q > 0) {
        lse_count = mul_or_max(packed ? rows_q : mul_or_max(e.batch, e.seqlen_q, &lse_overflow), e.heads_q, &lse_overflow);
        (void)mul_or_max(lse_count, 4, &lse_overflow);
    }
    const int lse_provided = !lse_overflow && lse_count <= (1 << 18);
    size_t lse_bytes = (lse_provided ? (size_t)lse_count : 1) * sizeof(float);
    float* lse_memory = a->lse ? (float*)fuzz_alloc(lse_bytes, FUZZ_SENTINEL) : NULL;

    /* Twists: each makes the request malformed when the buffers it touches have bytes. */
    int twisted_bad = 0;
    int nan_planted = 0;
    if (a->twist == FUZZ_ATTN_TWIST_Q_ODD && q.view.data != NULL) {
        q.view.data = (unsigned char*)q.view.data + 1;
        twisted_bad = tensor_bytes(&q) > 0 && dtype_bytes(q_dtype) > 1;
        if (!twisted_bad) q.view.data = (unsigned char*)q.view.data - 1; /* keep the rest of the run honest */
    } else if (a->twist == FUZZ_ATTN_TWIST_LSE_ODD && lse_memory != NULL && lse_count > 0 && lse_provided &&
               FIELD_WITHIN(zyfa_attn_params, lse, passed.readable)) { /* an older caller passes no lse */
        lse_memory = (float*)(void*)((unsigned char*)lse_memory + 2);
        lse_bytes -= 2; /* what the sentinel check may read */
        twisted_bad = 1;
    } else if (a->twist == FUZZ_ATTN_TWIST_O_IS_K && o.view.data != NULL && k.view.data != NULL &&
               tensor_bytes(&o) > 0 && tensor_bytes(&k) > 0) {
        o.view.data = k.view.data;
    } else if (a->twist == FUZZ_ATTN_TWIST_LSE_IN_O && lse_memory != NULL && o.view.data != NULL &&
               tensor_bytes(&o) > 0 && lse_count > 0 && FIELD_WITHIN(zyfa_attn_params, lse, passed.readable)) {
        lse_memory = (float*)o.view.data;
        lse_bytes = o.buffer_bytes < lse_bytes ? o.buffer_bytes : lse_bytes;
    } else if (a->twist == FUZZ_ATTN_TWIST_NAN_Q && q.buffer_bytes > 0 && q.view.data != NULL &&
               c->data != FUZZ_DATA_BITS && q_dtype != ZYFA_DTYPE_INT8) { /* INT8 has no NaN */
        plant_nan(q.view.data, q_dtype);
        nan_planted = 1;
    }
    if (lse_memory != NULL && FIELD_WITHIN(zyfa_attn_params, lse, passed.readable)) {
        ((zyfa_attn_params*)passed.bytes)->lse = lse_memory;
        e.lse = lse_memory;
    }

    /* key_bias (0.1.6): fp32 [batch, heads_q, seqlen_k], or [heads_q, total_k] when packed; read
     * only when the field lies within struct_size. Small values: scores stay finite. */
    int bias_overflow = 0;
    int64_t bias_count = 0;
    if (e.batch >= 0 && e.seqlen_k >= 0 && e.heads_q > 0) {
        bias_count = mul_or_max(packed ? rows_k : mul_or_max(e.batch, e.seqlen_k, &bias_overflow), e.heads_q, &bias_overflow);
        (void)mul_or_max(bias_count, 4, &bias_overflow);
    }
    const int bias_provided = !bias_overflow && bias_count <= (1 << 18);
    const int bias_kind = FIELD_WITHIN(zyfa_attn_params, key_bias, passed.readable) ? a->key_bias_kind : FUZZ_KEY_BIAS_NONE;
    float* bias_memory = NULL;
    size_t bias_bytes = 0;
    if (bias_kind == FUZZ_KEY_BIAS_BUFFER || bias_kind == FUZZ_KEY_BIAS_ODD) {
        bias_bytes = (bias_provided ? (size_t)bias_count : 1) * sizeof(float) + 4;
        bias_memory = (float*)fuzz_alloc(bias_bytes, 0);
        for (size_t i = 0; i < bias_bytes / sizeof(float); ++i) bias_memory[i] = (float)((int)(next_random(&state) % 9) - 4) * 0.25f;
        if (bias_kind == FUZZ_KEY_BIAS_ODD) bias_memory = (float*)(void*)((unsigned char*)bias_memory + 2);
    } else if (bias_kind == FUZZ_KEY_BIAS_IN_O && o.view.data != NULL) {
        bias_memory = (float*)o.view.data;
    }
    if (bias_memory != NULL) {
        ((zyfa_attn_params*)passed.bytes)->key_bias = bias_memory;
        e.key_bias = bias_memory;
    }
    const unsigned char* bias_before = NULL;
    if (bias_kind == FUZZ_KEY_BIAS_BUFFER && bias_provided) {  /* (the misaligned one is never read) */
        unsigned char* copy = (unsigned char*)fuzz_alloc((size_t)bias_count * sizeof(float) + 1, 0);
        memcpy(copy, bias_memory, (size_t)bias_count * sizeof(float));
        bias_before = copy;
    }

    /* ---- what the harness can tell from the request (docs/api.md) ---- */
    const int q_known = dtype_bytes(q_dtype) > 0;
    const int fp8 = is_fp8(q_dtype);
    /* The INT8 Q/K mode: q and k INT8, v FP8; FP8's per-head q/k descales are refused there. */
    const int int8 = q_dtype == ZYFA_DTYPE_INT8;
    const int has_descale = e.q_descale != NULL || e.k_descale != NULL || e.v_descale != NULL;
    const int size_ok = passed.struct_size >= FIELD_END(zyfa_attn_params, head_dim_v) && !passed.implausible;
    /* No query row: nothing to write. seqlen_k = 0 with queries writes O = 0 and lse = -inf. */
    const int64_t empty = e.batch == 0 || e.seqlen_q == 0;
    const int64_t lse_reach = e.lse != NULL && !lse_overflow ? lse_count * 4 : 0;
    const int64_t descale_reach = has_descale && !descale_overflow && descale_count > 0 ? descale_count * 4 : 0;
    const int64_t cu_reach = packed && e.batch > 0 && !empty ? (e.batch + 1) * 4 : 0;
    /* The validator reads only what a row may read: nothing for an empty problem. */
    const int64_t bias_reach = e.key_bias != NULL && !bias_overflow && !empty ? bias_count * 4 : 0;
    const void* inputs[8] = {q.view.data, k.view.data, v.view.data, e.cu_seqlens_q, e.cu_seqlens_k,
                             e.q_descale, e.k_descale, e.v_descale};
    const int64_t input_bytes[8] = {tensor_bytes(&q), tensor_bytes(&k), tensor_bytes(&v), cu_reach, cu_reach,
                                    descale_reach, descale_reach, descale_reach};
    int aliased = ranges_overlap(o.view.data, tensor_bytes(&o), e.lse, lse_reach) ||
                  ranges_overlap(o.view.data, tensor_bytes(&o), e.key_bias, bias_reach) ||
                  ranges_overlap(e.lse, lse_reach, e.key_bias, bias_reach);
    for (int i = 0; i < 8; ++i) {
        aliased |= ranges_overlap(o.view.data, tensor_bytes(&o), inputs[i], input_bytes[i]);
        aliased |= ranges_overlap(e.lse, lse_reach, inputs[i], input_bytes[i]);
    }
    const int misaligned_any =
        (tensor_bytes(&q) > 0 && misaligned(q.view.data, dtype_bytes(q_dtype))) ||
        (tensor_bytes(&o) > 0 && misaligned(o.view.data, dtype_bytes(o_dtype))) || (lse_reach > 0 && misaligned(e.lse, 4)) ||
        (bias_reach > 0 && misaligned(e.key_bias, 4));
    int malformed = !size_ok || (e.flags & ~(uint64_t)ZYFA_ATTN_V_TRANSPOSED) != 0 ||
                    (v_transposed && (!is_fp8(v_dtype) || e.cu_seqlens_k != NULL || e.seqlen_k > INT32_MAX)) ||
                    (e.key_block != 0 && e.key_block != 64 && e.key_block != 128) ||
                    e.batch < 0 || e.seqlen_q < 0 || e.seqlen_k < 0 ||
                    e.heads_q <= 0 || e.heads_kv <= 0 || e.head_dim_qk <= 0 || e.head_dim_qk > 512 ||
                    e.head_dim_v <= 0 || e.head_dim_v > 512 || (e.heads_kv > 0 && e.heads_q % e.heads_kv != 0) ||
                    (e.mask != ZYFA_MASK_NONE && e.mask != ZYFA_MASK_CAUSAL && e.mask != ZYFA_MASK_CAUSAL_BOTTOM_RIGHT) ||
                    (e.softmax != ZYFA_SOFTMAX_AUTO && e.softmax != ZYFA_SOFTMAX_EXACT && e.softmax != ZYFA_SOFTMAX_LEAN) ||
                    e.window_left < -1 || e.window_right < -1 || !isfinite(e.softmax_scale) ||
                    q.view.reserved != 0 || k.view.reserved != 0 || v.view.reserved != 0 || o.view.reserved != 0 ||
                    !q_known ||
                    (int8 ? (k_dtype != ZYFA_DTYPE_INT8 || !is_fp8(v_dtype)) : (k_dtype != q_dtype || v_dtype != q_dtype)) ||
                    (o_dtype != ZYFA_DTYPE_BF16 && o_dtype != ZYFA_DTYPE_FP16 && o_dtype != ZYFA_DTYPE_FP32) ||
                    (!fp8 && !int8 && has_descale) || (int8 && (e.q_descale != NULL || e.k_descale != NULL)) ||
                    ((e.cu_seqlens_q == NULL) != (e.cu_seqlens_k == NULL)) ||
                    (packed && (!cu_q.well_formed || !cu_k.well_formed)) || q.malformed || k.malformed ||
                    v.malformed || o.malformed ||
                    (!empty && ((q.has_elements && q.view.data == NULL) || (k.has_elements && k.view.data == NULL) ||
                                (v.has_elements && v.view.data == NULL) || (o.has_elements && o.view.data == NULL))) ||
                    (e.lse != NULL && lse_overflow) || (has_descale && descale_overflow) ||
                    (e.key_bias != NULL && bias_overflow) || aliased ||
                    misaligned_any || twisted_bad;
    /* NOT_SUPPORTED comes only after every INVALID check; a newer caller's field set is either. */
    /* reserved is the tail padding spelled out, a later field's place: like a dirty tail. */
    const int unsupported = passed.dirty_tail || e.reserved != 0 || (!fp8 && !int8 && e.softmax == ZYFA_SOFTMAX_LEAN) ||
                            (int8 && e.head_dim_qk > 256) || (int8 && e.key_bias != NULL);
    const int well_formed = !malformed && !unsupported && q.constructed && k.constructed && v.constructed &&
                            o.constructed;
    const enum expectation expected = (malformed || unsupported) ? EXPECT_FAILURE
                                      : well_formed              ? EXPECT_SUCCESS
                                                                 : EXPECT_ANY;

    /* Whether the memory a run would touch exists, and the run is cheap enough. */
    /* Packed: every query row sees at most seqlen_k keys of its own sequence. */
    const double query_rows = packed ? (double)rows_q : (double)e.batch * (double)e.seqlen_q;
    const double macs = (query_rows > 0 ? query_rows : 0) * (double)e.heads_q * (double)e.seqlen_k *
                        ((double)e.head_dim_qk + (double)e.head_dim_v);
    const int memory_provided = tensor_provided(&q) && tensor_provided(&k) && tensor_provided(&v) &&
                                tensor_provided(&o) && (e.lse == NULL || lse_provided) &&
                                (e.key_bias == NULL || bias_provided) &&
                                (!has_descale || descale_provided);
    const int may_run = expected == EXPECT_FAILURE || (memory_provided && macs <= FUZZ_MAX_ATTN_MACS);

    const zyfa_attn_params* p = (const zyfa_attn_params*)passed.bytes;

    if (verbose()) {
        fprintf(stderr, "attn: struct_size %u (readable %zu) mask %d batch %lld seqlen %lld/%lld heads %lld/%lld "
                "dims %lld/%lld scale %g softmax %d window %d/%d flags %llu key_block %d reserved %d lse %p "
                "descales %p %p %p; expect %d, may run %d, macs %.0f\n",
                passed.struct_size, passed.readable, (int)e.mask, (long long)e.batch, (long long)e.seqlen_q,
                (long long)e.seqlen_k, (long long)e.heads_q, (long long)e.heads_kv, (long long)e.head_dim_qk,
                (long long)e.head_dim_v, (double)e.softmax_scale, (int)e.softmax, (int)e.window_left,
                (int)e.window_right, (unsigned long long)e.flags, (int)e.key_block, (int)e.reserved, (void*)e.lse,
                (const void*)e.q_descale,
                (const void*)e.k_descale, (const void*)e.v_descale, (int)expected, may_run, macs);
        describe_cu("cu_seqlens_q", e.cu_seqlens_q, e.batch);
        describe_cu("cu_seqlens_k", e.cu_seqlens_k, e.batch);
        describe_tensor("q", &q.view, q.buffer_bytes);
        describe_tensor("k", &k.view, k.buffer_bytes);
        describe_tensor("v", &v.view, v.buffer_bytes);
        describe_tensor("o", &o.view, o.buffer_bytes);
    }

    /* ---- zyfa_attn_supported and zyfa_attn_kernel_name agree ---- */
    remember_message();
    g_calls += 2;
    const zyfa_status supported = zyfa_attn_supported(ctx, p, &q.view, &k.view, &v.view, &o.view);
    if (supported != ZYFA_SUCCESS) {
        check_failure_status(supported, "zyfa_attn_supported");
    } else {
        check_message_kept("zyfa_attn_supported");
    }
    check_expectation(expected, supported, "zyfa_attn_supported");
    const char* name = zyfa_attn_kernel_name(ctx, p, &q.view, &k.view, &v.view, &o.view);
    if ((name != NULL) != (supported == ZYFA_SUCCESS)) {
        fuzz_fail("zyfa_attn_kernel_name gave %s but zyfa_attn_supported %s", name ? name : "NULL",
                  zyfa_status_string(supported));
    }
    if (name != NULL && (name[0] == '\0' || strlen(name) > 256)) fuzz_fail("kernel name \"%s\" is empty or long", name);
    if (name == NULL) check_message_present("zyfa_attn_kernel_name");

    if (!may_run) return;

    /* ---- zyfa_attn_fwd ---- */
    remember_message();
    g_calls++;
    const zyfa_status status = zyfa_attn_fwd(ctx, p, &q.view, &k.view, &v.view, &o.view, NULL);
    if (status != supported) {
        fuzz_fail("zyfa_attn_fwd returned %s but zyfa_attn_supported %s", zyfa_status_string(status),
                  zyfa_status_string(supported));
    }
    if (status != ZYFA_SUCCESS || empty) {
        if (status != ZYFA_SUCCESS) check_failure_status(status, "zyfa_attn_fwd");
        if (!all_bytes_are(o.buffer, o.buffer_bytes, FUZZ_SENTINEL)) {
            fuzz_fail("zyfa_attn_fwd %s but wrote to o", status == ZYFA_SUCCESS ? "had an empty problem" : "failed");
        }
        if (lse_memory != NULL && !all_bytes_are(lse_memory, lse_bytes, FUZZ_SENTINEL)) {
            fuzz_fail("zyfa_attn_fwd %s but wrote to lse", status == ZYFA_SUCCESS ? "had an empty problem" : "failed");
        }
        return;
    }
    check_message_kept("zyfa_attn_fwd");
    if (!empty) g_completed_runs++;
    const int small_scores = (c->data == FUZZ_DATA_SMOOTH || c->data == FUZZ_DATA_ZERO) && fabsf(e.softmax_scale) <= 64.0f;
    check_gaps_untouched(&o, "o");
    /* Every lse entry is written (a row that sees no key gets -inf). Random bit inputs could in
     * principle produce the sentinel's value, so only smooth data is checked. */
    if (e.lse != NULL && c->data != FUZZ_DATA_BITS) {
        for (int64_t i = 0; i < lse_count; ++i) {
            if (all_bytes_are(&lse_memory[i], sizeof(float), FUZZ_SENTINEL)) fuzz_fail("lse[%lld] was not written", (long long)i);
            /* Small finite inputs never make a NaN row (large ones may overflow a score to +inf,
             * which zyfa.h makes NaN); the planted NaN (q element 0) makes row 0's. */
            if (small_scores && isnan(lse_memory[i]) && !(nan_planted && i == 0)) {
                fuzz_fail("lse[%lld] is NaN for small finite inputs", (long long)i);
            }
        }
        if (nan_planted && lse_count > 0 && !(isnan(lse_memory[0]) || (isinf(lse_memory[0]) && lse_memory[0] < 0))) {
            fuzz_fail("q element 0 is NaN but lse[0] = %g (want NaN, or -inf when the row sees no key)", (double)lse_memory[0]);
        }
    }
    if (lse_memory != NULL && e.lse == NULL && !all_bytes_are(lse_memory, lse_bytes, FUZZ_SENTINEL)) {
        fuzz_fail("lse lies beyond struct_size but was written");
    }
    if (bias_before != NULL && memcmp(bias_before, bias_memory, (size_t)bias_count * sizeof(float)) != 0) {
        fuzz_fail("zyfa_attn_fwd wrote to key_bias, an input");
    }
}

/* ---- quantisation -------------------------------------------------------------------------- */

static const size_t kQuantBoundaries[] = {
    FIELD_END(zyfa_quant_params, head_dim),    /* the smallest accepted */
    FIELD_END(zyfa_quant_params, cu_seqlens),  /* 0.1's sizeof */
    FIELD_END(zyfa_quant_params, smooth_mean), /* 0.1.4's sizeof */
    FIELD_END(zyfa_quant_params, reserved2),   /* = sizeof (0.1.6: the key bias's fields) */
    0, 4, FIELD_END(zyfa_quant_params, heads), offsetof(zyfa_quant_params, cu_seqlens) + 4,
    offsetof(zyfa_quant_params, key_bias), /* query_mean read, key_bias not */
};

static int hadamard_supported(int64_t n) { return n > 0 && ((n & (n - 1)) == 0 || n % 64 == 0); }

static void fuzz_quantize(const fuzz_choice* c) {
    const fuzz_quant_choice* qc = &c->quant;
    uint32_t state = c->seed;
    zyfa_context* ctx = fuzz_context(c->context);

    zyfa_quant_params full;
    zyfa_quant_params_init(&full, sizeof full);
    full.flags = (uint32_t)(uint64_t)qc->flags;
    full.batch = qc->batch;
    full.seqlen = qc->seqlen;
    full.heads = qc->heads;
    full.head_dim = qc->head_dim;
    cu_plan cu = {NULL, 0, 0};
    if (qc->varlen != FUZZ_VARLEN_NONE) {
        cu = plan_cu(qc->varlen == FUZZ_VARLEN_RAW ? FUZZ_VARLEN_RAW : FUZZ_VARLEN_LENGTHS, qc->cu, qc->batch, qc->seqlen);
    }
    full.cu_seqlens = cu.values;
    const sized_struct passed = make_sized_struct(&qc->size, &full, sizeof full, kQuantBoundaries,
                                                  sizeof kQuantBoundaries / sizeof kQuantBoundaries[0]);
    const int packed = cu.values != NULL && FIELD_WITHIN(zyfa_quant_params, cu_seqlens, passed.readable);
    const int64_t rows = packed ? cu.total : full.seqlen;

    const int64_t in_dtype = as_int32(qc->in.dtype), out_dtype = as_int32(qc->out.dtype);
    tensor_plan in = plan_tensor(&qc->in, in_dtype, full.batch, rows, full.heads, full.head_dim, packed);
    /* ZYFA_QUANT_V_TRANSPOSED: out's rows are 16-key groups (seqlen padded to 128 keys) of 16 *
     * head_dim bytes (docs/api.md), planned as the validator reads them. */
    const int v_transposed = (full.flags & ZYFA_QUANT_V_TRANSPOSED) != 0;
    const int64_t vt_groups = full.seqlen >= 0 && full.seqlen <= INT32_MAX ? (full.seqlen + 127) / 128 * 8 : full.seqlen;
    const int64_t vt_dim = full.head_dim > 0 && full.head_dim <= 65536 ? 16 * full.head_dim : full.head_dim;
    tensor_plan out = v_transposed ? plan_tensor(&qc->out, out_dtype, full.batch, vt_groups, full.heads, vt_dim, 0)
                                   : plan_tensor(&qc->out, out_dtype, full.batch, rows, full.heads, full.head_dim, packed);
    back_tensor(&in, qc->in.null_data, 1, c->data, &state);
    back_tensor(&out, qc->out.null_data, 0, c->data, &state);

    int descale_overflow = 0;
    int64_t descale_count = 0;
    if (full.batch >= 0 && full.heads > 0) {
        descale_count = mul_or_max(full.batch, full.heads, &descale_overflow);
        (void)mul_or_max(descale_count, 4, &descale_overflow);
    }
    const int descale_provided = !descale_overflow && descale_count <= (1 << 16);
    const size_t descale_bytes = (descale_provided ? (size_t)descale_count : 1) * sizeof(float);
    float* descale = (float*)fuzz_alloc(descale_bytes, FUZZ_SENTINEL);
    size_t descale_check_bytes = descale_bytes;
    if (qc->twist == FUZZ_QUANT_TWIST_IN_ODD && in.view.data != NULL) {
        in.view.data = (unsigned char*)in.view.data + 1;
    } else if (qc->twist == FUZZ_QUANT_TWIST_OUT_IS_IN && out.view.data != NULL && in.view.data != NULL &&
               tensor_bytes(&out) > 0 && tensor_bytes(&in) > 0) {
        out.view.data = in.view.data;
    } else if (qc->twist == FUZZ_QUANT_TWIST_DESCALE_IN_OUT && out.buffer_bytes >= sizeof(float) &&
               tensor_bytes(&out) > 0 && descale_count > 0 && !qc->null_descale) {
        descale = (float*)(void*)out.buffer;
        descale_check_bytes = out.buffer_bytes < descale_bytes ? out.buffer_bytes : descale_bytes;
    }

    const int hadamard = (full.flags & ZYFA_QUANT_HADAMARD) != 0;
    const int size_ok = passed.struct_size >= FIELD_END(zyfa_quant_params, head_dim) && !passed.implausible;
    const int empty = full.batch == 0 || full.seqlen == 0;

    /* K smoothing's mean (smooth_mean) and Q smoothing's key bias (query_mean in, key_bias out,
     * query_heads, key_bias_scale; 0.1.6), each field set only where it lies within struct_size:
     * what the library reads. A buffer without its flag, or the flag without its buffer, is
     * INVALID_ARGUMENT; so is a misaligned or aliased one on a problem with rows. */
    const int flag_smooth = (full.flags & ZYFA_QUANT_SMOOTH) != 0, flag_bias = (full.flags & ZYFA_QUANT_KEY_BIAS) != 0;
    zyfa_quant_params* const sent = (zyfa_quant_params*)passed.bytes;
    int mean_overflow = 0;
    int64_t mean_count = 0;
    if (full.batch >= 0 && full.heads > 0 && full.head_dim > 0) {
        mean_count = mul_or_max(mul_or_max(full.batch, full.heads, &mean_overflow), full.head_dim, &mean_overflow);
        (void)mul_or_max(mean_count, 4, &mean_overflow);
    }
    const int mean_kind = FIELD_WITHIN(zyfa_quant_params, smooth_mean, passed.readable) ? qc->smooth_kind : FUZZ_QUANT_MEAN_NONE;
    float* mean = NULL;
    size_t mean_bytes = 0;
    if (mean_kind == FUZZ_QUANT_MEAN_BUFFER || mean_kind == FUZZ_QUANT_MEAN_ODD) {
        mean_bytes = (!mean_overflow && mean_count <= (1 << 16) ? (size_t)mean_count : 1) * sizeof(float) + 4;
        mean = (float*)fuzz_alloc(mean_bytes, FUZZ_SENTINEL);
        if (mean_kind == FUZZ_QUANT_MEAN_ODD) mean = (float*)(void*)((unsigned char*)mean + 2);
    } else if (mean_kind == FUZZ_QUANT_MEAN_IN_OUT && out.view.data != NULL && tensor_bytes(&out) > 0) {
        mean = (float*)out.view.data; /* (out without bytes would leave it pointing at too little memory) */
    }
    if (mean != NULL) sent->smooth_mean = mean;
    const int mean_provided = (mean_kind != FUZZ_QUANT_MEAN_BUFFER && mean_kind != FUZZ_QUANT_MEAN_ODD) ||
                              (!mean_overflow && mean_count <= (1 << 16));

    const int bias_kind = qc->bias_kind;
    /* (params.query_heads is an int32_t: the library sees the low 32 bits of the choice) */
    const int64_t query_heads = bias_kind != FUZZ_QUANT_BIAS_NONE && FIELD_WITHIN(zyfa_quant_params, query_heads, passed.readable)
                                    ? (int64_t)(int32_t)(uint32_t)(uint64_t)qc->query_heads : 0;
    const float scale_values[4] = {0.0f, 0.125f, NAN, INFINITY};
    const float bias_scale = bias_kind != FUZZ_QUANT_BIAS_NONE && FIELD_WITHIN(zyfa_quant_params, key_bias_scale, passed.readable)
                                 ? scale_values[qc->bias_scale_kind % 4] : 0.0f;
    if (FIELD_WITHIN(zyfa_quant_params, query_heads, passed.readable)) sent->query_heads = (int32_t)query_heads;
    if (FIELD_WITHIN(zyfa_quant_params, key_bias_scale, passed.readable)) sent->key_bias_scale = bias_scale;
    int bias_overflow = 0;
    int64_t query_mean_count = 0, key_bias_count = 0;
    if (full.batch >= 0 && full.seqlen >= 0 && query_heads > 0 && full.head_dim > 0) {
        query_mean_count = mul_or_max(mul_or_max(full.batch, query_heads, &bias_overflow), full.head_dim, &bias_overflow);
        (void)mul_or_max(query_mean_count, 4, &bias_overflow);
        key_bias_count = mul_or_max(query_heads, packed ? rows : mul_or_max(full.batch, full.seqlen, &bias_overflow),
                                    &bias_overflow);
        (void)mul_or_max(key_bias_count, 4, &bias_overflow);
    }
    const int bias_memory_ok = !bias_overflow && query_mean_count <= (1 << 16) && key_bias_count <= (1 << 18);
    float* query_mean = NULL;
    float* key_bias = NULL;
    size_t bias_bytes = 0;
    if (bias_kind != FUZZ_QUANT_BIAS_NONE) {
        /* Q's mean: small finite values (a non-finite one is INVALID_ARGUMENT on the CPU backend). */
        const size_t qm = (bias_memory_ok ? (size_t)query_mean_count : 1) + 1;
        query_mean = (float*)fuzz_alloc(qm * sizeof(float), 0);
        for (size_t i = 0; i < qm; ++i) query_mean[i] = (float)((int)(next_random(&state) % 9) - 4) * 0.25f;
        if (bias_kind == FUZZ_QUANT_BIAS_IN_IN && in.view.data != NULL && tensor_bytes(&in) > 0) {
            key_bias = (float*)in.view.data;
        } else {
            bias_bytes = (bias_memory_ok ? (size_t)key_bias_count : 1) * sizeof(float) + 4;
            key_bias = (float*)fuzz_alloc(bias_bytes, FUZZ_SENTINEL);
            if (bias_kind == FUZZ_QUANT_BIAS_ODD) key_bias = (float*)(void*)((unsigned char*)key_bias + 2);
        }
        if (FIELD_WITHIN(zyfa_quant_params, query_mean, passed.readable)) sent->query_mean = query_mean;
        if (FIELD_WITHIN(zyfa_quant_params, key_bias, passed.readable)) sent->key_bias = key_bias;
    }
    const float* const eff_query_mean = FIELD_WITHIN(zyfa_quant_params, query_mean, passed.readable) ? query_mean : NULL;
    float* const eff_key_bias = FIELD_WITHIN(zyfa_quant_params, key_bias, passed.readable) ? key_bias : NULL;
    const unsigned char* query_mean_before = NULL;
    if (eff_query_mean != NULL && bias_memory_ok) {
        unsigned char* copy = (unsigned char*)fuzz_alloc((size_t)query_mean_count * sizeof(float) + 1, 0);
        memcpy(copy, eff_query_mean, (size_t)query_mean_count * sizeof(float));
        query_mean_before = copy;
    }
    const int bias_fields_set = eff_query_mean != NULL || eff_key_bias != NULL || query_heads != 0 || bias_scale != 0.0f;
    const int pairing_bad =
        (flag_smooth != (mean != NULL)) || (flag_smooth && mean_overflow) ||
        (flag_bias ? (eff_query_mean == NULL || eff_key_bias == NULL || !isfinite(bias_scale) || query_heads <= 0 ||
                      (full.heads > 0 && query_heads % full.heads != 0) || bias_overflow)
                   : bias_fields_set);
    const int64_t mean_reach = flag_smooth && !empty && !mean_overflow ? mean_count * 4 : 0;
    const int64_t bias_reach = flag_bias && !empty && !bias_overflow ? key_bias_count * 4 : 0;
    /* Outputs (out, descale, the mean, the bias) disjoint from each other and from the inputs (in,
     * cu_seqlens, query_mean), as the library reads zyfa.h. */
    const int64_t descale_span = !descale_overflow && !qc->null_descale ? descale_count * 4 : 0;
    const int64_t cu_span = packed ? (full.batch + 1) * 4 : 0;
    /* The bias must be 4-byte aligned in every non-empty problem, also where it has no element (packed
     * sequences of 0 rows in all): the library checks the pointer, not its reach. */
    const int smoothing_bad = !empty && ((mean_reach > 0 && misaligned(mean, 4)) ||
                                         (flag_bias && eff_key_bias != NULL && misaligned(eff_key_bias, 4)) ||
                                         ranges_overlap(mean, mean_reach, out.view.data, tensor_bytes(&out)) ||
                                         ranges_overlap(mean, mean_reach, in.view.data, tensor_bytes(&in)) ||
                                         ranges_overlap(mean, mean_reach, descale, descale_span) ||
                                         ranges_overlap(mean, mean_reach, cu.values, cu_span) ||
                                         ranges_overlap(mean, mean_reach, eff_key_bias, bias_reach) ||
                                         ranges_overlap(eff_key_bias, bias_reach, in.view.data, tensor_bytes(&in)) ||
                                         ranges_overlap(eff_key_bias, bias_reach, out.view.data, tensor_bytes(&out)) ||
                                         ranges_overlap(eff_key_bias, bias_reach, descale, descale_span) ||
                                         ranges_overlap(eff_key_bias, bias_reach, cu.values, cu_span));
    const int64_t descale_reach = !empty && !descale_overflow && !qc->null_descale ? descale_count * 4 : 0;
    const int64_t cu_reach = packed && !empty ? (full.batch + 1) * 4 : 0;
    const int in_odd = tensor_bytes(&in) > 0 && misaligned(in.view.data, dtype_bytes(in_dtype));
    const int aliased = !empty && (ranges_overlap(out.view.data, tensor_bytes(&out), in.view.data, tensor_bytes(&in)) ||
                                   ranges_overlap(out.view.data, tensor_bytes(&out), descale, descale_reach) ||
                                   ranges_overlap(out.view.data, tensor_bytes(&out), cu.values, cu_reach) ||
                                   ranges_overlap(descale, descale_reach, in.view.data, tensor_bytes(&in)) ||
                                   ranges_overlap(descale, descale_reach, cu.values, cu_reach));
    const int malformed = in_odd || aliased || (!empty && misaligned(descale, 4)) || pairing_bad || smoothing_bad ||
        !size_ok || (full.flags & ~(ZYFA_QUANT_HADAMARD | ZYFA_QUANT_SMOOTH | ZYFA_QUANT_V_TRANSPOSED | ZYFA_QUANT_KEY_BIAS)) != 0 ||
        (v_transposed && (packed || full.seqlen > INT32_MAX)) || full.batch < 0 || full.seqlen < 0 || full.heads <= 0 ||
        full.head_dim <= 0 || full.head_dim > 65536 /* documented bound */ || in.view.reserved != 0 || out.view.reserved != 0 ||
        (in_dtype != ZYFA_DTYPE_FP32 && in_dtype != ZYFA_DTYPE_FP16 && in_dtype != ZYFA_DTYPE_BF16) ||
        !is_fp8(out_dtype) || qc->null_descale || (packed && !cu.well_formed) || in.malformed || out.malformed ||
        (!empty && ((in.has_elements && in.view.data == NULL) || (out.has_elements && out.view.data == NULL))) ||
        descale_overflow;
    const int unsupported = passed.dirty_tail || (hadamard && !hadamard_supported(full.head_dim));
    /* Non-finite inputs (bit patterns), or large ones that the Hadamard rotation carries past
     * fp32, are rejected by zyfa_quantize_fp8 with INVALID_ARGUMENT before it writes anything. */
    const int finite_data = c->data == FUZZ_DATA_SMOOTH || c->data == FUZZ_DATA_ZERO ||
                            (c->data == FUZZ_DATA_LARGE && !hadamard && !flag_smooth && !flag_bias);
    const int well_formed = !malformed && !unsupported && in.constructed && out.constructed && finite_data;
    const enum expectation expected = (malformed || unsupported) ? EXPECT_FAILURE
                                      : well_formed              ? EXPECT_SUCCESS
                                                                 : EXPECT_ANY;
    const double all_rows = packed ? (double)rows : (double)full.batch * (double)full.seqlen;
    const double elements = (all_rows > 0 ? all_rows : 0) * (double)full.heads * (double)full.head_dim;
    const int memory_provided = tensor_provided(&in) && tensor_provided(&out) && descale_provided && mean_provided &&
                                (bias_kind == FUZZ_QUANT_BIAS_NONE || bias_memory_ok);
    /* There is no "supported" query for quantisation: only runs whose memory exists are made. */
    if (expected != EXPECT_FAILURE && !(memory_provided && elements <= FUZZ_MAX_QUANT_ELEMENTS)) return;

    if (verbose()) {
        fprintf(stderr, "quant: struct_size %u (readable %zu) flags %u batch %lld seqlen %lld heads %lld head_dim %lld "
                "descale %s (%zu bytes); expect %d\n",
                passed.struct_size, passed.readable, (unsigned)full.flags, (long long)full.batch,
                (long long)full.seqlen, (long long)full.heads, (long long)full.head_dim,
                qc->null_descale ? "NULL" : "set", descale_bytes, (int)expected);
        if (packed) describe_cu("cu_seqlens", cu.values, full.batch);
        describe_tensor("in", &in.view, in.buffer_bytes);
        describe_tensor("out", &out.view, out.buffer_bytes);
    }
    remember_message();
    g_calls++;
    const zyfa_status status = zyfa_quantize_fp8(ctx, (const zyfa_quant_params*)passed.bytes, &in.view, &out.view,
                                                 qc->null_descale ? NULL : descale, NULL);
    check_expectation(expected, status, "zyfa_quantize_fp8");
    if (query_mean_before != NULL && memcmp(query_mean_before, eff_query_mean, (size_t)query_mean_count * sizeof(float)) != 0) {
        fuzz_fail("zyfa_quantize_fp8 wrote to query_mean, an input");
    }
    /* The mean and bias buffers of their own (not the aliased ones) start as the sentinel. */
    const int own_mean = mean_kind == FUZZ_QUANT_MEAN_BUFFER || mean_kind == FUZZ_QUANT_MEAN_ODD;
    const int own_bias = bias_kind == FUZZ_QUANT_BIAS_BUFFERS || bias_kind == FUZZ_QUANT_BIAS_ODD;
    const unsigned char* mean_base = own_mean ? (const unsigned char*)mean - (mean_kind == FUZZ_QUANT_MEAN_ODD ? 2 : 0) : NULL;
    const unsigned char* bias_base = own_bias ? (const unsigned char*)key_bias - (bias_kind == FUZZ_QUANT_BIAS_ODD ? 2 : 0) : NULL;
    if (status != ZYFA_SUCCESS || empty) {
        if (status != ZYFA_SUCCESS) check_failure_status(status, "zyfa_quantize_fp8");
        if (!all_bytes_are(out.buffer, out.buffer_bytes, FUZZ_SENTINEL) ||
            !all_bytes_are(descale, descale_check_bytes, FUZZ_SENTINEL) ||
            (own_mean && !all_bytes_are(mean_base, mean_bytes, FUZZ_SENTINEL)) ||
            (own_bias && !all_bytes_are(bias_base, bias_bytes, FUZZ_SENTINEL))) {
            fuzz_fail("zyfa_quantize_fp8 %s but wrote an output", status == ZYFA_SUCCESS ? "had an empty problem" : "failed");
        }
        return;
    }
    check_message_kept("zyfa_quantize_fp8");
    if (!empty) g_completed_runs++;
    check_gaps_untouched(&out, "out");
    /* Each (batch, head) gets its descale, 1 when its amax is 0 (bit inputs may hold NaN). */
    if (c->data != FUZZ_DATA_BITS) {
        for (int64_t i = 0; i < descale_count; ++i) {
            if (!(descale[i] > 0.0f) || !isfinite(descale[i])) {
                fuzz_fail("descale[%lld] = %g, expected a positive finite scale", (long long)i, (double)descale[i]);
            }
        }
    }
    /* Finite inputs: every mean finite, every bias entry written (finite: the sentinel's bits are
     * a finite float, but query_mean's quarter steps and the data's small values never give them). */
    if (finite_data && flag_smooth) {
        for (int64_t i = 0; i < mean_count; ++i) {
            if (!isfinite(mean[i])) fuzz_fail("smooth_mean[%lld] = %g, expected a finite mean", (long long)i, (double)mean[i]);
        }
    }
    if (finite_data && flag_bias) {
        unsigned char sentinel[sizeof(float)];
        memset(sentinel, FUZZ_SENTINEL, sizeof sentinel);
        for (int64_t i = 0; i < key_bias_count; ++i) {
            if (!isfinite(eff_key_bias[i]) || memcmp(&eff_key_bias[i], sentinel, sizeof sentinel) == 0) {
                fuzz_fail("key_bias[%lld] = %g, expected a written finite bias", (long long)i, (double)eff_key_bias[i]);
            }
        }
    }
}

/* ---- merging --------------------------------------------------------------------------------- */

static const size_t kMergeBoundaries[] = {
    FIELD_END(zyfa_merge_params, head_dim_v),   /* the smallest accepted */
    FIELD_END(zyfa_merge_params, cu_seqlens_q), /* cu_seqlens_q read, lse not */
    FIELD_END(zyfa_merge_params, lse),          /* = sizeof */
    0, 4, FIELD_END(zyfa_merge_params, heads), offsetof(zyfa_merge_params, lse) + 4,
};

static int merge_dtype(int64_t dtype) {
    return dtype == ZYFA_DTYPE_FP32 || dtype == ZYFA_DTYPE_FP16 || dtype == ZYFA_DTYPE_BF16;
}

/* zyfa_attn_merge with up to FUZZ_MAX_MERGE_PARTS parts (num_parts beyond that is folded into
 * 1..3, since the harness must provide every array entry the library reads; num_parts < 1 is
 * passed as it is, with arrays of FUZZ_MAX_MERGE_PARTS entries). */
static void fuzz_merge(const fuzz_choice* c) {
    const fuzz_merge_choice* mc = &c->merge;
    uint32_t state = c->seed;
    zyfa_context* ctx = fuzz_context(c->context);

    int64_t parts = mc->num_parts;
    if (parts > FUZZ_MAX_MERGE_PARTS) parts = 1 + (parts - 1) % FUZZ_MAX_MERGE_PARTS;
    const int64_t passed_parts = parts >= 1 ? parts : FUZZ_MAX_MERGE_PARTS;

    zyfa_merge_params full;
    zyfa_merge_params_init(&full, sizeof full);
    full.num_parts = parts < INT32_MIN ? INT32_MIN : (int32_t)parts; /* < 1 stays < 1 */
    full.batch = mc->batch;
    full.seqlen_q = mc->seqlen_q;
    full.heads = mc->heads;
    full.head_dim_v = mc->head_dim;
    cu_plan cu = {NULL, 0, 0};
    if (mc->varlen != FUZZ_VARLEN_NONE) {
        cu = plan_cu(mc->varlen == FUZZ_VARLEN_RAW ? FUZZ_VARLEN_RAW : FUZZ_VARLEN_LENGTHS, mc->cu, mc->batch,
                     mc->seqlen_q);
    }
    full.cu_seqlens_q = cu.values;

    const int packed_asked = cu.values != NULL;
    /* The lse sizes depend on the packed total, known only once cu is planned. */
    const int64_t rows_if_packed = cu.total;
    tensor_plan part[FUZZ_MAX_MERGE_PARTS];
    tensor_plan o;
    /* The struct decides whether cu_seqlens_q and lse are read: plan it first with cu and lse as
     * the full struct has them (lse is set below, before the bytes are copied). */
    int64_t lse_count = 0;
    int lse_overflow = 0;
    float* out_lse = NULL;
    size_t out_lse_bytes = 0;
    zyfa_merge_params probe = full;
    const sized_struct probe_size = make_sized_struct(&mc->size, &probe, sizeof probe, kMergeBoundaries,
                                                      sizeof kMergeBoundaries / sizeof kMergeBoundaries[0]);
    const int packed = packed_asked && FIELD_WITHIN(zyfa_merge_params, cu_seqlens_q, probe_size.readable);
    const int64_t rows = packed ? rows_if_packed : full.seqlen_q;
    const int empty = full.batch == 0 || full.seqlen_q == 0;
    if (full.batch >= 0 && full.seqlen_q >= 0 && full.heads > 0) {
        const int64_t all_rows = packed ? rows : mul_or_max(full.batch, full.seqlen_q, &lse_overflow);
        lse_count = mul_or_max(all_rows, full.heads, &lse_overflow);
        (void)mul_or_max(lse_count, 4, &lse_overflow);
    }
    const int lse_provided = !lse_overflow && lse_count <= (1 << 16);
    const size_t lse_bytes = (lse_provided && lse_count > 0 ? (size_t)lse_count : 1) * sizeof(float);

    for (int64_t i = 0; i < FUZZ_MAX_MERGE_PARTS; ++i) {
        part[i] = plan_tensor(&mc->part[i], as_int32(mc->part[i].dtype), full.batch, rows, full.heads, full.head_dim_v,
                              packed);
        back_tensor(&part[i], mc->part[i].null_data, 1, c->data, &state);
    }
    o = plan_tensor(&mc->o, as_int32(mc->o.dtype), full.batch, rows, full.heads, full.head_dim_v, packed);
    back_tensor(&o, mc->o.null_data, 0, c->data, &state);

    /* Part lse values: finite, or with -inf, NaN and +inf rows, or all -inf. */
    float* part_lse_buffers[FUZZ_MAX_MERGE_PARTS];
    const float* part_lse[FUZZ_MAX_MERGE_PARTS];
    for (int64_t i = 0; i < FUZZ_MAX_MERGE_PARTS; ++i) {
        part_lse_buffers[i] = (float*)fuzz_alloc(lse_bytes, 0);
        for (size_t j = 0; j < lse_bytes / sizeof(float); ++j) {
            const uint32_t r = next_random(&state);
            float x = (float)(int32_t)(r % 4001u) / 100.0f - 20.0f;
            if (mc->special == 1 && r % 5 == 0) x = -INFINITY;
            if (mc->special == 2 && r % 7 == 0) x = (r >> 8) % 2 ? NAN : INFINITY;
            if (mc->special == 3) x = -INFINITY;
            part_lse_buffers[i][j] = x;
        }
        part_lse[i] = part_lse_buffers[i];
    }
    if (mc->lse) {
        out_lse_bytes = lse_bytes;
        out_lse = (float*)fuzz_alloc(out_lse_bytes, FUZZ_SENTINEL);
        full.lse = out_lse;
    }
    if (mc->twist == FUZZ_MERGE_TWIST_O_IS_PART0 && part[0].buffer != NULL && tensor_bytes(&part[0]) > 0 &&
        tensor_bytes(&o) > 0 && o.view.data != NULL) {
        o.view.data = part[0].buffer;
    } else if (mc->twist == FUZZ_MERGE_TWIST_LSE_IS_PART && out_lse != NULL) {
        full.lse = part_lse_buffers[0];
    } else if (mc->twist == FUZZ_MERGE_TWIST_PART_LSE_ODD) {
        part_lse[0] = (const float*)(const void*)((const char*)part_lse_buffers[0] + 2);
    } else if (mc->twist == FUZZ_MERGE_TWIST_PART_LSE_NULL) {
        part_lse[passed_parts - 1] = NULL;
    }
    const sized_struct passed = make_sized_struct(&mc->size, &full, sizeof full, kMergeBoundaries,
                                                  sizeof kMergeBoundaries / sizeof kMergeBoundaries[0]);
    const int lse_read = full.lse != NULL && FIELD_WITHIN(zyfa_merge_params, lse, passed.readable);
    const int64_t lse_reach = !empty && !lse_overflow ? lse_count * 4 : 0;

    const int size_ok = passed.struct_size >= FIELD_END(zyfa_merge_params, head_dim_v) && !passed.implausible;
    int malformed = !size_ok || parts < 1 || full.batch < 0 || full.seqlen_q < 0 || full.heads <= 0 ||
                    full.head_dim_v <= 0 || full.head_dim_v > 512 || (packed && !cu.well_formed) || lse_overflow;
    int constructed = o.constructed;
    int provided = tensor_provided(&o) && lse_provided;
    const int64_t out_bytes = tensor_bytes(&o);
    malformed |= o.view.reserved != 0 || !merge_dtype(o.view.dtype) || o.malformed ||
                 (!empty && o.has_elements && o.view.data == NULL) ||
                 (out_bytes > 0 && misaligned(o.view.data, dtype_bytes(o.view.dtype))) ||
                 (lse_read && lse_reach > 0 && misaligned(full.lse, 4));
    const int64_t cu_reach = packed && !empty ? (full.batch + 1) * 4 : 0;
    const float* out_lse_read = lse_read ? full.lse : NULL;
    int aliased = !empty && (ranges_overlap(o.view.data, out_bytes, out_lse_read, lse_reach) ||
                             ranges_overlap(o.view.data, out_bytes, cu.values, cu_reach) ||
                             ranges_overlap(out_lse_read, lse_reach, cu.values, cu_reach));
    for (int64_t i = 0; i < passed_parts && parts >= 1; ++i) {
        const tensor_plan* t = &part[i];
        const int64_t bytes = tensor_bytes(t);
        malformed |= t->view.reserved != 0 || !merge_dtype(t->view.dtype) || t->malformed ||
                     (!empty && t->has_elements && t->view.data == NULL) ||
                     (bytes > 0 && misaligned(t->view.data, dtype_bytes(t->view.dtype))) ||
                     (lse_reach > 0 && (part_lse[i] == NULL || misaligned(part_lse[i], 4)));
        aliased |= !empty && (ranges_overlap(o.view.data, out_bytes, t->view.data, bytes) ||
                              ranges_overlap(o.view.data, out_bytes, part_lse[i], lse_reach) ||
                              ranges_overlap(out_lse_read, lse_reach, t->view.data, bytes) ||
                              ranges_overlap(out_lse_read, lse_reach, part_lse[i], lse_reach));
        constructed &= t->constructed;
        provided &= tensor_provided(t);
    }
    malformed |= aliased;
    const int unsupported = passed.dirty_tail;
    const int well_formed = !malformed && !unsupported && constructed;
    const enum expectation expected = (malformed || unsupported) ? EXPECT_FAILURE
                                      : well_formed              ? EXPECT_SUCCESS
                                                                 : EXPECT_ANY;
    const double all_rows = packed ? (double)rows : (double)full.batch * (double)full.seqlen_q;
    const double elements = (all_rows > 0 ? all_rows : 0) * (double)full.heads * (double)full.head_dim_v *
                            (double)passed_parts;
    /* There is no "supported" query for merging: only runs whose memory exists are made. */
    if (expected != EXPECT_FAILURE && !(provided && elements <= FUZZ_MAX_QUANT_ELEMENTS)) return;

    zyfa_tensor views[FUZZ_MAX_MERGE_PARTS];
    for (int64_t i = 0; i < FUZZ_MAX_MERGE_PARTS; ++i) views[i] = part[i].view;
    if (verbose()) {
        fprintf(stderr, "merge: struct_size %u (readable %zu) parts %lld batch %lld seqlen_q %lld heads %lld "
                "head_dim_v %lld lse %s; expect %d\n", passed.struct_size, passed.readable, (long long)parts,
                (long long)full.batch, (long long)full.seqlen_q, (long long)full.heads, (long long)full.head_dim_v,
                lse_read ? "set" : "NULL", (int)expected);
        if (packed) describe_cu("cu_seqlens_q", cu.values, full.batch);
        for (int64_t i = 0; i < passed_parts; ++i) describe_tensor("part", &part[i].view, part[i].buffer_bytes);
        describe_tensor("o", &o.view, o.buffer_bytes);
    }
    remember_message();
    g_calls++;
    const zyfa_status status = zyfa_attn_merge(ctx, (const zyfa_merge_params*)passed.bytes, views, part_lse, &o.view,
                                               NULL);
    check_expectation(expected, status, "zyfa_attn_merge");
    const int lse_written = out_lse != NULL && !all_bytes_are(out_lse, out_lse_bytes, FUZZ_SENTINEL);
    if (status != ZYFA_SUCCESS || empty) {
        if (status != ZYFA_SUCCESS) check_failure_status(status, "zyfa_attn_merge");
        if (!all_bytes_are(o.buffer, o.buffer_bytes, FUZZ_SENTINEL) || lse_written) {
            fuzz_fail("zyfa_attn_merge %s but wrote an output", status == ZYFA_SUCCESS ? "had an empty problem" : "failed");
        }
        return;
    }
    check_message_kept("zyfa_attn_merge");
    g_completed_runs++;
    check_gaps_untouched(&o, "o");
    if (out_lse != NULL && !lse_read && lse_written) fuzz_fail("zyfa_attn_merge: lse lies beyond struct_size but was written");
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    fuzz_choice choice;
    fuzz_decode(data, size, &choice);
    if (choice.op == FUZZ_OP_ATTN) {
        fuzz_attention(&choice);
    } else if (choice.op == FUZZ_OP_MERGE) {
        fuzz_merge(&choice);
    } else {
        fuzz_quantize(&choice);
    }
    fuzz_free_all();
    return 0;
}
