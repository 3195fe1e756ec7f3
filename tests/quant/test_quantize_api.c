/* zyfa_quantize_fp8 through the public C API on the CPU backend, as a user sees it: libzyfa.so and
 * zyfa.h only. The FP8 decoding and the Hadamard matrix here are written from their definitions,
 * independently of the library's kernels/common headers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "zyfa.h"
#include "quant_api_test_support.h"

enum { BATCH = 2, SEQ = 24, HEADS = 3, DIM = 64 };
#define N_ELEMENTS (BATCH * SEQ * HEADS * DIM)
#define SENTINEL 0xA5


static zyfa_tensor dense_view(void* data, zyfa_dtype dtype) {
    zyfa_tensor t;
    memset(&t, 0, sizeof t);
    t.data = data;
    t.dtype = dtype;
    t.stride_head = DIM;
    t.stride_seq = (int64_t)HEADS * DIM;
    t.stride_batch = (int64_t)SEQ * HEADS * DIM;
    return t;
}

static zyfa_quant_params dense_params(uint32_t flags) {
    zyfa_quant_params p;
    zyfa_quant_params_init(&p, sizeof p);
    p.flags = flags;
    p.batch = BATCH;
    p.seqlen = SEQ;
    p.heads = HEADS;
    p.head_dim = DIM;
    return p;
}

static void fill_bf16(uint16_t* data, float* values, uint32_t seed) {
    for (int i = 0; i < N_ELEMENTS; ++i) {
        data[i] = to_bf16(pseudo_normal(&seed));
        values[i] = from_bf16(data[i]);
    }
}

/* out = round(x * fp8_max / amax) per (batch, head): every element within half an e4m3 quantum of
 * its scaled magnitude, the amax element at the max code, descale = amax / fp8_max. */
static void check_quantised(const float* values, const uint8_t* codes, const float* descale, int bias, double fp8_max) {
    for (int b = 0; b < BATCH; ++b) {
        for (int h = 0; h < HEADS; ++h) {
            double amax = 0.0;
            for (int s = 0; s < SEQ; ++s)
                for (int d = 0; d < DIM; ++d) amax = fmax(amax, fabs(values[((b * SEQ + s) * HEADS + h) * DIM + d]));
            const float expected_descale = (float)amax / (float)fp8_max;
            assert_true(descale[b * HEADS + h] == expected_descale);
            for (int s = 0; s < SEQ; ++s) {
                for (int d = 0; d < DIM; ++d) {
                    const int i = ((b * SEQ + s) * HEADS + h) * DIM + d;
                    const double scaled = fabs(values[i]) * fp8_max / amax;
                    const int exponent = scaled > 0 ? (int)floor(log2(scaled)) : 1 - bias;
                    const double half_quantum = ldexp(1.0, (exponent < 1 - bias ? 1 - bias : exponent) - 4);
                    /* fp32 rounding of x * scale and of the descale: 1e-6 |x| covers it. */
                    const double err = fabs(decode_e4m3(codes[i], bias) * descale[b * HEADS + h] - values[i]);
                    assert_true(err <= half_quantum * descale[b * HEADS + h] + 1e-6 * fabs(values[i]));
                    if (fabs(values[i]) == amax) assert_int_equal(codes[i] & 0x7F, bias == 7 ? 0x7E : 0x7F);
                }
            }
        }
    }
}

static void test_bf16_to_e4m3fn_and_e4m3fnuz(void** state) {
    (void)state;
    zyfa_context* ctx = unit_cpu_context();
    static uint16_t input[N_ELEMENTS];
    static float values[N_ELEMENTS];
    static uint8_t codes[N_ELEMENTS];
    float descale[BATCH * HEADS];
    fill_bf16(input, values, 7);
    const zyfa_quant_params p = dense_params(0);
    const zyfa_tensor in = dense_view(input, ZYFA_DTYPE_BF16);

    zyfa_tensor out = dense_view(codes, ZYFA_DTYPE_FP8_E4M3FN);
    assert_int_equal(zyfa_quantize_fp8(ctx, &p, &in, &out, descale, NULL), ZYFA_SUCCESS);
    check_quantised(values, codes, descale, 7, 448.0);

    out.dtype = ZYFA_DTYPE_FP8_E4M3FNUZ;
    assert_int_equal(zyfa_quantize_fp8(ctx, &p, &in, &out, descale, NULL), ZYFA_SUCCESS);
    check_quantised(values, codes, descale, 8, 240.0);
    for (int i = 0; i < N_ELEMENTS; ++i) assert_int_not_equal(codes[i], 0x80); /* fnuz NaN */
    zyfa_context_destroy(ctx);
}

/* Q and K quantised with ZYFA_QUANT_HADAMARD: the dot products of their dequantised rows match the
 * original Q.K^T up to FP8 error, because the same orthogonal rotation is applied to both. */
static void test_hadamard_keeps_qk_dot_products(void** state) {
    (void)state;
    zyfa_context* ctx = unit_cpu_context();
    static uint16_t q_in[N_ELEMENTS], k_in[N_ELEMENTS];
    static float q[N_ELEMENTS], k[N_ELEMENTS];
    static uint8_t q_codes[N_ELEMENTS], k_codes[N_ELEMENTS];
    float q_descale[BATCH * HEADS], k_descale[BATCH * HEADS];
    fill_bf16(q_in, q, 101);
    fill_bf16(k_in, k, 202);
    const zyfa_quant_params p = dense_params(ZYFA_QUANT_HADAMARD);
    const zyfa_tensor qv = dense_view(q_in, ZYFA_DTYPE_BF16), kv = dense_view(k_in, ZYFA_DTYPE_BF16);
    const zyfa_tensor qo = dense_view(q_codes, ZYFA_DTYPE_FP8_E4M3FN), ko = dense_view(k_codes, ZYFA_DTYPE_FP8_E4M3FN);
    assert_int_equal(zyfa_quantize_fp8(ctx, &p, &qv, &qo, q_descale, NULL), ZYFA_SUCCESS);
    assert_int_equal(zyfa_quantize_fp8(ctx, &p, &kv, &ko, k_descale, NULL), ZYFA_SUCCESS);

    double err2 = 0.0, ref2 = 0.0;
    for (int b = 0; b < BATCH; ++b)
        for (int h = 0; h < HEADS; ++h)
            for (int i = 0; i < SEQ; ++i)
                for (int j = 0; j < SEQ; ++j) {
                    const int qi = ((b * SEQ + i) * HEADS + h) * DIM, kj = ((b * SEQ + j) * HEADS + h) * DIM;
                    double exact = 0.0, quantised = 0.0;
                    for (int d = 0; d < DIM; ++d) {
                        exact += (double)q[qi + d] * k[kj + d];
                        quantised += decode_e4m3(q_codes[qi + d], 7) * q_descale[b * HEADS + h] *
                                     decode_e4m3(k_codes[kj + d], 7) * k_descale[b * HEADS + h];
                    }
                    err2 += (quantised - exact) * (quantised - exact);
                    ref2 += exact * exact;
                }
    /* The codes hold the rotated rows: row (0, 0, head 0) against (H_64 / 8) q from the definition
     * H[i][j] = (-1)^popcount(i & j), within half an e4m3 quantum (<= 2^-4 relative in the normal
     * range, half the subnormal quantum 2^-9 times the descale below it) plus fp32 slack. */
    for (int i = 0; i < DIM; ++i) {
        double rotated = 0.0;
        for (int j = 0; j < DIM; ++j) rotated += ((__builtin_popcount((unsigned)(i & j)) & 1) ? -q[j] : q[j]) / 8.0;
        const double stored = decode_e4m3(q_codes[i], 7) * q_descale[0];
        assert_true(fabs(stored - rotated) <= fmax(0.0625 * fabs(rotated), ldexp(1.0, -10) * q_descale[0]) + 1e-5);
    }
    /* Each of q and k carries ~3% RMS relative FP8 error; their dot products, sums of 64 products of
     * independent errors, come out near 4-5% RMS relative: 0.08 is a loose bound a wrong rotation
     * (no inverse relation between Q's and K's) breaks by far (it gives ~100%). */
    assert_true(sqrt(err2 / ref2) < 0.08);
    zyfa_context_destroy(ctx);
}

static void test_unsupported_hadamard_head_dim(void** state) {
    (void)state;
    zyfa_context* ctx = unit_cpu_context();
    enum { D = 96 }; /* neither a power of two nor a multiple of 64 */
    static uint16_t input[SEQ * D];
    static uint8_t codes[SEQ * D];
    float descale[1] = {-1.0f};
    for (int i = 0; i < SEQ * D; ++i) input[i] = to_bf16(0.5f);
    memset(codes, SENTINEL, sizeof codes);
    zyfa_quant_params p;
    zyfa_quant_params_init(&p, sizeof p);
    p.flags = ZYFA_QUANT_HADAMARD;
    p.batch = 1, p.seqlen = SEQ, p.heads = 1, p.head_dim = D;
    zyfa_tensor in = {input, ZYFA_DTYPE_BF16, 0, (int64_t)SEQ * D, D, D};
    zyfa_tensor out = {codes, ZYFA_DTYPE_FP8_E4M3FN, 0, (int64_t)SEQ * D, D, D};
    assert_int_equal(zyfa_quantize_fp8(ctx, &p, &in, &out, descale, NULL), ZYFA_ERROR_NOT_SUPPORTED);
    assert_true(strlen(zyfa_last_error_message()) > 0);
    assert_true(descale[0] == -1.0f);
    for (int i = 0; i < SEQ * D; ++i) assert_int_equal(codes[i], SENTINEL);
    /* Without the rotation the same request runs. */
    p.flags = 0;
    assert_int_equal(zyfa_quantize_fp8(ctx, &p, &in, &out, descale, NULL), ZYFA_SUCCESS);
    assert_true(descale[0] == 0.5f / 448.0f);
    zyfa_context_destroy(ctx);
}

static void test_non_finite_input_is_invalid_and_writes_nothing(void** state) {
    (void)state;
    zyfa_context* ctx = unit_cpu_context();
    static uint16_t input[N_ELEMENTS];
    static float values[N_ELEMENTS];
    static uint8_t codes[N_ELEMENTS];
    float descale[BATCH * HEADS];
    fill_bf16(input, values, 9);
    input[N_ELEMENTS - 1] = 0x7FC0; /* bf16 NaN in the last (batch, head) */
    memset(codes, SENTINEL, sizeof codes);
    for (int i = 0; i < BATCH * HEADS; ++i) descale[i] = -1.0f;
    const zyfa_quant_params p = dense_params(0);
    const zyfa_tensor in = dense_view(input, ZYFA_DTYPE_BF16);
    const zyfa_tensor out = dense_view(codes, ZYFA_DTYPE_FP8_E4M3FN);
    assert_int_equal(zyfa_quantize_fp8(ctx, &p, &in, &out, descale, NULL), ZYFA_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(zyfa_last_error_message(), "non-finite"));
    for (int i = 0; i < N_ELEMENTS; ++i) assert_int_equal(codes[i], SENTINEL);
    for (int i = 0; i < BATCH * HEADS; ++i) assert_true(descale[i] == -1.0f);
    zyfa_context_destroy(ctx);
}

/* Packed sequences of lengths 10, 0, 14 (cu_seqlens): the empty one gets descale 1. */
static void test_varlen_through_the_api(void** state) {
    (void)state;
    zyfa_context* ctx = unit_cpu_context();
    enum { B = 3, TOTAL = 24, H = 2, D = 64 };
    const int32_t cu_seqlens[B + 1] = {0, 10, 10, 24};
    static float input[TOTAL * H * D];
    static uint8_t codes[TOTAL * H * D];
    float descale[B * H];
    uint32_t seed = 5;
    for (int i = 0; i < TOTAL * H * D; ++i) input[i] = pseudo_normal(&seed) * (i < 10 * H * D ? 1.0f : 10.0f);
    zyfa_quant_params p;
    zyfa_quant_params_init(&p, sizeof p);
    p.batch = B, p.seqlen = 14, p.heads = H, p.head_dim = D, p.cu_seqlens = cu_seqlens;
    zyfa_tensor in = {input, ZYFA_DTYPE_FP32, 0, 0, (int64_t)H * D, D};
    zyfa_tensor out = {codes, ZYFA_DTYPE_FP8_E4M3FN, 0, 0, (int64_t)H * D, D};
    assert_int_equal(zyfa_quantize_fp8(ctx, &p, &in, &out, descale, NULL), ZYFA_SUCCESS);
    assert_true(descale[1 * H + 0] == 1.0f && descale[1 * H + 1] == 1.0f);
    for (int b = 0; b < B; b += 2) {
        for (int h = 0; h < H; ++h) {
            float amax = 0.0f;
            for (int r = cu_seqlens[b]; r < cu_seqlens[b + 1]; ++r)
                for (int d = 0; d < D; ++d) amax = fmaxf(amax, fabsf(input[(r * H + h) * D + d]));
            assert_true(descale[b * H + h] == amax / 448.0f);
            for (int r = cu_seqlens[b]; r < cu_seqlens[b + 1]; ++r)
                for (int d = 0; d < D; ++d) {
                    const int i = (r * H + h) * D + d;
                    /* Half an e4m3 quantum: at most 2^-4 of the value in the normal range, half the
                     * subnormal quantum 2^-9 times the descale below it; plus fp32 slack. */
                    const double err = fabs(decode_e4m3(codes[i], 7) * descale[b * H + h] - input[i]);
                    assert_true(err <= fmax(0.0625 * fabs(input[i]), ldexp(1.0, -10) * descale[b * H + h]) + 1e-6 * fabs(input[i]));
                }
        }
    }
    zyfa_context_destroy(ctx);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bf16_to_e4m3fn_and_e4m3fnuz),
        cmocka_unit_test(test_hadamard_keeps_qk_dot_products),
        cmocka_unit_test(test_unsupported_hadamard_head_dim),
        cmocka_unit_test(test_non_finite_input_is_invalid_and_writes_nothing),
        cmocka_unit_test(test_varlen_through_the_api),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
