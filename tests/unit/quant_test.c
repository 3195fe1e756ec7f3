/* zyfa_quantize_fp8's contract: malformed requests are refused with a message naming the field
 * and nothing written to out or descale; valid and empty requests succeed. CPU backend. */
#include <math.h>

#include "unit_support.h"

enum { QUANT_BATCH = 2, QUANT_SEQ = 4, QUANT_HEADS = 2, QUANT_MAX_DIM = 192 };

typedef struct quant_fixture {
    zyfa_context* owned_ctx;
    zyfa_context* ctx;
    struct {
        zyfa_quant_params params;
        unsigned char tail[16];
    } big;
    zyfa_tensor in, out;
    const zyfa_quant_params* p;
    const zyfa_tensor *inp, *outp;
    float* descale_arg;
    void* in_data;
    uint8_t* out_data;
    uint8_t* out_before;
    size_t count;
    float descale[QUANT_BATCH * QUANT_HEADS];
    float descale_before[QUANT_BATCH * QUANT_HEADS];
    float mean[QUANT_BATCH * QUANT_HEADS * QUANT_MAX_DIM]; /* ZYFA_QUANT_SMOOTH's output */
    float mean_before[QUANT_BATCH * QUANT_HEADS * QUANT_MAX_DIM];
    int32_t cu[QUANT_BATCH + 1];
} quant_fixture;

static quant_fixture* quant_fixture_create(int64_t head_dim) {
    quant_fixture* f = (quant_fixture*)calloc(1, sizeof(quant_fixture));
    assert_non_null(f);
    f->owned_ctx = unit_cpu_context();
    f->ctx = f->owned_ctx;
    f->count = (size_t)(QUANT_BATCH * QUANT_SEQ * QUANT_HEADS * head_dim);
    f->in_data = unit_alloc(f->count * 2);
    unit_fill(f->in_data, ZYFA_DTYPE_BF16, f->count, 7);
    f->out_data = (uint8_t*)unit_alloc(f->count);
    f->out_before = (uint8_t*)unit_alloc(f->count);
    memset(f->out_data, UNIT_SENTINEL_BYTE, f->count);
    memcpy(f->out_before, f->out_data, f->count);
    memset(f->descale, UNIT_SENTINEL_BYTE, sizeof(f->descale));
    memcpy(f->descale_before, f->descale, sizeof(f->descale));
    memset(f->mean, UNIT_SENTINEL_BYTE, sizeof(f->mean));
    memcpy(f->mean_before, f->mean, sizeof(f->mean));
    f->in = unit_tensor(f->in_data, ZYFA_DTYPE_BF16, QUANT_SEQ, QUANT_HEADS, head_dim);
    f->out = unit_tensor(f->out_data, ZYFA_DTYPE_FP8_E4M3FN, QUANT_SEQ, QUANT_HEADS, head_dim);
    zyfa_quant_params_init(&f->big.params, sizeof(f->big.params));
    f->big.params.batch = QUANT_BATCH;
    f->big.params.seqlen = QUANT_SEQ;
    f->big.params.heads = QUANT_HEADS;
    f->big.params.head_dim = head_dim;
    for (int b = 0; b <= QUANT_BATCH; ++b) f->cu[b] = b * QUANT_SEQ;
    f->p = &f->big.params;
    f->inp = &f->in;
    f->outp = &f->out;
    f->descale_arg = f->descale;
    return f;
}

static void quant_fixture_destroy(quant_fixture* f) {
    zyfa_context_destroy(f->owned_ctx);
    free(f->in_data);
    free(f->out_data);
    free(f->out_before);
    free(f);
}

static zyfa_status quant_fixture_run(quant_fixture* f) {
    return zyfa_quantize_fp8(f->ctx, f->p, f->inp, f->outp, f->descale_arg, NULL);
}

static int quant_outputs_untouched(const quant_fixture* f) {
    return memcmp(f->out_data, f->out_before, f->count) == 0 &&
           memcmp(f->descale, f->descale_before, sizeof(f->descale)) == 0 &&
           memcmp(f->mean, f->mean_before, sizeof(f->mean)) == 0;
}

typedef void (*quant_mutation)(quant_fixture* f);
#define MUTATION(name, statements) \
    static void name(quant_fixture* f) { statements; }

MUTATION(null_ctx, f->ctx = NULL)
MUTATION(null_params, f->p = NULL)
MUTATION(null_in, f->inp = NULL)
MUTATION(null_out, f->outp = NULL)
MUTATION(null_descale, f->descale_arg = NULL)
MUTATION(null_in_data, f->in.data = NULL)
MUTATION(null_out_data, f->out.data = NULL)
MUTATION(struct_size_short, f->big.params.struct_size = (uint32_t)offsetof(zyfa_quant_params, head_dim))
MUTATION(struct_size_tail_set, f->big.params.struct_size = (uint32_t)sizeof(f->big); f->big.tail[15] = 1)
MUTATION(unknown_flag, f->big.params.flags = 16)
/* K smoothing: the flag and its mean buffer go together. */
MUTATION(smooth_without_mean, f->big.params.flags = ZYFA_QUANT_SMOOTH)
MUTATION(mean_without_smooth, f->big.params.smooth_mean = f->mean)
MUTATION(smooth_0_1_struct, f->big.params.flags = ZYFA_QUANT_SMOOTH; f->big.params.smooth_mean = f->mean;
         f->big.params.struct_size = (uint32_t)offsetof(zyfa_quant_params, smooth_mean))
MUTATION(mean_odd_address, f->big.params.flags = ZYFA_QUANT_SMOOTH;
         f->big.params.smooth_mean = (float*)(void*)((char*)f->mean + 2))
MUTATION(mean_inside_in, f->big.params.flags = ZYFA_QUANT_SMOOTH; f->big.params.smooth_mean = (float*)f->in_data + 3)
MUTATION(mean_inside_out, f->big.params.flags = ZYFA_QUANT_SMOOTH;
         f->big.params.smooth_mean = (float*)(void*)(f->out_data + 16))
MUTATION(mean_over_descale, f->big.params.flags = ZYFA_QUANT_SMOOTH; f->big.params.smooth_mean = f->descale)
MUTATION(mean_size_overflows, f->big.params.flags = ZYFA_QUANT_SMOOTH; f->big.params.smooth_mean = f->mean;
         f->big.params.batch = INT64_MAX / 256; f->big.params.seqlen = 0)
MUTATION(negative_batch, f->big.params.batch = -1)
MUTATION(negative_seqlen, f->big.params.seqlen = -7)
MUTATION(zero_heads, f->big.params.heads = 0)
MUTATION(zero_head_dim, f->big.params.head_dim = 0)
MUTATION(in_fp8, f->in.dtype = ZYFA_DTYPE_FP8_E4M3FN)
MUTATION(in_unknown, f->in.dtype = 0)
MUTATION(out_bf16, f->out.dtype = ZYFA_DTYPE_BF16)
MUTATION(out_unknown, f->out.dtype = 9)
MUTATION(in_reserved, f->in.reserved = 5)
MUTATION(out_reserved, f->out.reserved = 1)
MUTATION(in_negative_stride, f->in.stride_head = -64)
MUTATION(out_rows_overlap, f->out.stride_seq = 96) /* two heads of 64 per row */
MUTATION(in_offsets_overflow, f->in.stride_batch = INT64_MAX / 2)
MUTATION(hadamard_48, f->big.params.flags = ZYFA_QUANT_HADAMARD; f->big.params.head_dim = 48)
/* Alignment and aliasing (issue 18). */
MUTATION(in_odd_address, f->in.data = (char*)f->in_data + 1)
MUTATION(descale_odd_address, f->descale_arg = (float*)(void*)((char*)f->descale + 1))
MUTATION(cu_odd_address, f->big.params.cu_seqlens = (const int32_t*)(const void*)((char*)f->cu + 2))
MUTATION(out_is_in, f->out.data = f->in_data)
MUTATION(descale_inside_out, f->descale_arg = (float*)(void*)(f->out_data + 8))
MUTATION(descale_inside_in, f->descale_arg = (float*)f->in_data + 1)
MUTATION(cu_not_from_zero, f->cu[0] = 2; f->big.params.cu_seqlens = f->cu)
MUTATION(cu_decreasing, f->cu[2] = 1; f->big.params.cu_seqlens = f->cu)
MUTATION(cu_too_long, f->cu[1] = QUANT_SEQ + 3; f->cu[2] = QUANT_SEQ + 3; f->big.params.cu_seqlens = f->cu)

static const struct {
    const char* name;
    quant_mutation mutate;
    zyfa_status status;
    const char* needle;
} cases[] = {
    {"null ctx", null_ctx, ZYFA_ERROR_INVALID_ARGUMENT, "ctx is NULL"},
    {"null params", null_params, ZYFA_ERROR_INVALID_ARGUMENT, "params is NULL"},
    {"null in", null_in, ZYFA_ERROR_INVALID_ARGUMENT, "in is NULL"},
    {"null out", null_out, ZYFA_ERROR_INVALID_ARGUMENT, "out is NULL"},
    {"null descale", null_descale, ZYFA_ERROR_INVALID_ARGUMENT, "descale is NULL"},
    {"null in data", null_in_data, ZYFA_ERROR_INVALID_ARGUMENT, "in.data is NULL"},
    {"null out data", null_out_data, ZYFA_ERROR_INVALID_ARGUMENT, "out.data is NULL"},
    {"struct_size short", struct_size_short, ZYFA_ERROR_INVALID_ARGUMENT, "params.struct_size = 32"},
    {"struct_size tail", struct_size_tail_set, ZYFA_ERROR_NOT_SUPPORTED, "params.struct_size"},
    {"flags 16", unknown_flag, ZYFA_ERROR_INVALID_ARGUMENT, "params.flags = 16"},
    {"smooth, mean NULL", smooth_without_mean, ZYFA_ERROR_INVALID_ARGUMENT, "params.smooth_mean is NULL"},
    {"mean without smooth", mean_without_smooth, ZYFA_ERROR_INVALID_ARGUMENT,
     "params.smooth_mean is set but params.flags lacks ZYFA_QUANT_SMOOTH"},
    {"smooth, 0.1 struct", smooth_0_1_struct, ZYFA_ERROR_INVALID_ARGUMENT, "params.smooth_mean is NULL"},
    {"mean odd address", mean_odd_address, ZYFA_ERROR_INVALID_ARGUMENT, "params.smooth_mean = 0x"},
    {"mean inside in", mean_inside_in, ZYFA_ERROR_INVALID_ARGUMENT, "overlaps in.data"},
    {"mean inside out", mean_inside_out, ZYFA_ERROR_INVALID_ARGUMENT, "params.smooth_mean"},
    {"mean over descale", mean_over_descale, ZYFA_ERROR_INVALID_ARGUMENT, "params.smooth_mean"},
    {"mean size overflows", mean_size_overflows, ZYFA_ERROR_INVALID_ARGUMENT, "params.smooth_mean"},
    {"batch -1", negative_batch, ZYFA_ERROR_INVALID_ARGUMENT, "params.batch = -1"},
    {"seqlen -7", negative_seqlen, ZYFA_ERROR_INVALID_ARGUMENT, "params.seqlen = -7"},
    {"heads 0", zero_heads, ZYFA_ERROR_INVALID_ARGUMENT, "params.heads = 0"},
    {"head_dim 0", zero_head_dim, ZYFA_ERROR_INVALID_ARGUMENT, "params.head_dim = 0"},
    {"in FP8", in_fp8, ZYFA_ERROR_INVALID_ARGUMENT, "in.dtype = 4"},
    {"in dtype 0", in_unknown, ZYFA_ERROR_INVALID_ARGUMENT, "in.dtype = 0"},
    {"out BF16", out_bf16, ZYFA_ERROR_INVALID_ARGUMENT, "out.dtype = 3"},
    {"out dtype 9", out_unknown, ZYFA_ERROR_INVALID_ARGUMENT, "out.dtype = 9"},
    {"in.reserved", in_reserved, ZYFA_ERROR_INVALID_ARGUMENT, "in.reserved = 5"},
    {"out.reserved", out_reserved, ZYFA_ERROR_INVALID_ARGUMENT, "out.reserved = 1"},
    {"in.stride_head < 0", in_negative_stride, ZYFA_ERROR_INVALID_ARGUMENT, "in.stride_head = -64"},
    {"out rows overlap", out_rows_overlap, ZYFA_ERROR_INVALID_ARGUMENT, "out.stride_seq = 96 makes rows overlap"},
    {"in offsets overflow", in_offsets_overflow, ZYFA_ERROR_INVALID_ARGUMENT, "in.stride_batch"},
    {"hadamard 48", hadamard_48, ZYFA_ERROR_NOT_SUPPORTED, "params.head_dim = 48"},
    {"in odd address", in_odd_address, ZYFA_ERROR_INVALID_ARGUMENT, "in.data = 0x"},
    {"descale odd address", descale_odd_address, ZYFA_ERROR_INVALID_ARGUMENT, "descale = 0x"},
    {"cu_seqlens odd address", cu_odd_address, ZYFA_ERROR_INVALID_ARGUMENT, "params.cu_seqlens = 0x"},
    {"out == in", out_is_in, ZYFA_ERROR_INVALID_ARGUMENT, "out.data [0x"},
    {"descale inside out", descale_inside_out, ZYFA_ERROR_INVALID_ARGUMENT, "overlaps descale"},
    {"descale inside in", descale_inside_in, ZYFA_ERROR_INVALID_ARGUMENT, "overlaps in.data"},
    {"cu[0] 2", cu_not_from_zero, ZYFA_ERROR_INVALID_ARGUMENT, "params.cu_seqlens[0] = 2"},
    {"cu decreasing", cu_decreasing, ZYFA_ERROR_INVALID_ARGUMENT, "params.cu_seqlens[2] = 1 is less than"},
    {"cu too long", cu_too_long, ZYFA_ERROR_INVALID_ARGUMENT, "sequence 0 has length 7 > params.seqlen = 4"},
};

static void test_bad_requests_are_refused(void** state) {
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
        quant_fixture* f = quant_fixture_create(64);
        cases[i].mutate(f);
        unit_assert_refused(cases[i].name, quant_fixture_run(f), cases[i].status, "zyfa_quantize_fp8", cases[i].needle);
        if (!quant_outputs_untouched(f)) fail_msg("%s: a failed call wrote to out or descale", cases[i].name);
        quant_fixture_destroy(f);
    }
}

static void assert_quantised(const quant_fixture* f) {
    assert_memory_not_equal(f->out_data, f->out_before, f->count);
    for (int i = 0; i < QUANT_BATCH * QUANT_HEADS; ++i) {
        if (!(isfinite(f->descale[i]) && f->descale[i] > 0.0f)) fail_msg("descale[%d] = %g", i, (double)f->descale[i]);
    }
}

static void test_valid_requests_run(void** state) {
    (void)state;
    const struct {
        int64_t head_dim;
        uint32_t flags;
        int packed;
    } runs[] = {{64, 0, 0},
                {64, ZYFA_QUANT_HADAMARD, 0},
                {192, ZYFA_QUANT_HADAMARD, 0},
                {32, ZYFA_QUANT_HADAMARD, 1},
                {64, ZYFA_QUANT_SMOOTH, 0},
                {192, ZYFA_QUANT_SMOOTH | ZYFA_QUANT_HADAMARD, 1}};
    for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); ++i) {
        quant_fixture* f = quant_fixture_create(runs[i].head_dim);
        f->big.params.flags = runs[i].flags;
        if (runs[i].flags & ZYFA_QUANT_SMOOTH) f->big.params.smooth_mean = f->mean;
        if (runs[i].packed) f->big.params.cu_seqlens = f->cu;
        const zyfa_status status = quant_fixture_run(f);
        if (status != ZYFA_SUCCESS) fail_msg("run %zu: %s", i, zyfa_last_error_message());
        assert_quantised(f);
        /* The means fill exactly [batch, heads, head_dim]; the buffer beyond keeps its sentinel. */
        const size_t written = (runs[i].flags & ZYFA_QUANT_SMOOTH) ? (size_t)(QUANT_BATCH * QUANT_HEADS * runs[i].head_dim) : 0;
        for (size_t m = 0; m < written; ++m)
            if (!isfinite(f->mean[m])) fail_msg("run %zu: mean[%zu] = %g", i, m, (double)f->mean[m]);
        assert_memory_equal((char*)f->mean + written * 4, (char*)f->mean_before + written * 4, sizeof(f->mean) - written * 4);
        quant_fixture_destroy(f);
    }
}

/* An older caller without cu_seqlens: the garbage behind struct_size is not read. */
static void test_older_caller(void** state) {
    (void)state;
    quant_fixture* f = quant_fixture_create(64);
    zyfa_quant_params older;
    memset(&older, 0xCD, sizeof(older));
    zyfa_quant_params_init(&older, offsetof(zyfa_quant_params, cu_seqlens));
    older.batch = QUANT_BATCH;
    older.seqlen = QUANT_SEQ;
    older.heads = QUANT_HEADS;
    older.head_dim = 64;
    f->p = &older;
    assert_int_equal(quant_fixture_run(f), ZYFA_SUCCESS);
    assert_quantised(f);
    quant_fixture_destroy(f);
}

static void test_empty_requests_write_nothing(void** state) {
    (void)state;
    for (int which = 0; which < 2; ++which) {
        quant_fixture* f = quant_fixture_create(64);
        if (which == 0) f->big.params.batch = 0;
        if (which == 1) f->big.params.seqlen = 0;
        assert_int_equal(quant_fixture_run(f), ZYFA_SUCCESS);
        assert_true(quant_outputs_untouched(f));
        f->in.data = f->out.data = NULL;
        assert_int_equal(quant_fixture_run(f), ZYFA_SUCCESS);
        assert_true(quant_outputs_untouched(f));
        quant_fixture_destroy(f);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_requests_run),
        cmocka_unit_test(test_older_caller),
        cmocka_unit_test(test_bad_requests_are_refused),
        cmocka_unit_test(test_empty_requests_write_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
