/* Growable structs: the *_init functions, an older caller's smaller struct_size (the rest takes
 * its defaults and the library never reads it) and a newer caller's larger one (accepted with a
 * zero tail, NOT_SUPPORTED otherwise). */
#include "unit_support.h"

#define GARBAGE_BYTE 0xCD

static void assert_bytes(const void* p, size_t from, size_t to, unsigned char value) {
    const unsigned char* bytes = (const unsigned char*)p;
    for (size_t i = from; i < to; ++i) {
        if (bytes[i] != value) fail_msg("byte %zu is 0x%02x, expected 0x%02x", i, bytes[i], value);
    }
}

static void test_attn_params_init_current(void** state) {
    (void)state;
    zyfa_attn_params p;
    memset(&p, GARBAGE_BYTE, sizeof(p));
    zyfa_attn_params_init(&p, sizeof(p));
    zyfa_attn_params expected;
    memset(&expected, 0, sizeof(expected)); /* the struct has no padding (abi tier checks it) */
    expected.struct_size = sizeof(expected);
    expected.softmax = ZYFA_SOFTMAX_AUTO;
    expected.window_left = -1;
    expected.window_right = -1;
    assert_memory_equal(&p, &expected, sizeof(p));
    assert_int_equal(p.key_block, 0); /* the backend's own step */
    assert_int_equal(p.reserved, 0);
}

static void test_attn_params_init_smaller(void** state) {
    (void)state;
    zyfa_attn_params p;
    const size_t older = offsetof(zyfa_attn_params, softmax_scale);
    memset(&p, GARBAGE_BYTE, sizeof(p));
    zyfa_attn_params_init(&p, older);
    assert_int_equal(p.struct_size, older);
    assert_bytes(&p, sizeof(uint32_t), older, 0);
    assert_bytes(&p, older, sizeof(p), GARBAGE_BYTE); /* nothing written past struct_size */

    /* window_left fits, window_right does not. */
    const size_t through_left = offsetof(zyfa_attn_params, window_left) + sizeof(int32_t);
    memset(&p, GARBAGE_BYTE, sizeof(p));
    zyfa_attn_params_init(&p, through_left);
    assert_int_equal(p.window_left, -1);
    assert_int_equal(p.softmax, ZYFA_SOFTMAX_AUTO);
    assert_bytes(&p, through_left, sizeof(p), GARBAGE_BYTE);

    /* 0.1's struct, which ends at flags: key_block and reserved are left alone. */
    const size_t v0_1 = offsetof(zyfa_attn_params, key_block);
    memset(&p, GARBAGE_BYTE, sizeof(p));
    zyfa_attn_params_init(&p, v0_1);
    assert_int_equal(p.struct_size, v0_1);
    assert_int_equal(p.window_right, -1);
    assert_bytes(&p, v0_1, sizeof(p), GARBAGE_BYTE);
}

static void test_init_tiny_sizes_and_null(void** state) {
    (void)state;
    zyfa_attn_params_init(NULL, sizeof(zyfa_attn_params));
    zyfa_quant_params_init(NULL, sizeof(zyfa_quant_params));
    zyfa_context_options_init(NULL, sizeof(zyfa_context_options));

    zyfa_attn_params p;
    memset(&p, GARBAGE_BYTE, sizeof(p));
    zyfa_attn_params_init(&p, 2); /* struct_size itself does not fit: only 2 bytes are zeroed */
    assert_bytes(&p, 0, 2, 0);
    assert_bytes(&p, 2, sizeof(p), GARBAGE_BYTE);
    memset(&p, GARBAGE_BYTE, sizeof(p));
    zyfa_attn_params_init(&p, 0);
    assert_bytes(&p, 0, sizeof(p), GARBAGE_BYTE);
}

static void test_quant_params_init(void** state) {
    (void)state;
    zyfa_quant_params p;
    memset(&p, GARBAGE_BYTE, sizeof(p));
    zyfa_quant_params_init(&p, sizeof(p));
    assert_int_equal(p.struct_size, sizeof(p));
    assert_bytes(&p, sizeof(uint32_t), sizeof(p), 0);

    const size_t older = offsetof(zyfa_quant_params, cu_seqlens);
    memset(&p, GARBAGE_BYTE, sizeof(p));
    zyfa_quant_params_init(&p, older);
    assert_int_equal(p.struct_size, older);
    assert_bytes(&p, sizeof(uint32_t), older, 0);
    assert_bytes(&p, older, sizeof(p), GARBAGE_BYTE);
}

static void test_context_options_init(void** state) {
    (void)state;
    zyfa_context_options o;
    memset(&o, GARBAGE_BYTE, sizeof(o));
    zyfa_context_options_init(&o, sizeof(o));
    assert_int_equal(o.struct_size, sizeof(o));
    assert_int_equal(o.backend, ZYFA_BACKEND_AUTO);
    assert_int_equal(o.device, 0);
    assert_int_equal(o.num_threads, 0);

    memset(&o, GARBAGE_BYTE, sizeof(o));
    zyfa_context_options_init(&o, offsetof(zyfa_context_options, device));
    assert_int_equal(o.struct_size, offsetof(zyfa_context_options, device));
    assert_int_equal(o.backend, ZYFA_BACKEND_AUTO);
    assert_bytes(&o, offsetof(zyfa_context_options, device), sizeof(o), GARBAGE_BYTE);
}

/* The output of the fixture's problem with a current, complete params struct. */
static unsigned char* reference_output(size_t* bytes) {
    attn_fixture* f = attn_fixture_create(ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP32);
    assert_int_equal(attn_fixture_fwd(f), ZYFA_SUCCESS);
    assert_false(attn_fixture_outputs_untouched(f));
    unsigned char* copy = (unsigned char*)unit_alloc(f->o_bytes);
    memcpy(copy, f->o_data, f->o_bytes);
    *bytes = f->o_bytes;
    attn_fixture_destroy(f);
    return copy;
}

/* Runs the fixture's problem from a struct of `struct_size` bytes whose later bytes are garbage;
 * the library must read none of them. */
static void run_older_caller(size_t struct_size) {
    size_t reference_bytes = 0;
    unsigned char* reference = reference_output(&reference_bytes);

    attn_fixture* f = attn_fixture_create(ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP32);
    zyfa_attn_params older;
    memset(&older, GARBAGE_BYTE, sizeof(older));
    zyfa_attn_params_init(&older, struct_size);
    memcpy((char*)&older + sizeof(uint32_t), (const char*)&f->big.params + sizeof(uint32_t),
           offsetof(zyfa_attn_params, softmax_scale) - sizeof(uint32_t)); /* mask .. head_dim_v */
    f->p = &older;

    assert_int_equal(attn_fixture_supported(f), ZYFA_SUCCESS);
    assert_non_null(attn_fixture_kernel_name(f));
    assert_int_equal(attn_fixture_fwd(f), ZYFA_SUCCESS);
    assert_int_equal(f->o_bytes, reference_bytes);
    /* Defaults (scale 1/sqrt(d), softmax AUTO, no window) give the reference bit for bit. */
    assert_memory_equal(f->o_data, reference, reference_bytes);
    /* params.lse lies beyond struct_size: NULL, so the lse buffer is not written. */
    assert_memory_equal(f->lse, f->lse_before, f->lse_count * sizeof(float));
    attn_fixture_destroy(f);
    free(reference);
}

static void test_older_caller_through_head_dim_v(void** state) {
    (void)state;
    run_older_caller(offsetof(zyfa_attn_params, softmax_scale));
}

/* struct_size cuts window_left in two: the field is not the caller's and takes its default
 * (the garbage 0xCDCDCDCD would be an invalid window if it were read). */
static void test_field_cut_by_struct_size_takes_default(void** state) {
    (void)state;
    run_older_caller(offsetof(zyfa_attn_params, window_left) + 2);
}

/* A caller built against 0.1's header: its struct ends at flags (136 bytes on LP64), before
 * key_block; the garbage behind it (0xCDCDCDCD, an invalid key_block) is never read. */
static void test_older_caller_of_0_1(void** state) {
    (void)state;
    assert_int_equal(offsetof(zyfa_attn_params, key_block), 136);
    run_older_caller(offsetof(zyfa_attn_params, key_block));
}

/* struct_size cuts key_block in two, or ends inside reserved (the tail padding spelled out):
 * the cut field takes its default (garbage there would be an invalid key_block or a newer
 * caller's field). */
static void test_struct_size_cutting_the_new_fields(void** state) {
    (void)state;
    run_older_caller(offsetof(zyfa_attn_params, key_block) + 2);
    run_older_caller(offsetof(zyfa_attn_params, reserved));
    run_older_caller(offsetof(zyfa_attn_params, reserved) + 1);
    run_older_caller(offsetof(zyfa_attn_params, reserved) + 3);
}

static void test_newer_caller_zero_tail_accepted(void** state) {
    (void)state;
    size_t reference_bytes = 0;
    unsigned char* reference = reference_output(&reference_bytes);
    attn_fixture* f = attn_fixture_create(ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP32);
    memset(f->big.tail, 0, sizeof(f->big.tail));
    f->big.params.struct_size = (uint32_t)(sizeof(zyfa_attn_params) + sizeof(f->big.tail));
    assert_int_equal(attn_fixture_supported(f), ZYFA_SUCCESS);
    assert_int_equal(attn_fixture_fwd(f), ZYFA_SUCCESS);
    assert_memory_equal(f->o_data, reference, reference_bytes);
    attn_fixture_destroy(f);
    free(reference);
}

static void test_newer_caller_nonzero_tail_not_supported(void** state) {
    (void)state;
    for (size_t at = 0; at < 32; at += 31) { /* first and last unknown byte */
        attn_fixture* f = attn_fixture_create(ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP32);
        memset(f->big.tail, 0, sizeof(f->big.tail));
        f->big.tail[at] = 1;
        f->big.params.struct_size = (uint32_t)(sizeof(zyfa_attn_params) + sizeof(f->big.tail));
        assert_int_equal(attn_fixture_fwd(f), ZYFA_ERROR_NOT_SUPPORTED);
        unit_assert_message_contains("nonzero tail", "params.struct_size");
        assert_true(attn_fixture_outputs_untouched(f));
        assert_int_equal(attn_fixture_supported(f), ZYFA_ERROR_NOT_SUPPORTED);
        assert_null(attn_fixture_kernel_name(f));
        attn_fixture_destroy(f);
    }
}

static void test_struct_size_too_small_or_absurd(void** state) {
    (void)state;
    const uint32_t sizes[] = {0, 3, 4, (uint32_t)offsetof(zyfa_attn_params, head_dim_v),
                              (uint32_t)offsetof(zyfa_attn_params, head_dim_v) + 7, 1u << 20, UINT32_MAX};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); ++i) {
        attn_fixture* f = attn_fixture_create(ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP32);
        f->big.params.struct_size = sizes[i];
        assert_int_equal(attn_fixture_fwd(f), ZYFA_ERROR_INVALID_ARGUMENT);
        unit_assert_message_contains("struct_size", "params.struct_size");
        assert_true(attn_fixture_outputs_untouched(f));
        attn_fixture_destroy(f);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_attn_params_init_current),
        cmocka_unit_test(test_attn_params_init_smaller),
        cmocka_unit_test(test_init_tiny_sizes_and_null),
        cmocka_unit_test(test_quant_params_init),
        cmocka_unit_test(test_context_options_init),
        cmocka_unit_test(test_older_caller_through_head_dim_v),
        cmocka_unit_test(test_field_cut_by_struct_size_takes_default),
        cmocka_unit_test(test_older_caller_of_0_1),
        cmocka_unit_test(test_struct_size_cutting_the_new_fields),
        cmocka_unit_test(test_newer_caller_zero_tail_accepted),
        cmocka_unit_test(test_newer_caller_nonzero_tail_not_supported),
        cmocka_unit_test(test_struct_size_too_small_or_absurd),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
