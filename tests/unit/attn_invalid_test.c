/* Every malformed zyfa_attn_fwd request is refused with INVALID_ARGUMENT (NOT_SUPPORTED where the
 * contract says so), a message naming the field, and nothing written to o or lse; the query
 * functions agree with zyfa_attn_fwd. Each case mutates one valid problem on the CPU backend. */
#include <math.h>

#include "unit_support.h"

typedef void (*mutation)(attn_fixture* f);

typedef struct bad_case {
    const char* name;
    zyfa_dtype input; /* dtype of q, k, v before the mutation */
    mutation mutate;
    zyfa_status status;
    const char* needle; /* must appear in the message */
} bad_case;

#define MUTATION(name, statements) \
    static void name(attn_fixture* f) { statements; }

/* Handles and pointers */
MUTATION(null_ctx, f->ctx = NULL)
MUTATION(null_params, f->p = NULL)
MUTATION(null_q, f->qp = NULL)
MUTATION(null_k, f->kp = NULL)
MUTATION(null_v, f->vp = NULL)
MUTATION(null_o, f->op = NULL)
MUTATION(null_q_data, f->q.data = NULL)
MUTATION(null_k_data, f->k.data = NULL)
MUTATION(null_o_data, f->o.data = NULL)
/* struct_size */
MUTATION(struct_size_zero, f->big.params.struct_size = 0)
MUTATION(struct_size_before_head_dim_v,
         f->big.params.struct_size = (uint32_t)offsetof(zyfa_attn_params, head_dim_v))
MUTATION(struct_size_newer_nonzero_tail, f->big.params.struct_size = (uint32_t)sizeof(f->big);
         f->big.tail[3] = 0x40)
/* Dimensions */
MUTATION(negative_batch, f->big.params.batch = -1)
MUTATION(negative_seqlen_q, f->big.params.seqlen_q = -4)
MUTATION(negative_seqlen_k, f->big.params.seqlen_k = INT64_MIN)
MUTATION(zero_heads_q, f->big.params.heads_q = 0)
MUTATION(zero_heads_kv, f->big.params.heads_kv = 0)
MUTATION(negative_heads_kv, f->big.params.heads_kv = -2)
MUTATION(zero_head_dim_qk, f->big.params.head_dim_qk = 0)
MUTATION(zero_head_dim_v, f->big.params.head_dim_v = 0)
MUTATION(huge_head_dim_qk, f->big.params.head_dim_qk = 513)
MUTATION(huge_head_dim_v, f->big.params.head_dim_v = 1024)
MUTATION(heads_kv_not_dividing, f->big.params.heads_kv = 3)
MUTATION(heads_kv_above_heads_q, f->big.params.heads_kv = 8)
/* Enumerations and flags */
MUTATION(unknown_mask, f->big.params.mask = 3)
MUTATION(negative_mask, f->big.params.mask = -1)
MUTATION(unknown_softmax, f->big.params.softmax = 3)
MUTATION(flags_set, f->big.params.flags = 2)
MUTATION(flags_v_transposed_bf16, f->big.params.flags = ZYFA_ATTN_V_TRANSPOSED)
MUTATION(flags_high_bit, f->big.params.flags = UINT64_C(1) << 63)
MUTATION(key_block_32, f->big.params.key_block = 32)
MUTATION(key_block_63, f->big.params.key_block = 63)
MUTATION(key_block_minus_one, f->big.params.key_block = -1)
MUTATION(key_block_256, f->big.params.key_block = 256)
MUTATION(key_block_min, f->big.params.key_block = INT32_MIN)
MUTATION(reserved_set, f->big.params.reserved = 1)
MUTATION(window_left_below_minus_one, f->big.params.window_left = -2)
MUTATION(window_right_below_minus_one, f->big.params.window_right = INT32_MIN)
MUTATION(scale_nan, f->big.params.softmax_scale = NAN)
MUTATION(scale_inf, f->big.params.softmax_scale = INFINITY)
/* Tensors: reserved and dtypes */
MUTATION(q_reserved, f->q.reserved = 1)
MUTATION(o_reserved, f->o.reserved = -1)
MUTATION(q_dtype_zero, f->q.dtype = 0; f->k.dtype = 0; f->v.dtype = 0)
MUTATION(q_dtype_unknown, f->q.dtype = 99)
MUTATION(k_dtype_differs, f->k.dtype = ZYFA_DTYPE_FP16)
MUTATION(v_dtype_fp8_with_bf16, f->v.dtype = ZYFA_DTYPE_FP8_E4M3FN)
MUTATION(k_dtype_fp8_flavours_mixed, f->k.dtype = ZYFA_DTYPE_FP8_E4M3FNUZ)
MUTATION(o_dtype_fp8, f->o.dtype = ZYFA_DTYPE_FP8_E4M3FN)
MUTATION(o_dtype_unknown, f->o.dtype = 6)
MUTATION(q_descale_for_bf16, f->big.params.q_descale = f->descale)
MUTATION(v_descale_for_bf16, f->big.params.v_descale = f->descale)
MUTATION(lean_for_bf16, f->big.params.softmax = ZYFA_SOFTMAX_LEAN)
/* Strides */
MUTATION(q_negative_stride_seq, f->q.stride_seq = -1)
MUTATION(k_negative_stride_head, f->k.stride_head = -UNIT_DIM)
MUTATION(v_negative_stride_batch, f->v.stride_batch = -1)
MUTATION(q_heads_overlap, f->q.stride_head = UNIT_DIM / 2)
MUTATION(o_rows_overlap, f->o.stride_seq = 2 * UNIT_DIM) /* heads span 4 * 16 */
MUTATION(k_batches_alias, f->k.stride_batch = 0)
MUTATION(v_rows_share_heads, f->v.stride_seq = f->v.stride_head) /* equal strides */
MUTATION(q_stride_overflow, f->q.stride_batch = INT64_MAX - 8)
MUTATION(o_byte_offset_overflow, f->o.stride_batch = INT64_MAX / 3) /* fp32: x4 overflows */
MUTATION(seqlen_overflow, f->big.params.seqlen_q = INT64_MAX / 2)
/* Packed sequences */
MUTATION(cu_q_without_cu_k, f->big.params.cu_seqlens_q = f->cu_q)
MUTATION(cu_k_without_cu_q, f->big.params.cu_seqlens_k = f->cu_k)
MUTATION(cu_q_not_from_zero, f->cu_q[0] = 1; f->big.params.cu_seqlens_q = f->cu_q; f->big.params.cu_seqlens_k = f->cu_k)
MUTATION(cu_k_decreasing, f->cu_k[2] = f->cu_k[1] - 1; f->big.params.cu_seqlens_q = f->cu_q;
         f->big.params.cu_seqlens_k = f->cu_k)
MUTATION(cu_q_too_long, f->cu_q[1] = UNIT_SEQ_Q + 1; f->cu_q[2] = UNIT_SEQ_Q + 2;
         f->big.params.cu_seqlens_q = f->cu_q; f->big.params.cu_seqlens_k = f->cu_k)
MUTATION(cu_k_total_overflows, f->big.params.seqlen_k = INT32_MAX; f->cu_k[1] = 2000000000;
         f->cu_k[2] = 2000000001; f->k.stride_seq = INT64_C(1) << 40; f->big.params.cu_seqlens_q = f->cu_q;
         f->big.params.cu_seqlens_k = f->cu_k)
/* Alignment (issue 18): each pointer to its element's size. */
MUTATION(q_bf16_odd_address, f->q.data = (char*)f->q_data + 1)
MUTATION(o_fp32_address_2_mod_4, f->o.data = (char*)f->o_data + 2)
MUTATION(lse_address_2_mod_4, f->big.params.lse = (float*)(void*)((char*)f->lse + 2))
MUTATION(cu_seqlens_q_odd_address, f->big.params.cu_seqlens_q = (const int32_t*)(const void*)((char*)f->cu_q + 1);
         f->big.params.cu_seqlens_k = f->cu_k)
MUTATION(cu_seqlens_k_odd_address, f->big.params.cu_seqlens_q = f->cu_q;
         f->big.params.cu_seqlens_k = (const int32_t*)(const void*)((char*)f->cu_k + 3))
MUTATION(k_descale_odd_address, f->big.params.k_descale = (const float*)(const void*)((char*)f->descale + 1))
/* Aliasing (issue 18): no output shares a byte with an input or with the other output. */
MUTATION(o_is_k, f->o.data = f->k_data; f->o.dtype = ZYFA_DTYPE_BF16)
MUTATION(o_is_v, f->o.data = f->v_data)
MUTATION(o_overlaps_q_shifted_one_row, f->o.data = (char*)f->q_data + UNIT_HEADS_Q * UNIT_DIM * 2)
MUTATION(lse_inside_o, f->big.params.lse = (float*)f->o_data + 7)
MUTATION(lse_inside_q, f->big.params.lse = (float*)f->q_data)
MUTATION(lse_inside_k, f->big.params.lse = (float*)f->k_data + 3)
MUTATION(o_over_cu_seqlens, f->big.params.cu_seqlens_q = f->cu_q; f->big.params.cu_seqlens_k = f->cu_k;
         f->big.params.lse = (float*)(void*)f->cu_k)
MUTATION(q_descale_inside_o, f->big.params.q_descale = (const float*)f->o_data + 2)
/* FP8 inputs */
MUTATION(fp8_o_is_fp8, f->o.dtype = ZYFA_DTYPE_FP8_E4M3FNUZ)
MUTATION(fp8_k_is_bf16, f->k.dtype = ZYFA_DTYPE_BF16)

/* The INT8 Q/K mode's descales: [batch, heads_q, seqlen_q] and [batch, heads_kv, ceil(seqlen_k / 64)]. */
static float g_token_descale[UNIT_BATCH * UNIT_HEADS_Q * UNIT_SEQ_Q];
static float g_block_descale[UNIT_BATCH * UNIT_HEADS_KV];
MUTATION(int8_k_is_fp8, f->k.dtype = ZYFA_DTYPE_FP8_E4M3FN)
MUTATION(int8_v_is_int8, f->v.dtype = ZYFA_DTYPE_INT8)
MUTATION(int8_v_is_bf16, f->v.dtype = ZYFA_DTYPE_BF16)
MUTATION(fp8_k_is_int8, f->k.dtype = ZYFA_DTYPE_INT8)
MUTATION(int8_with_q_descale, f->big.params.q_descale = f->descale)
MUTATION(int8_with_k_descale, f->big.params.k_descale = f->descale)
MUTATION(fp8_with_token_descale, f->big.params.q_descale_per_token = g_token_descale)
MUTATION(fp8_with_block_descale, f->big.params.k_descale_per_block = g_block_descale)
MUTATION(token_descale_odd_address,
         f->big.params.q_descale_per_token = (const float*)(const void*)((char*)g_token_descale + 2))
MUTATION(block_descale_inside_o, f->big.params.k_descale_per_block = (const float*)f->o_data + 4)
MUTATION(int8_o_is_int8, f->o.dtype = ZYFA_DTYPE_INT8)

#define INVALID ZYFA_ERROR_INVALID_ARGUMENT
#define UNSUPPORTED ZYFA_ERROR_NOT_SUPPORTED
#define BF16 ZYFA_DTYPE_BF16
#define FP8 ZYFA_DTYPE_FP8_E4M3FN
#define INT8 ZYFA_DTYPE_INT8 /* q and k INT8, v FP8 (base_problem) */

static const bad_case cases[] = {
    {"null ctx", BF16, null_ctx, INVALID, "ctx is NULL"},
    {"null params", BF16, null_params, INVALID, "params is NULL"},
    {"null q", BF16, null_q, INVALID, "q is NULL"},
    {"null k", BF16, null_k, INVALID, "k is NULL"},
    {"null v", BF16, null_v, INVALID, "v is NULL"},
    {"null o", BF16, null_o, INVALID, "o is NULL"},
    {"null q data", BF16, null_q_data, INVALID, "q.data is NULL"},
    {"null k data", BF16, null_k_data, INVALID, "k.data is NULL"},
    {"null o data", BF16, null_o_data, INVALID, "o.data is NULL"},
    {"struct_size 0", BF16, struct_size_zero, INVALID, "params.struct_size = 0"},
    {"struct_size short", BF16, struct_size_before_head_dim_v, INVALID, "params.struct_size = 56"},
    {"struct_size newer, tail set", BF16, struct_size_newer_nonzero_tail, UNSUPPORTED, "params.struct_size"},
    {"batch < 0", BF16, negative_batch, INVALID, "params.batch = -1"},
    {"seqlen_q < 0", BF16, negative_seqlen_q, INVALID, "params.seqlen_q = -4"},
    {"seqlen_k < 0", BF16, negative_seqlen_k, INVALID, "params.seqlen_k = -9223372036854775808"},
    {"heads_q 0", BF16, zero_heads_q, INVALID, "params.heads_q = 0"},
    {"heads_kv 0", BF16, zero_heads_kv, INVALID, "params.heads_kv = 0"},
    {"heads_kv < 0", BF16, negative_heads_kv, INVALID, "params.heads_kv = -2"},
    {"head_dim_qk 0", BF16, zero_head_dim_qk, INVALID, "params.head_dim_qk = 0"},
    {"head_dim_v 0", BF16, zero_head_dim_v, INVALID, "params.head_dim_v = 0"},
    {"head_dim_qk 513", BF16, huge_head_dim_qk, INVALID, "params.head_dim_qk = 513"},
    {"head_dim_v 1024", BF16, huge_head_dim_v, INVALID, "params.head_dim_v = 1024"},
    {"heads_kv 3 of 4", BF16, heads_kv_not_dividing, INVALID, "params.heads_kv = 3 does not divide params.heads_q = 4"},
    {"heads_kv 8 of 4", BF16, heads_kv_above_heads_q, INVALID, "params.heads_kv = 8"},
    {"mask 3", BF16, unknown_mask, INVALID, "params.mask = 3"},
    {"mask -1", BF16, negative_mask, INVALID, "params.mask = -1"},
    {"softmax 3", BF16, unknown_softmax, INVALID, "params.softmax = 3"},
    {"flags 2", BF16, flags_set, INVALID, "params.flags = 2"},
    {"flags V transposed, BF16 v", BF16, flags_v_transposed_bf16, INVALID, "v.dtype = BF16"},
    {"flags bit 63", BF16, flags_high_bit, INVALID, "params.flags = 9223372036854775808"},
    {"key_block 32", BF16, key_block_32, INVALID, "params.key_block = 32"},
    {"key_block 63", BF16, key_block_63, INVALID, "params.key_block = 63"},
    {"key_block -1", BF16, key_block_minus_one, INVALID, "params.key_block = -1"},
    {"key_block 256", BF16, key_block_256, INVALID, "params.key_block = 256"},
    {"key_block 63, FP8", FP8, key_block_63, INVALID, "params.key_block = 63"},
    {"key_block 256, FP8", FP8, key_block_256, INVALID, "params.key_block = 256"},
    {"key_block min", FP8, key_block_min, INVALID, "params.key_block = -2147483648"},
    /* The tail padding is a later field's place: set, it is a newer caller's request. */
    {"reserved 1", BF16, reserved_set, UNSUPPORTED, "params.reserved = 1"},
    {"window_left -2", BF16, window_left_below_minus_one, INVALID, "params.window_left = -2"},
    {"window_right min", BF16, window_right_below_minus_one, INVALID, "params.window_right = -2147483648"},
    {"scale NaN", BF16, scale_nan, INVALID, "params.softmax_scale"},
    {"scale inf", BF16, scale_inf, INVALID, "params.softmax_scale"},
    {"q.reserved", BF16, q_reserved, INVALID, "q.reserved = 1"},
    {"o.reserved", BF16, o_reserved, INVALID, "o.reserved = -1"},
    {"dtype 0", BF16, q_dtype_zero, INVALID, "q.dtype = 0"},
    {"q.dtype 99", BF16, q_dtype_unknown, INVALID, "q.dtype = 99"},
    {"k FP16, q BF16", BF16, k_dtype_differs, INVALID, "k.dtype = FP16"},
    {"v FP8, q BF16", BF16, v_dtype_fp8_with_bf16, INVALID, "v.dtype = FP8_E4M3FN"},
    {"k e4m3fnuz, q e4m3fn", FP8, k_dtype_fp8_flavours_mixed, INVALID, "k.dtype = FP8_E4M3FNUZ"},
    {"o FP8", BF16, o_dtype_fp8, INVALID, "o.dtype = 4"},
    {"o dtype 6", BF16, o_dtype_unknown, INVALID, "o.dtype = 6"},
    {"q_descale with BF16", BF16, q_descale_for_bf16, INVALID, "params.q_descale"},
    {"v_descale with BF16", BF16, v_descale_for_bf16, INVALID, "params.v_descale"},
    {"LEAN with BF16", BF16, lean_for_bf16, UNSUPPORTED, "params.softmax = LEAN"},
    {"q.stride_seq < 0", BF16, q_negative_stride_seq, INVALID, "q.stride_seq = -1"},
    {"k.stride_head < 0", BF16, k_negative_stride_head, INVALID, "k.stride_head = -16"},
    {"v.stride_batch < 0", BF16, v_negative_stride_batch, INVALID, "v.stride_batch = -1"},
    {"q heads overlap", BF16, q_heads_overlap, INVALID, "q.stride_head = 8 makes heads overlap (row length 16)"},
    {"o rows overlap", BF16, o_rows_overlap, INVALID, "o.stride_seq = 32 makes rows overlap"},
    {"k batches alias", BF16, k_batches_alias, INVALID, "k.stride_batch = 0 makes batches overlap"},
    {"v equal strides", BF16, v_rows_share_heads, INVALID, "v.stride_"},
    {"q offsets overflow", BF16, q_stride_overflow, INVALID, "q.stride_batch"},
    {"o byte offsets overflow", BF16, o_byte_offset_overflow, INVALID, "o.stride_"},
    {"seqlen_q overflows", BF16, seqlen_overflow, INVALID, "q.stride_seq"},
    {"cu_seqlens_q alone", BF16, cu_q_without_cu_k, INVALID, "params.cu_seqlens_k is NULL"},
    {"cu_seqlens_k alone", BF16, cu_k_without_cu_q, INVALID, "params.cu_seqlens_q is NULL"},
    {"cu_seqlens_q[0] 1", BF16, cu_q_not_from_zero, INVALID, "params.cu_seqlens_q[0] = 1"},
    {"cu_seqlens_k decreasing", BF16, cu_k_decreasing, INVALID, "params.cu_seqlens_k[2] = 4 is less than"},
    {"cu_seqlens_q too long", BF16, cu_q_too_long, INVALID, "sequence 0 has length 5 > params.seqlen_q = 4"},
    {"cu_seqlens_k total overflows", BF16, cu_k_total_overflows, INVALID, "k.stride_seq"},
    {"BF16 q at an odd address", BF16, q_bf16_odd_address, INVALID, "q.data = 0x"},
    {"FP32 o at 2 mod 4", BF16, o_fp32_address_2_mod_4, INVALID, "is not 4-byte aligned, which FP32 elements need"},
    {"lse at 2 mod 4", BF16, lse_address_2_mod_4, INVALID, "params.lse = 0x"},
    {"cu_seqlens_q odd", BF16, cu_seqlens_q_odd_address, INVALID, "params.cu_seqlens_q = 0x"},
    {"cu_seqlens_k odd", BF16, cu_seqlens_k_odd_address, INVALID, "params.cu_seqlens_k = 0x"},
    {"k_descale odd", FP8, k_descale_odd_address, INVALID, "params.k_descale = 0x"},
    {"o == k", BF16, o_is_k, INVALID, "o.data [0x"},
    {"o == v", BF16, o_is_v, INVALID, "o.data [0x"} /* the heap decides which input it meets first */,
    {"o over q shifted by a row", BF16, o_overlaps_q_shifted_one_row, INVALID, "overlaps q.data"},
    {"lse inside o", BF16, lse_inside_o, INVALID, "o.data [0x"},
    {"lse inside q", BF16, lse_inside_q, INVALID, "params.lse [0x"},
    {"lse inside k", BF16, lse_inside_k, INVALID, "overlaps k.data"},
    {"lse over cu_seqlens_k", BF16, o_over_cu_seqlens, INVALID, "overlaps params.cu_seqlens_k"},
    {"q_descale inside o", FP8, q_descale_inside_o, INVALID, "overlaps params.q_descale"},
    {"FP8 with FP8 o", FP8, fp8_o_is_fp8, INVALID, "o.dtype = 5"},
    {"FP8 q with BF16 k", FP8, fp8_k_is_bf16, INVALID, "k.dtype = BF16"},
    /* The INT8 Q/K mode. */
    {"INT8 q with FP8 k", INT8, int8_k_is_fp8, INVALID, "k.dtype = FP8_E4M3FN differs from q.dtype = INT8"},
    {"INT8 q/k with INT8 v", INT8, int8_v_is_int8, INVALID, "v.dtype = INT8 is not FP8"},
    {"INT8 q/k with BF16 v", INT8, int8_v_is_bf16, INVALID, "v.dtype = BF16 is not FP8"},
    {"FP8 q with INT8 k", FP8, fp8_k_is_int8, INVALID, "k.dtype = INT8 differs from q.dtype = FP8_E4M3FN"},
    {"INT8 with q_descale", INT8, int8_with_q_descale, INVALID, "params.q_descale is set but q.dtype = INT8"},
    {"INT8 with k_descale", INT8, int8_with_k_descale, INVALID, "params.k_descale is set but k.dtype = INT8"},
    {"FP8 with q_descale_per_token", FP8, fp8_with_token_descale, INVALID, "params.q_descale_per_token is set"},
    {"BF16 with k_descale_per_block", BF16, fp8_with_block_descale, INVALID, "params.k_descale_per_block is set"},
    {"q_descale_per_token at 2 mod 4", INT8, token_descale_odd_address, INVALID, "params.q_descale_per_token = 0x"},
    {"k_descale_per_block inside o", INT8, block_descale_inside_o, INVALID, "overlaps params.k_descale_per_block"},
    {"INT8 o", INT8, int8_o_is_int8, INVALID, "o.dtype = 6 (INT8) is not an output dtype"},
};

/* The valid base problem of the table: FP8 inputs carry descales. */
static attn_fixture* base_problem(zyfa_dtype input) {
    attn_fixture* f = attn_fixture_create(input, ZYFA_DTYPE_FP32);
    if (input == INT8) {
        /* v FP8 (its buffer holds codes 0x28..0x47, valid in both formats) with a per-head descale. */
        f->v.dtype = FP8;
        for (size_t i = 0; i < sizeof(g_token_descale) / sizeof(g_token_descale[0]); ++i) g_token_descale[i] = 1.0f / 64;
        for (size_t i = 0; i < sizeof(g_block_descale) / sizeof(g_block_descale[0]); ++i) g_block_descale[i] = 1.0f / 32;
        f->big.params.q_descale_per_token = g_token_descale;
        f->big.params.k_descale_per_block = g_block_descale;
        f->big.params.v_descale = f->descale;
    }
    if (input == FP8) {
        f->big.params.q_descale = f->descale;
        f->big.params.k_descale = f->descale;
        f->big.params.v_descale = f->descale;
    }
    return f;
}

static void check_case(const bad_case* c) {
    attn_fixture* f = base_problem(c->input);
    c->mutate(f);

    unit_assert_refused(c->name, attn_fixture_fwd(f), c->status, "zyfa_attn_fwd", c->needle);
    if (!attn_fixture_outputs_untouched(f)) fail_msg("%s: a failed call wrote to o or lse", c->name);

    /* The queries refuse it alike, with the same detail, and run nothing. */
    if (attn_fixture_supported(f) != c->status) fail_msg("%s: zyfa_attn_supported disagrees", c->name);
    unit_assert_message_contains(c->name, c->needle);
    if (attn_fixture_kernel_name(f) != NULL) fail_msg("%s: zyfa_attn_kernel_name named a kernel", c->name);
    unit_assert_message_contains(c->name, c->needle);
    unit_assert_message_contains(c->name, "zyfa_attn_kernel_name");
    if (!attn_fixture_outputs_untouched(f)) fail_msg("%s: a query wrote to o or lse", c->name);
    attn_fixture_destroy(f);
}

static void test_bad_requests_are_refused(void** state) {
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) check_case(&cases[i]);
}

/* The base problems of the table are valid: every failure above comes from its mutation. */
static void test_unmutated_problems_run(void** state) {
    (void)state;
    const zyfa_dtype inputs[] = {BF16, FP8, INT8};
    for (size_t i = 0; i < 3; ++i) {
        attn_fixture* f = base_problem(inputs[i]);
        assert_int_equal(attn_fixture_fwd(f), ZYFA_SUCCESS);
        assert_false(attn_fixture_outputs_untouched(f));
        attn_fixture_destroy(f);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unmutated_problems_run),
        cmocka_unit_test(test_bad_requests_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
