/* Valid requests: every dtype runs and agrees with the query functions; empty problems succeed
 * and write nothing; defaults (softmax AUTO, scale 0, key_block 0) resolve as documented; packed
 * sequences and size-1 axes with any stride are accepted. Silent on stderr without ZYFA_LOG. */
#include <math.h>

#include "unit_support.h"

static void set_descales(attn_fixture* f) {
    f->big.params.q_descale = f->descale;
    f->big.params.k_descale = f->descale;
    f->big.params.v_descale = f->descale;
}

static int is_fp8(zyfa_dtype dtype) { return dtype == ZYFA_DTYPE_FP8_E4M3FN || dtype == ZYFA_DTYPE_FP8_E4M3FNUZ; }

static void assert_lse_written_and_finite(const attn_fixture* f) {
    for (size_t i = 0; i < f->lse_count; ++i) {
        /* Bottom-right causal with seqlen_k > seqlen_q: every row sees at least one key. */
        if (!isfinite(f->lse[i])) fail_msg("lse[%zu] = %g is not finite", i, (double)f->lse[i]);
    }
    assert_memory_not_equal(f->lse, f->lse_before, f->lse_count * sizeof(float));
}

static void test_every_dtype_runs_and_queries_agree(void** state) {
    (void)state;
    const zyfa_dtype inputs[] = {ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP16, ZYFA_DTYPE_FP32, ZYFA_DTYPE_FP8_E4M3FN,
                                 ZYFA_DTYPE_FP8_E4M3FNUZ};
    const zyfa_dtype outputs[] = {ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP16, ZYFA_DTYPE_FP32};
    for (size_t i = 0; i < sizeof(inputs) / sizeof(inputs[0]); ++i) {
        for (size_t j = 0; j < sizeof(outputs) / sizeof(outputs[0]); ++j) {
            attn_fixture* f = attn_fixture_create(inputs[i], outputs[j]);
            if (is_fp8(inputs[i])) set_descales(f);
            assert_int_equal(attn_fixture_supported(f), ZYFA_SUCCESS);
            const char* name = attn_fixture_kernel_name(f);
            assert_non_null(name);
            assert_true(strlen(name) > 0);
            assert_ptr_equal(name, attn_fixture_kernel_name(f)); /* a static string */
            assert_true(attn_fixture_outputs_untouched(f));      /* the queries run nothing */
            const zyfa_status status = attn_fixture_fwd(f);
            if (status != ZYFA_SUCCESS) {
                fail_msg("input %d output %d: %s (%s)", inputs[i], outputs[j], zyfa_status_string(status),
                         zyfa_last_error_message());
            }
            assert_memory_not_equal(f->o_data, f->o_before, f->o_bytes);
            assert_lse_written_and_finite(f);
            attn_fixture_destroy(f);
        }
    }
}

/* The kernel name of a request with its softmax field set to `softmax`. */
static const char* kernel_for(zyfa_dtype input, zyfa_softmax softmax) {
    attn_fixture* f = attn_fixture_create(input, ZYFA_DTYPE_FP32);
    if (is_fp8(input)) set_descales(f);
    f->big.params.softmax = softmax;
    const char* name = attn_fixture_kernel_name(f);
    if (name == NULL) fail_msg("no kernel for input %d softmax %d: %s", input, softmax, zyfa_last_error_message());
    attn_fixture_destroy(f);
    return name;
}

/* AUTO is LEAN for FP8 inputs and EXACT otherwise. */
static void test_softmax_auto_resolution(void** state) {
    (void)state;
    const zyfa_dtype fp8[] = {ZYFA_DTYPE_FP8_E4M3FN, ZYFA_DTYPE_FP8_E4M3FNUZ};
    for (size_t i = 0; i < 2; ++i) {
        assert_string_equal(kernel_for(fp8[i], ZYFA_SOFTMAX_AUTO), kernel_for(fp8[i], ZYFA_SOFTMAX_LEAN));
        assert_string_not_equal(kernel_for(fp8[i], ZYFA_SOFTMAX_AUTO), kernel_for(fp8[i], ZYFA_SOFTMAX_EXACT));
    }
    assert_string_equal(kernel_for(ZYFA_DTYPE_BF16, ZYFA_SOFTMAX_AUTO), kernel_for(ZYFA_DTYPE_BF16, ZYFA_SOFTMAX_EXACT));
}

/* Runs the fixture problem with one params field changed; returns a copy of o. */
static unsigned char* run_with(zyfa_dtype input, void (*change)(zyfa_attn_params*), size_t* bytes) {
    attn_fixture* f = attn_fixture_create(input, ZYFA_DTYPE_FP32);
    if (is_fp8(input)) set_descales(f);
    if (change != NULL) change(&f->big.params);
    assert_int_equal(attn_fixture_fwd(f), ZYFA_SUCCESS);
    unsigned char* copy = (unsigned char*)unit_alloc(f->o_bytes);
    memcpy(copy, f->o_data, f->o_bytes);
    *bytes = f->o_bytes;
    attn_fixture_destroy(f);
    return copy;
}

static void scale_explicit_default(zyfa_attn_params* p) { p->softmax_scale = 0.25f; } /* 1/sqrt(16), exact */
static void scale_other(zyfa_attn_params* p) { p->softmax_scale = 0.5f; }
static void softmax_lean(zyfa_attn_params* p) { p->softmax = ZYFA_SOFTMAX_LEAN; }

static void test_scale_zero_means_inverse_sqrt_head_dim(void** state) {
    (void)state;
    size_t bytes = 0;
    unsigned char* by_default = run_with(ZYFA_DTYPE_BF16, NULL, &bytes);
    unsigned char* explicit_scale = run_with(ZYFA_DTYPE_BF16, scale_explicit_default, &bytes);
    unsigned char* other_scale = run_with(ZYFA_DTYPE_BF16, scale_other, &bytes);
    assert_memory_equal(by_default, explicit_scale, bytes);
    assert_memory_not_equal(by_default, other_scale, bytes); /* the field is read at all */
    free(by_default);
    free(explicit_scale);
    free(other_scale);
}

static void test_fp8_auto_output_equals_lean(void** state) {
    (void)state;
    size_t bytes = 0;
    unsigned char* automatic = run_with(ZYFA_DTYPE_FP8_E4M3FN, NULL, &bytes);
    unsigned char* lean = run_with(ZYFA_DTYPE_FP8_E4M3FN, softmax_lean, &bytes);
    assert_memory_equal(automatic, lean, bytes);
    free(automatic);
    free(lean);
}

static void key_block_64(zyfa_attn_params* p) { p->key_block = 64; }
static void key_block_128(zyfa_attn_params* p) { p->key_block = 128; }

/* The kernel name of the fixture's request with params.key_block set. */
static const char* kernel_for_key_block(zyfa_dtype input, int32_t key_block) {
    attn_fixture* f = attn_fixture_create(input, ZYFA_DTYPE_FP32);
    if (is_fp8(input)) set_descales(f);
    f->big.params.key_block = key_block;
    const char* name = attn_fixture_kernel_name(f);
    if (name == NULL) fail_msg("no kernel for key_block %d: %s", key_block, zyfa_last_error_message());
    attn_fixture_destroy(f);
    return name;
}

/* params.key_block 0, 64 and 128 run on the CPU; 0 is its own 64. The fixture's five keys are one
 * block at any step, so all three give the same bits here (tests/cpu/key_block_test.cpp has rows
 * of several blocks). */
static void test_key_block_values_run(void** state) {
    (void)state;
    const zyfa_dtype inputs[] = {ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP8_E4M3FN, ZYFA_DTYPE_FP8_E4M3FNUZ};
    for (size_t i = 0; i < sizeof(inputs) / sizeof(inputs[0]); ++i) {
        assert_string_equal(kernel_for_key_block(inputs[i], 0), kernel_for_key_block(inputs[i], 64));
        assert_non_null(strstr(kernel_for_key_block(inputs[i], 64), "_bk64"));
        assert_non_null(strstr(kernel_for_key_block(inputs[i], 128), "_bk128"));
        size_t bytes = 0;
        unsigned char* own = run_with(inputs[i], NULL, &bytes);
        unsigned char* step64 = run_with(inputs[i], key_block_64, &bytes);
        unsigned char* step128 = run_with(inputs[i], key_block_128, &bytes);
        assert_memory_equal(own, step64, bytes);
        assert_memory_equal(own, step128, bytes);
        free(own);
        free(step64);
        free(step128);
    }
}

/* Empty problems succeed, write nothing, and may pass NULL data. */
static void test_empty_problems(void** state) {
    (void)state;
    /* seqlen_k = 0 with query rows is not empty: tests/unit/attn_edge_rows_test.c. */
    for (int which = 0; which < 3; ++which) {
        attn_fixture* f = attn_fixture_create(ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP32);
        if (which == 0) f->big.params.batch = 0;
        if (which == 1) f->big.params.seqlen_q = 0;
        if (which == 2) { /* packed, no sequences */
            f->big.params.batch = 0;
            f->big.params.cu_seqlens_q = f->cu_q;
            f->big.params.cu_seqlens_k = f->cu_k;
        }
        assert_int_equal(attn_fixture_supported(f), ZYFA_SUCCESS);
        assert_non_null(attn_fixture_kernel_name(f));
        assert_int_equal(attn_fixture_fwd(f), ZYFA_SUCCESS);
        assert_true(attn_fixture_outputs_untouched(f));
        f->q.data = f->k.data = f->v.data = f->o.data = NULL;
        assert_int_equal(attn_fixture_fwd(f), ZYFA_SUCCESS);
        assert_true(attn_fixture_outputs_untouched(f));
        attn_fixture_destroy(f);
    }
}

/* Empty is not a way around validation. */
static void test_empty_problems_are_still_checked(void** state) {
    (void)state;
    attn_fixture* f = attn_fixture_create(ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP32);
    f->big.params.batch = 0;
    f->big.params.heads_kv = 3;
    assert_int_equal(attn_fixture_fwd(f), ZYFA_ERROR_INVALID_ARGUMENT);
    unit_assert_message_contains("empty, bad heads", "params.heads_kv = 3");
    f->big.params.heads_kv = UNIT_HEADS_KV;
    f->o.dtype = ZYFA_DTYPE_FP8_E4M3FN;
    assert_int_equal(attn_fixture_fwd(f), ZYFA_ERROR_INVALID_ARGUMENT);
    unit_assert_message_contains("empty, bad o", "o.dtype");
    assert_true(attn_fixture_outputs_untouched(f));
    attn_fixture_destroy(f);
}

/* Packed sequences of the fixed lengths address the same memory as the fixed-length problem, so
 * o is identical; stride_batch is ignored when packed (even a negative one). */
static void test_packed_sequences_match_fixed_length(void** state) {
    (void)state;
    size_t bytes = 0;
    unsigned char* fixed = run_with(ZYFA_DTYPE_BF16, NULL, &bytes);
    attn_fixture* f = attn_fixture_create(ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP32);
    f->big.params.cu_seqlens_q = f->cu_q;
    f->big.params.cu_seqlens_k = f->cu_k;
    f->q.stride_batch = -12345;
    f->o.stride_batch = 0;
    assert_int_equal(attn_fixture_fwd(f), ZYFA_SUCCESS);
    assert_memory_equal(f->o_data, fixed, bytes);
    attn_fixture_destroy(f);
    free(fixed);
}

/* An axis of size 1 is never stepped: any non-negative stride is accepted for it. */
static void test_size_one_axes_take_any_stride(void** state) {
    (void)state;
    attn_fixture* f = attn_fixture_create(ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP32);
    f->big.params.batch = 1;
    f->q.stride_batch = 0;
    f->k.stride_batch = 1;
    f->v.stride_batch = 0;
    f->o.stride_batch = 3;
    assert_int_equal(attn_fixture_fwd(f), ZYFA_SUCCESS);
    attn_fixture_destroy(f);
}

/* Without ZYFA_LOG the library writes nothing to stderr. */
static void test_silent_by_default(void** state) {
    (void)state;
    attn_fixture* f = attn_fixture_create(ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP32);
    zyfa_status status = ZYFA_ERROR_INTERNAL;
    char* text = attn_fixture_fwd_capturing_stderr(f, &status);
    assert_int_equal(status, ZYFA_SUCCESS);
    assert_string_equal(text, "");
    free(text);
    attn_fixture_destroy(f);
}

int main(void) {
    unsetenv("ZYFA_LOG"); /* read once, at the first zyfa_attn_fwd */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_silent_by_default),
        cmocka_unit_test(test_every_dtype_runs_and_queries_agree),
        cmocka_unit_test(test_softmax_auto_resolution),
        cmocka_unit_test(test_scale_zero_means_inverse_sqrt_head_dim),
        cmocka_unit_test(test_fp8_auto_output_equals_lean),
        cmocka_unit_test(test_key_block_values_run),
        cmocka_unit_test(test_empty_problems),
        cmocka_unit_test(test_empty_problems_are_still_checked),
        cmocka_unit_test(test_packed_sequences_match_fixed_length),
        cmocka_unit_test(test_size_one_axes_take_any_stride),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
