/*
 * The binary layout of the public structs and the values of the public constants, as docs/api.md
 * fixes them. Bindings (Rust, Go, Python ctypes) restate these layouts by hand, so a reordered
 * field, a widened type or a renumbered enum value must fail here before it ships.
 * The expected offsets are those of the LP64 data model (Linux/macOS on 64-bit CPUs: 8-byte
 * pointers and int64_t, 4-byte int32_t/float), derived field by field from docs/api.md.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <zyfa.h>

#define FIELD_SIZE(type, field) sizeof(((type*)0)->field)

static int is_lp64(void) { return sizeof(void*) == 8 && sizeof(long) == 8; }

#define EXPECT_FIELD(type, field, offset, size)                   \
    do {                                                          \
        assert_int_equal(offsetof(type, field), (offset));        \
        assert_int_equal(FIELD_SIZE(type, field), (size));        \
    } while (0)

static void context_options_layout(void** state) {
    (void)state;
    if (!is_lp64()) skip();
    EXPECT_FIELD(zyfa_context_options, struct_size, 0, 4);
    EXPECT_FIELD(zyfa_context_options, backend, 4, 4);
    EXPECT_FIELD(zyfa_context_options, device, 8, 4);
    EXPECT_FIELD(zyfa_context_options, num_threads, 12, 4);
    assert_int_equal(sizeof(zyfa_context_options), 16);
    assert_int_equal(_Alignof(zyfa_context_options), 4);
}

static void tensor_layout(void** state) {
    (void)state;
    if (!is_lp64()) skip();
    EXPECT_FIELD(zyfa_tensor, data, 0, 8);
    EXPECT_FIELD(zyfa_tensor, dtype, 8, 4);
    EXPECT_FIELD(zyfa_tensor, reserved, 12, 4);
    EXPECT_FIELD(zyfa_tensor, stride_batch, 16, 8);
    EXPECT_FIELD(zyfa_tensor, stride_seq, 24, 8);
    EXPECT_FIELD(zyfa_tensor, stride_head, 32, 8);
    assert_int_equal(sizeof(zyfa_tensor), 40);
    assert_int_equal(_Alignof(zyfa_tensor), 8);
}

static void attn_params_layout(void** state) {
    (void)state;
    if (!is_lp64()) skip();
    EXPECT_FIELD(zyfa_attn_params, struct_size, 0, 4);
    EXPECT_FIELD(zyfa_attn_params, mask, 4, 4);
    EXPECT_FIELD(zyfa_attn_params, batch, 8, 8);
    EXPECT_FIELD(zyfa_attn_params, seqlen_q, 16, 8);
    EXPECT_FIELD(zyfa_attn_params, seqlen_k, 24, 8);
    EXPECT_FIELD(zyfa_attn_params, heads_q, 32, 8);
    EXPECT_FIELD(zyfa_attn_params, heads_kv, 40, 8);
    EXPECT_FIELD(zyfa_attn_params, head_dim_qk, 48, 8);
    EXPECT_FIELD(zyfa_attn_params, head_dim_v, 56, 8);
    EXPECT_FIELD(zyfa_attn_params, softmax_scale, 64, 4);
    EXPECT_FIELD(zyfa_attn_params, softmax, 68, 4);
    EXPECT_FIELD(zyfa_attn_params, window_left, 72, 4);
    EXPECT_FIELD(zyfa_attn_params, window_right, 76, 4);
    EXPECT_FIELD(zyfa_attn_params, cu_seqlens_q, 80, 8);
    EXPECT_FIELD(zyfa_attn_params, cu_seqlens_k, 88, 8);
    EXPECT_FIELD(zyfa_attn_params, q_descale, 96, 8);
    EXPECT_FIELD(zyfa_attn_params, k_descale, 104, 8);
    EXPECT_FIELD(zyfa_attn_params, v_descale, 112, 8);
    EXPECT_FIELD(zyfa_attn_params, lse, 120, 8);
    EXPECT_FIELD(zyfa_attn_params, flags, 128, 8);
    /* Appended after 0.1 (whose struct ended at 136): 0.1 callers pass struct_size 136. */
    EXPECT_FIELD(zyfa_attn_params, key_block, 136, 4);
    EXPECT_FIELD(zyfa_attn_params, reserved, 140, 4);
    /* Appended in 0.1.4 (0.1.3 callers pass struct_size 144): sinks, then paged K/V, then the
       INT8 Q/K mode's descales. */
    EXPECT_FIELD(zyfa_attn_params, sinks, 144, 8);
    EXPECT_FIELD(zyfa_attn_params, block_table, 152, 8);
    EXPECT_FIELD(zyfa_attn_params, seqused_k, 160, 8);
    EXPECT_FIELD(zyfa_attn_params, block_table_stride, 168, 8);
    EXPECT_FIELD(zyfa_attn_params, num_pages, 176, 8);
    EXPECT_FIELD(zyfa_attn_params, page_size, 184, 4);
    EXPECT_FIELD(zyfa_attn_params, reserved2, 188, 4);
    EXPECT_FIELD(zyfa_attn_params, q_descale_per_token, 192, 8);
    EXPECT_FIELD(zyfa_attn_params, k_descale_per_block, 200, 8);
    /* Appended in 0.1.5 (0.1.4 callers pass struct_size 208): the split-KV workspace. */
    EXPECT_FIELD(zyfa_attn_params, workspace, 208, 8);
    EXPECT_FIELD(zyfa_attn_params, workspace_bytes, 216, 8);
    EXPECT_FIELD(zyfa_attn_params, num_splits, 224, 4);
    EXPECT_FIELD(zyfa_attn_params, reserved3, 228, 4);
    /* Appended in 0.1.6 (0.1.5 callers pass struct_size 232): the per-key score bias. */
    EXPECT_FIELD(zyfa_attn_params, key_bias, 232, 8);
    assert_int_equal(sizeof(zyfa_attn_params), 240);
    assert_int_equal(_Alignof(zyfa_attn_params), 8);
}

static void quant_params_layout(void** state) {
    (void)state;
    if (!is_lp64()) skip();
    EXPECT_FIELD(zyfa_quant_params, struct_size, 0, 4);
    EXPECT_FIELD(zyfa_quant_params, flags, 4, 4);
    EXPECT_FIELD(zyfa_quant_params, batch, 8, 8);
    EXPECT_FIELD(zyfa_quant_params, seqlen, 16, 8);
    EXPECT_FIELD(zyfa_quant_params, heads, 24, 8);
    EXPECT_FIELD(zyfa_quant_params, head_dim, 32, 8);
    EXPECT_FIELD(zyfa_quant_params, cu_seqlens, 40, 8);
    /* Appended after 0.1 (whose struct ended at 48): 0.1 callers pass struct_size 48. */
    EXPECT_FIELD(zyfa_quant_params, smooth_mean, 48, 8);
    /* Appended in 0.1.4 (zyfa_quantize_int8): 0.1.3 callers pass struct_size 56. */
    EXPECT_FIELD(zyfa_quant_params, scale_rows, 56, 4);
    EXPECT_FIELD(zyfa_quant_params, reserved, 60, 4);
    /* Appended in 0.1.6 (ZYFA_QUANT_KEY_BIAS): 0.1.5 callers pass struct_size 64. */
    EXPECT_FIELD(zyfa_quant_params, query_mean, 64, 8);
    EXPECT_FIELD(zyfa_quant_params, key_bias, 72, 8);
    EXPECT_FIELD(zyfa_quant_params, query_heads, 80, 8);
    EXPECT_FIELD(zyfa_quant_params, key_bias_scale, 88, 4);
    EXPECT_FIELD(zyfa_quant_params, reserved2, 92, 4);
    assert_int_equal(sizeof(zyfa_quant_params), 96);
    assert_int_equal(_Alignof(zyfa_quant_params), 8);
}

/* Added after 0.1.2 with zyfa_attn_merge (node ZYFA_0.1.3); no implicit padding. */
static void merge_params_layout(void** state) {
    (void)state;
    if (!is_lp64()) skip();
    EXPECT_FIELD(zyfa_merge_params, struct_size, 0, 4);
    EXPECT_FIELD(zyfa_merge_params, num_parts, 4, 4);
    EXPECT_FIELD(zyfa_merge_params, batch, 8, 8);
    EXPECT_FIELD(zyfa_merge_params, seqlen_q, 16, 8);
    EXPECT_FIELD(zyfa_merge_params, heads, 24, 8);
    EXPECT_FIELD(zyfa_merge_params, head_dim_v, 32, 8);
    EXPECT_FIELD(zyfa_merge_params, cu_seqlens_q, 40, 8);
    EXPECT_FIELD(zyfa_merge_params, lse, 48, 8);
    assert_int_equal(sizeof(zyfa_merge_params), 56);
    assert_int_equal(_Alignof(zyfa_merge_params), 8);
}

/* Signedness is part of the layout an FFI restates: -1 windows and negative strides must stay
 * representable, struct_size and flags must stay unsigned. */
static void field_signedness(void** state) {
    zyfa_attn_params p;
    zyfa_tensor t;
    zyfa_quant_params qp;
    zyfa_merge_params mp;
    (void)state;
    memset(&mp, 0, sizeof mp);
    mp.num_parts = -1;
    mp.struct_size = 0u - 1u;
    assert_true(mp.num_parts < 0);
    assert_true(mp.struct_size > 0);
    memset(&p, 0, sizeof p);
    memset(&t, 0, sizeof t);
    memset(&qp, 0, sizeof qp);
    p.window_left = -1;
    p.key_block = -1;
    p.mask = -1;
    p.batch = -1;
    p.struct_size = 0u - 1u;
    p.flags = 0u - 1u;
    t.stride_seq = -1;
    t.dtype = -1;
    qp.flags = 0u - 1u;
    assert_true(p.window_left < 0);
    assert_true(p.key_block < 0);
    assert_true(p.mask < 0);
    assert_true(p.batch < 0);
    assert_true(p.struct_size > 0);
    assert_true(p.flags > 0);
    assert_true(t.stride_seq < 0);
    assert_true(t.dtype < 0);
    assert_true(qp.flags > 0);
}

static void constant_values(void** state) {
    (void)state;
    assert_int_equal(ZYFA_SUCCESS, 0);
    assert_int_equal(ZYFA_ERROR_INVALID_ARGUMENT, 1);
    assert_int_equal(ZYFA_ERROR_NOT_SUPPORTED, 2);
    assert_int_equal(ZYFA_ERROR_NO_DEVICE, 3);
    assert_int_equal(ZYFA_ERROR_DEVICE, 4);
    assert_int_equal(ZYFA_ERROR_OUT_OF_MEMORY, 5);
    assert_int_equal(ZYFA_ERROR_INTERNAL, 6);

    assert_int_equal(ZYFA_DTYPE_FP32, 1);
    assert_int_equal(ZYFA_DTYPE_FP16, 2);
    assert_int_equal(ZYFA_DTYPE_BF16, 3);
    assert_int_equal(ZYFA_DTYPE_FP8_E4M3FN, 4);
    assert_int_equal(ZYFA_DTYPE_FP8_E4M3FNUZ, 5);
    assert_int_equal(ZYFA_DTYPE_INT8, 6);
    assert_int_equal(ZYFA_INT8_KEY_BLOCK, 64);

    assert_int_equal(ZYFA_BACKEND_AUTO, 0);
    assert_int_equal(ZYFA_BACKEND_CPU, 1);
    assert_int_equal(ZYFA_BACKEND_HIP, 2);
    assert_int_equal(ZYFA_BACKEND_CUDA, 3);

    assert_int_equal(ZYFA_MASK_NONE, 0);
    assert_int_equal(ZYFA_MASK_CAUSAL, 1);
    assert_int_equal(ZYFA_MASK_CAUSAL_BOTTOM_RIGHT, 2);

    assert_int_equal(ZYFA_SOFTMAX_AUTO, 0);
    assert_int_equal(ZYFA_SOFTMAX_EXACT, 1);
    assert_int_equal(ZYFA_SOFTMAX_LEAN, 2);

    assert_int_equal(ZYFA_QUANT_HADAMARD, 1);
    assert_int_equal(ZYFA_QUANT_SMOOTH, 2);

    assert_int_equal(ZYFA_VERSION_MAJOR, 0);
    assert_int_equal(ZYFA_VERSION_MINOR, 1);
    assert_int_equal(ZYFA_VERSION_PATCH, 0);
    assert_int_equal(ZYFA_VERSION_NUMBER, 100);
}

/* The library that was loaded is the one this header describes (same major and minor: before
 * 1.0 a minor release may change the ABI). */
static void runtime_version_matches_header(void** state) {
    char expected[32];
    const uint32_t version = zyfa_version();
    (void)state;
    assert_int_equal(version / 10000, ZYFA_VERSION_MAJOR);
    assert_int_equal(version / 100 % 100, ZYFA_VERSION_MINOR);
    /* "MAJOR.MINOR.PATCH" agrees with the number. */
    snprintf(expected, sizeof expected, "%u.%u.%u", (unsigned)(version / 10000),
             (unsigned)(version / 100 % 100), (unsigned)(version % 100));
    assert_non_null(zyfa_version_string());
    assert_string_equal(zyfa_version_string(), expected);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(context_options_layout),
        cmocka_unit_test(tensor_layout),
        cmocka_unit_test(attn_params_layout),
        cmocka_unit_test(quant_params_layout),
        cmocka_unit_test(merge_params_layout),
        cmocka_unit_test(field_signedness),
        cmocka_unit_test(constant_values),
        cmocka_unit_test(runtime_version_matches_header),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
