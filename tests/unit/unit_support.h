/* Shared helpers of the unit tests: a small attention problem with real host buffers on the CPU
 * backend, sentinel-filled outputs to prove that a failed call writes nothing, and message checks.
 * Only the public header: these tests see libzyfa.so as a user does. */
#ifndef ZYFA_UNIT_SUPPORT_H
#define ZYFA_UNIT_SUPPORT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "zyfa.h"

/* The base problem: GQA with two query heads per kv head, seqlen_q != seqlen_k. */
enum { UNIT_BATCH = 2, UNIT_SEQ_Q = 4, UNIT_SEQ_K = 5, UNIT_HEADS_Q = 4, UNIT_HEADS_KV = 2, UNIT_DIM = 16 };

#define UNIT_SENTINEL_BYTE 0xA5

static inline size_t unit_dtype_size(zyfa_dtype dtype) {
    switch (dtype) {
        case ZYFA_DTYPE_FP32: return 4;
        case ZYFA_DTYPE_FP16:
        case ZYFA_DTYPE_BF16: return 2;
        default: return 1;
    }
}

/* A deterministic pseudo-random value in [-1, 1). */
static inline float unit_random(uint32_t* state) {
    *state = *state * 1664525u + 1013904223u;
    return (float)(*state >> 8) / (float)(1u << 23) - 1.0f;
}

/* float -> bf16, round to nearest even (finite inputs). */
static inline uint16_t unit_bf16(float x) {
    uint32_t bits;
    memcpy(&bits, &x, sizeof(bits));
    bits += 0x7FFFu + ((bits >> 16) & 1u);
    return (uint16_t)(bits >> 16);
}

/* float -> fp16 for normal values in fp16 range, mantissa truncated (inputs only need to be
 * valid fp16 numbers, not correctly rounded ones). */
static inline uint16_t unit_fp16(float x) {
    uint32_t bits;
    memcpy(&bits, &x, sizeof(bits));
    const uint32_t sign = (bits >> 16) & 0x8000u;
    const int32_t exponent = (int32_t)((bits >> 23) & 0xFFu) - 127 + 15;
    if (exponent <= 0) return (uint16_t)sign; /* tiny: zero is a fine input */
    return (uint16_t)(sign | ((uint32_t)exponent << 10) | ((bits >> 13) & 0x3FFu));
}

/* Fills count elements of dtype with values in [-1, 1) (FP8: positive normal codes, which are
 * valid numbers in both e4m3fn and e4m3fnuz). */
static inline void unit_fill(void* data, zyfa_dtype dtype, size_t count, uint32_t seed) {
    uint32_t state = seed;
    for (size_t i = 0; i < count; ++i) {
        const float x = unit_random(&state);
        switch (dtype) {
            case ZYFA_DTYPE_FP32: ((float*)data)[i] = x; break;
            case ZYFA_DTYPE_BF16: ((uint16_t*)data)[i] = unit_bf16(x); break;
            case ZYFA_DTYPE_FP16: ((uint16_t*)data)[i] = unit_fp16(x); break;
            default: ((uint8_t*)data)[i] = (uint8_t)(0x28 + (state >> 27)); break; /* codes 0x28..0x47 */
        }
    }
}

/* A contiguous [batch, seq, head, dim] tensor view. */
static inline zyfa_tensor unit_tensor(void* data, zyfa_dtype dtype, int64_t seq, int64_t heads, int64_t dim) {
    zyfa_tensor t;
    memset(&t, 0, sizeof(t));
    t.data = data;
    t.dtype = dtype;
    t.stride_head = dim;
    t.stride_seq = heads * dim;
    t.stride_batch = seq * heads * dim;
    return t;
}

static inline zyfa_context* unit_cpu_context(void) {
    zyfa_context_options options;
    zyfa_context_options_init(&options, sizeof(options));
    options.backend = ZYFA_BACKEND_CPU;
    options.num_threads = 2;
    zyfa_context* ctx = NULL;
    assert_int_equal(zyfa_context_create(&options, &ctx), ZYFA_SUCCESS);
    assert_non_null(ctx);
    return ctx;
}

/* Fails the test unless this thread's last error message contains needle. */
static inline void unit_assert_message_contains(const char* what, const char* needle) {
    const char* message = zyfa_last_error_message();
    assert_non_null(message);
    if (strstr(message, needle) == NULL) {
        fail_msg("%s: last error message \"%s\" does not contain \"%s\"", what, message, needle);
    }
}

/* A refused call: the status expected, and a message naming both the function and the detail. */
static inline void unit_assert_refused(const char* what, zyfa_status got, zyfa_status want, const char* function,
                                       const char* needle) {
    if (got != want) {
        fail_msg("%s: %s returned %d (%s), expected %d; message \"%s\"", what, function, got, zyfa_status_string(got),
                 want, zyfa_last_error_message());
    }
    unit_assert_message_contains(what, needle);
    unit_assert_message_contains(what, function);
}

typedef struct attn_fixture {
    zyfa_context* owned_ctx;
    /* A params struct with room behind it, for a newer caller's larger struct_size. */
    struct {
        zyfa_attn_params params;
        unsigned char tail[32];
    } big;
    zyfa_tensor q, k, v, o;
    /* What the call passes; cases may replace any of these with NULL. */
    zyfa_context* ctx;
    const zyfa_attn_params* p;
    const zyfa_tensor *qp, *kp, *vp, *op;
    void *q_data, *k_data, *v_data, *o_data;
    size_t o_bytes;
    float* lse;
    size_t lse_count;
    unsigned char* o_before;
    float* lse_before;
    int32_t cu_q[UNIT_BATCH + 1], cu_k[UNIT_BATCH + 1];
    float descale[UNIT_BATCH * UNIT_HEADS_KV];
} attn_fixture;

static inline void* unit_alloc(size_t bytes) {
    void* p = malloc(bytes);
    assert_non_null(p);
    return p;
}

/* A valid problem on a fresh CPU context; lse requested. Outputs hold the sentinel. */
static inline attn_fixture* attn_fixture_create(zyfa_dtype input, zyfa_dtype output) {
    attn_fixture* f = (attn_fixture*)calloc(1, sizeof(attn_fixture));
    assert_non_null(f);
    f->owned_ctx = unit_cpu_context();
    f->ctx = f->owned_ctx;

    const size_t rows_q = UNIT_BATCH * UNIT_SEQ_Q, rows_k = UNIT_BATCH * UNIT_SEQ_K;
    const size_t q_count = rows_q * UNIT_HEADS_Q * UNIT_DIM, kv_count = rows_k * UNIT_HEADS_KV * UNIT_DIM;
    f->q_data = unit_alloc(q_count * unit_dtype_size(input));
    f->k_data = unit_alloc(kv_count * unit_dtype_size(input));
    f->v_data = unit_alloc(kv_count * unit_dtype_size(input));
    unit_fill(f->q_data, input, q_count, 1);
    unit_fill(f->k_data, input, kv_count, 2);
    unit_fill(f->v_data, input, kv_count, 3);
    f->o_bytes = q_count * unit_dtype_size(output);
    f->o_data = unit_alloc(f->o_bytes);
    f->o_before = (unsigned char*)unit_alloc(f->o_bytes);
    f->lse_count = (size_t)UNIT_BATCH * UNIT_HEADS_Q * UNIT_SEQ_Q;
    f->lse = (float*)unit_alloc(f->lse_count * sizeof(float));
    f->lse_before = (float*)unit_alloc(f->lse_count * sizeof(float));

    f->q = unit_tensor(f->q_data, input, UNIT_SEQ_Q, UNIT_HEADS_Q, UNIT_DIM);
    f->k = unit_tensor(f->k_data, input, UNIT_SEQ_K, UNIT_HEADS_KV, UNIT_DIM);
    f->v = unit_tensor(f->v_data, input, UNIT_SEQ_K, UNIT_HEADS_KV, UNIT_DIM);
    f->o = unit_tensor(f->o_data, output, UNIT_SEQ_Q, UNIT_HEADS_Q, UNIT_DIM);

    zyfa_attn_params* p = &f->big.params;
    zyfa_attn_params_init(p, sizeof(*p));
    p->mask = ZYFA_MASK_CAUSAL_BOTTOM_RIGHT;
    p->batch = UNIT_BATCH;
    p->seqlen_q = UNIT_SEQ_Q;
    p->seqlen_k = UNIT_SEQ_K;
    p->heads_q = UNIT_HEADS_Q;
    p->heads_kv = UNIT_HEADS_KV;
    p->head_dim_qk = UNIT_DIM;
    p->head_dim_v = UNIT_DIM;
    p->lse = f->lse;

    for (int b = 0; b <= UNIT_BATCH; ++b) {
        f->cu_q[b] = b * UNIT_SEQ_Q;
        f->cu_k[b] = b * UNIT_SEQ_K;
    }
    for (int i = 0; i < UNIT_BATCH * UNIT_HEADS_KV; ++i) f->descale[i] = 0.5f;

    f->p = p;
    f->qp = &f->q;
    f->kp = &f->k;
    f->vp = &f->v;
    f->op = &f->o;

    memset(f->o_data, UNIT_SENTINEL_BYTE, f->o_bytes);
    memset(f->lse, UNIT_SENTINEL_BYTE, f->lse_count * sizeof(float));
    memcpy(f->o_before, f->o_data, f->o_bytes);
    memcpy(f->lse_before, f->lse, f->lse_count * sizeof(float));
    return f;
}

static inline void attn_fixture_destroy(attn_fixture* f) {
    if (f == NULL) return;
    zyfa_context_destroy(f->owned_ctx);
    free(f->q_data);
    free(f->k_data);
    free(f->v_data);
    free(f->o_data);
    free(f->o_before);
    free(f->lse);
    free(f->lse_before);
    free(f);
}

static inline zyfa_status attn_fixture_fwd(attn_fixture* f) {
    return zyfa_attn_fwd(f->ctx, f->p, f->qp, f->kp, f->vp, f->op, NULL);
}

static inline zyfa_status attn_fixture_supported(attn_fixture* f) {
    return zyfa_attn_supported(f->ctx, f->p, f->qp, f->kp, f->vp, f->op);
}

static inline const char* attn_fixture_kernel_name(attn_fixture* f) {
    return zyfa_attn_kernel_name(f->ctx, f->p, f->qp, f->kp, f->vp, f->op);
}

/* 1 when o and lse still hold the sentinel written at creation. */
static inline int attn_fixture_outputs_untouched(const attn_fixture* f) {
    return memcmp(f->o_data, f->o_before, f->o_bytes) == 0 &&
           memcmp(f->lse, f->lse_before, f->lse_count * sizeof(float)) == 0;
}

#endif /* ZYFA_UNIT_SUPPORT_H */

#ifndef ZYFA_UNIT_STDERR_CAPTURE
#define ZYFA_UNIT_STDERR_CAPTURE
#include <unistd.h>

/* Runs fwd on f with stderr redirected to a temporary file; returns what was written there
 * (malloc'ed, NUL-terminated) and stores the call's status. */
static inline char* attn_fixture_fwd_capturing_stderr(attn_fixture* f, zyfa_status* status) {
    char path[] = "/tmp/zyfa_unit_stderr_XXXXXX";
    const int file = mkstemp(path);
    assert_true(file >= 0);
    fflush(stderr);
    const int saved = dup(STDERR_FILENO);
    assert_true(saved >= 0);
    assert_true(dup2(file, STDERR_FILENO) >= 0);
    *status = attn_fixture_fwd(f);
    fflush(stderr);
    assert_true(dup2(saved, STDERR_FILENO) >= 0);
    close(saved);
    const off_t length = lseek(file, 0, SEEK_END);
    assert_true(length >= 0);
    char* text = (char*)unit_alloc((size_t)length + 1);
    assert_int_equal(pread(file, text, (size_t)length, 0), length);
    text[length] = '\0';
    close(file);
    unlink(path);
    return text;
}
#endif
