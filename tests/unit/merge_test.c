/* zyfa_attn_merge through the public API on the CPU backend: every field's validation (the status,
 * a message naming the field, nothing written), the struct_size rules, and the row rules that the
 * header states (-inf parts, empty rows, NaN and +inf lse, NaN in a part's O, mixed dtypes,
 * packed sequences). The numerics against fp64 and split-vs-unsplit attention: tests/cpu. */
#include <math.h>

#include "unit_support.h"

enum { M_BATCH = 2, M_SEQ = 3, M_HEADS = 2, M_DIM = 8, M_PARTS = 3 };
enum { M_ELEMS = M_BATCH * M_SEQ * M_HEADS * M_DIM, M_ROWS = M_BATCH * M_HEADS * M_SEQ };

typedef struct merge_fixture {
    zyfa_context* ctx;
    struct {
        zyfa_merge_params params;
        unsigned char tail[32];
    } big;
    float part_data[M_PARTS][M_ELEMS];
    float part_lse_data[M_PARTS][M_ROWS];
    zyfa_tensor part_o[M_PARTS];
    const float* part_lse[M_PARTS];
    float o_data[M_ELEMS];
    float lse_data[M_ROWS];
    zyfa_tensor o;
    int32_t cu[M_BATCH + 1];
} merge_fixture;

static merge_fixture* fixture_create(void) {
    merge_fixture* f = (merge_fixture*)calloc(1, sizeof(merge_fixture));
    assert_non_null(f);
    f->ctx = unit_cpu_context();
    uint32_t state = 7;
    for (int i = 0; i < M_PARTS; ++i) {
        for (int e = 0; e < M_ELEMS; ++e) f->part_data[i][e] = unit_random(&state);
        for (int r = 0; r < M_ROWS; ++r) f->part_lse_data[i][r] = 4.0f * unit_random(&state);
        f->part_o[i] = unit_tensor(f->part_data[i], ZYFA_DTYPE_FP32, M_SEQ, M_HEADS, M_DIM);
        f->part_lse[i] = f->part_lse_data[i];
    }
    f->o = unit_tensor(f->o_data, ZYFA_DTYPE_FP32, M_SEQ, M_HEADS, M_DIM);
    zyfa_merge_params_init(&f->big.params, sizeof f->big.params);
    f->big.params.num_parts = M_PARTS;
    f->big.params.batch = M_BATCH;
    f->big.params.seqlen_q = M_SEQ;
    f->big.params.heads = M_HEADS;
    f->big.params.head_dim_v = M_DIM;
    f->big.params.lse = f->lse_data;
    for (int b = 0; b <= M_BATCH; ++b) f->cu[b] = b * M_SEQ;
    memset(f->o_data, UNIT_SENTINEL_BYTE, sizeof f->o_data);
    memset(f->lse_data, UNIT_SENTINEL_BYTE, sizeof f->lse_data);
    return f;
}

static void fixture_destroy(merge_fixture* f) {
    zyfa_context_destroy(f->ctx);
    free(f);
}

static zyfa_status run(merge_fixture* f) {
    return zyfa_attn_merge(f->ctx, &f->big.params, f->part_o, f->part_lse, &f->o, NULL);
}

static int untouched(const merge_fixture* f) {
    for (size_t i = 0; i < sizeof f->o_data; ++i)
        if (((const unsigned char*)f->o_data)[i] != UNIT_SENTINEL_BYTE) return 0;
    for (size_t i = 0; i < sizeof f->lse_data; ++i)
        if (((const unsigned char*)f->lse_data)[i] != UNIT_SENTINEL_BYTE) return 0;
    return 1;
}

/* A case mutates a fresh fixture; the call must fail with `want`, name `needle` and write nothing. */
typedef void (*mutation)(merge_fixture*);
static void expect_refused(const char* what, mutation mutate, zyfa_status want, const char* needle) {
    merge_fixture* f = fixture_create();
    mutate(f);
    unit_assert_refused(what, run(f), want, "zyfa_attn_merge", needle);
    if (!untouched(f)) fail_msg("%s: a refused call wrote an output", what);
    fixture_destroy(f);
}

static void m_params_null(merge_fixture* f) { (void)f; }
static void m_num_parts_zero(merge_fixture* f) { f->big.params.num_parts = 0; }
static void m_num_parts_negative(merge_fixture* f) { f->big.params.num_parts = -2; }
static void m_batch_negative(merge_fixture* f) { f->big.params.batch = -1; }
static void m_seqlen_negative(merge_fixture* f) { f->big.params.seqlen_q = -1; }
static void m_heads_zero(merge_fixture* f) { f->big.params.heads = 0; }
static void m_head_dim_zero(merge_fixture* f) { f->big.params.head_dim_v = 0; }
static void m_head_dim_large(merge_fixture* f) { f->big.params.head_dim_v = 513; }
static void m_struct_small(merge_fixture* f) { f->big.params.struct_size = 32; }
static void m_struct_implausible(merge_fixture* f) { f->big.params.struct_size = 5000; }
static void m_struct_newer_dirty(merge_fixture* f) {
    f->big.params.struct_size = sizeof f->big.params + 8;
    f->big.tail[3] = 1;
}
static void m_part_reserved(merge_fixture* f) { f->part_o[1].reserved = 1; }
static void m_part_dtype_fp8(merge_fixture* f) { f->part_o[2].dtype = ZYFA_DTYPE_FP8_E4M3FN; }
static void m_part_dtype_unknown(merge_fixture* f) { f->part_o[1].dtype = 77; }
static void m_o_reserved(merge_fixture* f) { f->o.reserved = -1; }
static void m_o_dtype(merge_fixture* f) { f->o.dtype = ZYFA_DTYPE_FP8_E4M3FNUZ; }
static void m_part_strides_overlap(merge_fixture* f) { f->part_o[1].stride_head = M_DIM / 2; }
static void m_part_stride_negative(merge_fixture* f) { f->part_o[2].stride_seq = -M_DIM; }
static void m_o_strides_overlap(merge_fixture* f) { f->o.stride_seq = M_DIM; }
static void m_part_data_null(merge_fixture* f) { f->part_o[1].data = NULL; }
static void m_o_data_null(merge_fixture* f) { f->o.data = NULL; }
static void m_part_lse_null(merge_fixture* f) { f->part_lse[2] = NULL; }
static void m_part_lse_misaligned(merge_fixture* f) { f->part_lse[1] = (const float*)((const char*)f->part_lse_data[1] + 2); }
static void m_lse_misaligned(merge_fixture* f) { f->big.params.lse = (float*)((char*)f->lse_data + 1); }
static void m_o_misaligned(merge_fixture* f) { f->o.data = (char*)f->o_data + 2; f->o.dtype = ZYFA_DTYPE_FP32; }
static void m_cu_decreasing(merge_fixture* f) {
    f->cu[1] = 4;
    f->cu[2] = 2;
    f->big.params.cu_seqlens_q = f->cu;
}
static void m_cu_too_long(merge_fixture* f) {
    f->cu[1] = M_SEQ + 1;
    f->cu[2] = M_SEQ + 1;
    f->big.params.cu_seqlens_q = f->cu;
}
static void m_cu_misaligned(merge_fixture* f) { f->big.params.cu_seqlens_q = (const int32_t*)((const char*)f->cu + 1); }
static void m_in_place_o(merge_fixture* f) { f->o.data = f->part_data[0]; }
static void m_in_place_lse(merge_fixture* f) { f->big.params.lse = f->part_lse_data[1]; }
static void m_lse_in_o(merge_fixture* f) { f->big.params.lse = f->o_data + 4; }
static void m_o_over_cu(merge_fixture* f) {
    f->big.params.cu_seqlens_q = f->cu;
    f->o.data = f->cu;  /* int32 storage, but o must not overlap an input */
}

static void every_field_is_validated(void** state) {
    (void)state;
    expect_refused("num_parts 0", m_num_parts_zero, ZYFA_ERROR_INVALID_ARGUMENT, "params.num_parts = 0");
    expect_refused("num_parts < 0", m_num_parts_negative, ZYFA_ERROR_INVALID_ARGUMENT, "params.num_parts = -2");
    expect_refused("batch < 0", m_batch_negative, ZYFA_ERROR_INVALID_ARGUMENT, "params.batch = -1");
    expect_refused("seqlen_q < 0", m_seqlen_negative, ZYFA_ERROR_INVALID_ARGUMENT, "params.seqlen_q = -1");
    expect_refused("heads 0", m_heads_zero, ZYFA_ERROR_INVALID_ARGUMENT, "params.heads = 0");
    expect_refused("head_dim_v 0", m_head_dim_zero, ZYFA_ERROR_INVALID_ARGUMENT, "params.head_dim_v = 0");
    expect_refused("head_dim_v 513", m_head_dim_large, ZYFA_ERROR_INVALID_ARGUMENT, "params.head_dim_v = 513");
    expect_refused("struct_size small", m_struct_small, ZYFA_ERROR_INVALID_ARGUMENT, "params.struct_size = 32");
    expect_refused("struct_size implausible", m_struct_implausible, ZYFA_ERROR_INVALID_ARGUMENT,
                   "params.struct_size = 5000");
    expect_refused("newer field set", m_struct_newer_dirty, ZYFA_ERROR_NOT_SUPPORTED, "params.struct_size");
    expect_refused("part reserved", m_part_reserved, ZYFA_ERROR_INVALID_ARGUMENT, "part_o[1].reserved");
    expect_refused("part dtype FP8", m_part_dtype_fp8, ZYFA_ERROR_INVALID_ARGUMENT, "part_o[2].dtype");
    expect_refused("part dtype unknown", m_part_dtype_unknown, ZYFA_ERROR_INVALID_ARGUMENT, "part_o[1].dtype = 77");
    expect_refused("o reserved", m_o_reserved, ZYFA_ERROR_INVALID_ARGUMENT, "o.reserved");
    expect_refused("o dtype", m_o_dtype, ZYFA_ERROR_INVALID_ARGUMENT, "o.dtype");
    expect_refused("part strides overlap", m_part_strides_overlap, ZYFA_ERROR_INVALID_ARGUMENT, "part_o[1]");
    expect_refused("part stride negative", m_part_stride_negative, ZYFA_ERROR_INVALID_ARGUMENT, "part_o[2]");
    expect_refused("o strides overlap", m_o_strides_overlap, ZYFA_ERROR_INVALID_ARGUMENT, "o.");
    expect_refused("part data NULL", m_part_data_null, ZYFA_ERROR_INVALID_ARGUMENT, "part_o[1].data");
    expect_refused("o data NULL", m_o_data_null, ZYFA_ERROR_INVALID_ARGUMENT, "o.data");
    expect_refused("part lse NULL", m_part_lse_null, ZYFA_ERROR_INVALID_ARGUMENT, "part_lse[2] is NULL");
    expect_refused("part lse misaligned", m_part_lse_misaligned, ZYFA_ERROR_INVALID_ARGUMENT, "part_lse[1]");
    expect_refused("lse misaligned", m_lse_misaligned, ZYFA_ERROR_INVALID_ARGUMENT, "params.lse");
    expect_refused("o misaligned", m_o_misaligned, ZYFA_ERROR_INVALID_ARGUMENT, "o.data");
    expect_refused("cu decreasing", m_cu_decreasing, ZYFA_ERROR_INVALID_ARGUMENT, "params.cu_seqlens_q");
    expect_refused("cu longer than seqlen_q", m_cu_too_long, ZYFA_ERROR_INVALID_ARGUMENT, "params.cu_seqlens_q");
    expect_refused("cu misaligned", m_cu_misaligned, ZYFA_ERROR_INVALID_ARGUMENT, "params.cu_seqlens_q");
    /* In place is refused: o (or lse) aliasing a part is a caller bug, named with both buffers. */
    expect_refused("o is part 0", m_in_place_o, ZYFA_ERROR_INVALID_ARGUMENT, "part_o[0].data");
    expect_refused("lse is part 1's lse", m_in_place_lse, ZYFA_ERROR_INVALID_ARGUMENT, "part_lse[1]");
    expect_refused("lse inside o", m_lse_in_o, ZYFA_ERROR_INVALID_ARGUMENT, "params.lse");
    expect_refused("o over cu_seqlens_q", m_o_over_cu, ZYFA_ERROR_INVALID_ARGUMENT, "params.cu_seqlens_q");
    (void)m_params_null;
}

static void null_arguments_are_refused(void** state) {
    (void)state;
    merge_fixture* f = fixture_create();
    unit_assert_refused("ctx NULL", zyfa_attn_merge(NULL, &f->big.params, f->part_o, f->part_lse, &f->o, NULL),
                        ZYFA_ERROR_INVALID_ARGUMENT, "zyfa_attn_merge", "ctx is NULL");
    unit_assert_refused("params NULL", zyfa_attn_merge(f->ctx, NULL, f->part_o, f->part_lse, &f->o, NULL),
                        ZYFA_ERROR_INVALID_ARGUMENT, "zyfa_attn_merge", "params is NULL");
    unit_assert_refused("part_o NULL", zyfa_attn_merge(f->ctx, &f->big.params, NULL, f->part_lse, &f->o, NULL),
                        ZYFA_ERROR_INVALID_ARGUMENT, "zyfa_attn_merge", "part_o is NULL");
    unit_assert_refused("part_lse NULL", zyfa_attn_merge(f->ctx, &f->big.params, f->part_o, NULL, &f->o, NULL),
                        ZYFA_ERROR_INVALID_ARGUMENT, "zyfa_attn_merge", "part_lse is NULL");
    unit_assert_refused("o NULL", zyfa_attn_merge(f->ctx, &f->big.params, f->part_o, f->part_lse, NULL, NULL),
                        ZYFA_ERROR_INVALID_ARGUMENT, "zyfa_attn_merge", "o is NULL");
    assert_true(untouched(f));
    fixture_destroy(f);
}

static void params_init_and_struct_sizes(void** state) {
    (void)state;
    zyfa_merge_params_init(NULL, sizeof(zyfa_merge_params)); /* no-op */
    zyfa_merge_params p;
    memset(&p, 0x5A, sizeof p);
    zyfa_merge_params_init(&p, sizeof p);
    assert_int_equal(p.struct_size, sizeof p);
    assert_int_equal(p.num_parts, 0);
    assert_null(p.cu_seqlens_q);
    assert_null(p.lse);

    /* An older caller's struct that ends after head_dim_v: lse and cu_seqlens_q read as NULL. */
    merge_fixture* f = fixture_create();
    f->big.params.struct_size = 40;
    f->big.params.cu_seqlens_q = (const int32_t*)(uintptr_t)1; /* beyond struct_size: never read */
    assert_int_equal(run(f), ZYFA_SUCCESS);
    for (int r = 0; r < M_ROWS; ++r) {
        uint32_t bits;
        memcpy(&bits, &f->lse_data[r], 4);
        assert_int_equal(bits, 0xA5A5A5A5u); /* lse beyond struct_size: not written */
    }
    fixture_destroy(f);

    /* A newer caller's larger struct with zero tail: accepted. */
    f = fixture_create();
    f->big.params.struct_size = sizeof f->big.params + 16;
    assert_int_equal(run(f), ZYFA_SUCCESS);
    fixture_destroy(f);
}

static void empty_problem_writes_nothing(void** state) {
    (void)state;
    merge_fixture* f = fixture_create();
    f->big.params.batch = 0;
    f->part_o[1].data = NULL; /* no element: data may be NULL */
    assert_int_equal(run(f), ZYFA_SUCCESS);
    assert_true(untouched(f));
    f->big.params.batch = M_BATCH;
    f->big.params.seqlen_q = 0;
    assert_int_equal(run(f), ZYFA_SUCCESS);
    assert_true(untouched(f));
    fixture_destroy(f);
}

static double merged_reference(const merge_fixture* f, int row_lse, int element, double* lse_out) {
    double m = -INFINITY;
    for (int i = 0; i < M_PARTS; ++i) m = fmax(m, (double)f->part_lse_data[i][row_lse]);
    double sum = 0.0, acc = 0.0;
    for (int i = 0; i < M_PARTS; ++i) {
        if (isinf(f->part_lse_data[i][row_lse])) continue;
        const double w = exp((double)f->part_lse_data[i][row_lse] - m);
        sum += w;
        acc += w * (double)f->part_data[i][element];
    }
    *lse_out = m + log(sum);
    return acc / sum;
}

/* Row rules, one row each: (b0, h0, s0) -inf in part 1 whose O is NaN (not read), (b0, h0, s1)
 * all -inf (O = 0, lse = -inf), (b0, h1, s0) a NaN lse, (b0, h1, s1) a +inf lse, (b1, h0, s0) a
 * NaN in part 2's O with a finite lse; every other row an ordinary merge. */
static void row_rules(void** state) {
    (void)state;
    merge_fixture* f = fixture_create();
#define LSE_AT(b, h, s) (((b) * M_HEADS + (h)) * M_SEQ + (s))
#define O_AT(b, s, h, d) ((((b) * M_SEQ + (s)) * M_HEADS + (h)) * M_DIM + (d))
    f->part_lse_data[1][LSE_AT(0, 0, 0)] = -INFINITY;
    for (int d = 0; d < M_DIM; ++d) f->part_data[1][O_AT(0, 0, 0, d)] = NAN;
    for (int i = 0; i < M_PARTS; ++i) f->part_lse_data[i][LSE_AT(0, 0, 1)] = -INFINITY;
    for (int d = 0; d < M_DIM; ++d) f->part_data[0][O_AT(0, 1, 0, d)] = NAN; /* all -inf: not read either */
    f->part_lse_data[2][LSE_AT(0, 1, 0)] = NAN;
    f->part_lse_data[0][LSE_AT(0, 1, 1)] = INFINITY;
    f->part_data[2][O_AT(1, 0, 0, 3)] = NAN;
    assert_int_equal(run(f), ZYFA_SUCCESS);

    for (int b = 0; b < M_BATCH; ++b)
        for (int h = 0; h < M_HEADS; ++h)
            for (int s = 0; s < M_SEQ; ++s) {
                const int r = LSE_AT(b, h, s);
                const float lse = f->lse_data[r];
                if (b == 0 && h == 0 && s == 1) {
                    assert_true(isinf(lse) && lse < 0);
                    for (int d = 0; d < M_DIM; ++d) assert_true(f->o_data[O_AT(b, s, h, d)] == 0.0f);
                    continue;
                }
                if (b == 0 && h == 1 && s <= 1) {
                    assert_true(isnan(lse));
                    for (int d = 0; d < M_DIM; ++d) assert_true(isnan(f->o_data[O_AT(b, s, h, d)]));
                    continue;
                }
                double ref_lse = 0.0;
                for (int d = 0; d < M_DIM; ++d) {
                    const float got = f->o_data[O_AT(b, s, h, d)];
                    if (b == 1 && h == 0 && s == 0 && d == 3) {
                        assert_true(isnan(got));
                        continue;
                    }
                    const double want = merged_reference(f, r, O_AT(b, s, h, d), &ref_lse);
                    /* fp32 weights and sums of 3 parts with |lse| <= 4: a few ulp of values <= 1. */
                    if (fabs(got - want) > 1e-6) fail_msg("row (%d,%d,%d) d %d: %.9g vs %.9g", b, h, s, d, got, want);
                }
                if (b == 1 && h == 0 && s == 0) (void)merged_reference(f, r, O_AT(b, s, h, 0), &ref_lse);
                if (fabs(lse - ref_lse) > 1e-5) fail_msg("row (%d,%d,%d) lse %.9g vs %.9g", b, h, s, lse, ref_lse);
            }
    fixture_destroy(f);
}

/* Mixed part dtypes and a BF16 output with its own strides (head-major); packed sequences with a
 * sequence of length 0, whose (absent) rows are neither read nor written. */
static void dtypes_strides_and_packed(void** state) {
    (void)state;
    merge_fixture* f = fixture_create();
    uint16_t bf16_part[M_ELEMS], fp16_part[M_ELEMS], o16[M_ELEMS];
    for (int e = 0; e < M_ELEMS; ++e) {
        bf16_part[e] = unit_bf16(f->part_data[1][e]);
        memcpy(&f->part_data[1][e], (uint32_t[]){(uint32_t)bf16_part[e] << 16}, 4); /* exact bf16 value */
        fp16_part[e] = unit_fp16(0.5f);
        f->part_data[2][e] = 0.5f;
    }
    f->part_o[1].data = bf16_part;
    f->part_o[1].dtype = ZYFA_DTYPE_BF16;
    f->part_o[2].data = fp16_part;
    f->part_o[2].dtype = ZYFA_DTYPE_FP16;
    memset(o16, 0, sizeof o16);
    /* o head-major [batch, head, seq, dim]. */
    f->o.data = o16;
    f->o.dtype = ZYFA_DTYPE_BF16;
    f->o.stride_batch = M_HEADS * M_SEQ * M_DIM;
    f->o.stride_head = M_SEQ * M_DIM;
    f->o.stride_seq = M_DIM;
    assert_int_equal(run(f), ZYFA_SUCCESS);
    for (int b = 0; b < M_BATCH; ++b)
        for (int h = 0; h < M_HEADS; ++h)
            for (int s = 0; s < M_SEQ; ++s)
                for (int d = 0; d < M_DIM; ++d) {
                    double lse;
                    const double want = merged_reference(f, LSE_AT(b, h, s), O_AT(b, s, h, d), &lse);
                    uint32_t bits = (uint32_t)o16[((b * M_HEADS + h) * M_SEQ + s) * M_DIM + d] << 16;
                    float got;
                    memcpy(&got, &bits, 4);
                    /* The bf16 output's half ulp (2^-9 relative) dominates. */
                    assert_true(fabs(got - want) <= fabs(want) / 256.0 + 1e-6);
                }

    /* Packed: sequence 0 has 3 rows, sequence 1 none; lse is [heads, total_q = 3]. */
    merge_fixture* g = fixture_create();
    g->cu[0] = 0;
    g->cu[1] = 3;
    g->cu[2] = 3;
    g->big.params.cu_seqlens_q = g->cu;
    assert_int_equal(run(g), ZYFA_SUCCESS);
    for (int h = 0; h < M_HEADS; ++h)
        for (int s = 0; s < 3; ++s) {
            const int r = h * 3 + s; /* packed lse index */
            double m = -INFINITY, sum = 0.0;
            for (int i = 0; i < M_PARTS; ++i) m = fmax(m, (double)g->part_lse_data[i][r]);
            for (int i = 0; i < M_PARTS; ++i) sum += exp((double)g->part_lse_data[i][r] - m);
            assert_true(fabs(g->lse_data[r] - (m + log(sum))) <= 1e-5);
            for (int d = 0; d < M_DIM; ++d) {
                const int e = (s * M_HEADS + h) * M_DIM + d; /* packed row s */
                double acc = 0.0;
                for (int i = 0; i < M_PARTS; ++i) acc += exp((double)g->part_lse_data[i][r] - m) * g->part_data[i][e];
                assert_true(fabs(g->o_data[e] - acc / sum) <= 1e-6);
            }
        }
    /* Past the packed total nothing is written. */
    for (size_t i = (size_t)M_HEADS * 3; i < M_ROWS; ++i) {
        uint32_t bits;
        memcpy(&bits, &g->lse_data[i], 4);
        assert_int_equal(bits, 0xA5A5A5A5u);
    }
    fixture_destroy(g);
    fixture_destroy(f);
}

/* One part is the identity; a part's lse may be any finite value, however large. */
static void one_part_and_large_lse(void** state) {
    (void)state;
    merge_fixture* f = fixture_create();
    f->big.params.num_parts = 1;
    f->part_lse_data[0][0] = 1e30f;
    assert_int_equal(run(f), ZYFA_SUCCESS);
    for (int e = 0; e < M_ELEMS; ++e) assert_true(f->o_data[e] == f->part_data[0][e]);
    for (int r = 0; r < M_ROWS; ++r) assert_true(f->lse_data[r] == f->part_lse_data[0][r]);
    fixture_destroy(f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_field_is_validated),
        cmocka_unit_test(null_arguments_are_refused),
        cmocka_unit_test(params_init_and_struct_sizes),
        cmocka_unit_test(empty_problem_writes_nothing),
        cmocka_unit_test(row_rules),
        cmocka_unit_test(dtypes_strides_and_packed),
        cmocka_unit_test(one_part_and_large_lse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
