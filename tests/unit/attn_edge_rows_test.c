/* Rows at the edges of the contract (include/zyfa.h): a row that sees no key gets O = 0 and
 * lse = -inf (seqlen_k = 0, packed key sequences that are empty), and a row that sees a NaN or
 * +inf score gets O = NaN and lse = NaN while every other row keeps its bits. CPU backend. */
#include <math.h>

#include "unit_support.h"

static float o_value(const attn_fixture* f, size_t index) { return ((const float*)f->o_data)[index]; }

/* o index of (b, s, h, 0) in the fixture's contiguous FP32 o. */
static size_t o_row(int b, int s, int h) { return (((size_t)b * UNIT_SEQ_Q + s) * UNIT_HEADS_Q + h) * UNIT_DIM; }
static size_t lse_index(int b, int h, int s) { return ((size_t)b * UNIT_HEADS_Q + h) * UNIT_SEQ_Q + s; }

static void assert_rows_see_no_key(const attn_fixture* f, const char* what) {
    for (size_t i = 0; i < f->o_bytes / sizeof(float); ++i) {
        if (o_value(f, i) != 0.0f || signbit(o_value(f, i))) fail_msg("%s: o[%zu] = %g, want +0", what, i, (double)o_value(f, i));
    }
    for (size_t i = 0; i < f->lse_count; ++i) {
        if (!(isinf(f->lse[i]) && f->lse[i] < 0)) fail_msg("%s: lse[%zu] = %g, want -inf", what, i, (double)f->lse[i]);
    }
}

/* seqlen_k = 0 while queries exist: every row is written, with k and v data given or NULL. */
static void test_no_keys_writes_zero_rows(void** state) {
    (void)state;
    const zyfa_dtype inputs[] = {ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP8_E4M3FN};
    for (int i = 0; i < 2; ++i) {
        for (int null_kv = 0; null_kv < 2; ++null_kv) {
            attn_fixture* f = attn_fixture_create(inputs[i], ZYFA_DTYPE_FP32);
            f->big.params.seqlen_k = 0;
            f->big.params.mask = i == 0 ? ZYFA_MASK_NONE : ZYFA_MASK_CAUSAL;
            if (null_kv) f->k.data = f->v.data = NULL;
            assert_int_equal(attn_fixture_supported(f), ZYFA_SUCCESS);
            assert_int_equal(attn_fixture_fwd(f), ZYFA_SUCCESS);
            assert_rows_see_no_key(f, null_kv ? "seqlen_k 0, NULL k/v" : "seqlen_k 0");
            attn_fixture_destroy(f);
        }
    }
}

/* Packed key sequences that are all empty (FlashAttention-3's zero-length varlen case). */
static void test_empty_packed_key_sequences(void** state) {
    (void)state;
    attn_fixture* f = attn_fixture_create(ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP32);
    for (int b = 0; b <= UNIT_BATCH; ++b) f->cu_k[b] = 0;
    f->big.params.cu_seqlens_q = f->cu_q;
    f->big.params.cu_seqlens_k = f->cu_k;
    assert_int_equal(attn_fixture_fwd(f), ZYFA_SUCCESS);
    /* Packed lse is [heads_q, total_q]: the same count; every entry is -inf either way. */
    assert_rows_see_no_key(f, "every key sequence empty");
    attn_fixture_destroy(f);
}

typedef void (*poison)(attn_fixture* f);

static void bf16_nan_in_q_row(attn_fixture* f) { /* (b 0, s 1, h 0) */
    uint16_t* q = (uint16_t*)f->q_data + o_row(0, 1, 0);
    q[5] = 0x7FC0;
}
static void bf16_inf_in_k_row(attn_fixture* f) { /* (b 1, key 2, kv head 1): every element +inf */
    uint16_t* k = (uint16_t*)f->k_data + (((size_t)1 * UNIT_SEQ_K + 2) * UNIT_HEADS_KV + 1) * UNIT_DIM;
    for (int d = 0; d < UNIT_DIM; ++d) k[d] = 0x7F80;
}
static void fp8_nan_q_descale(attn_fixture* f) { f->descale[0 * UNIT_HEADS_KV + 1] = NAN; }  /* (b 0, kv head 1) */
static void fp8_nan_code_in_k(attn_fixture* f) { /* e4m3fn NaN at (b 0, key 0, kv head 0) */
    ((uint8_t*)f->k_data)[3] = 0x7F;
}

/* Which rows the poison reaches: bottom-right causal, d = seqlen_k - seqlen_q = 1, so query i sees
 * keys j <= i + 1; query heads 2h, 2h+1 read kv head h. */
static int row_poisoned(int which, int b, int s, int h) {
    switch (which) {
        case 0: return b == 0 && s == 1 && h == 0;
        case 1: return b == 1 && h / 2 == 1 && 2 <= s + 1;
        case 2: return b == 0 && h / 2 == 1;
        default: return b == 0 && h / 2 == 0; /* key 0 is seen by every row */
    }
}

static void test_non_finite_scores_give_nan_rows(void** state) {
    (void)state;
    static const struct {
        const char* name;
        zyfa_dtype input;
        zyfa_softmax softmax;
        poison apply;
    } cases[] = {
        {"BF16, NaN in a q row", ZYFA_DTYPE_BF16, ZYFA_SOFTMAX_EXACT, bf16_nan_in_q_row},
        {"BF16, +inf k row", ZYFA_DTYPE_BF16, ZYFA_SOFTMAX_EXACT, bf16_inf_in_k_row},
        {"FP8 LEAN, NaN q_descale", ZYFA_DTYPE_FP8_E4M3FN, ZYFA_SOFTMAX_LEAN, fp8_nan_q_descale},
        {"FP8 EXACT, NaN q_descale", ZYFA_DTYPE_FP8_E4M3FN, ZYFA_SOFTMAX_EXACT, fp8_nan_q_descale},
        {"FP8 LEAN, NaN code in k", ZYFA_DTYPE_FP8_E4M3FN, ZYFA_SOFTMAX_LEAN, fp8_nan_code_in_k},
    };
    for (int c = 0; c < (int)(sizeof(cases) / sizeof(cases[0])); ++c) {
        attn_fixture* clean = attn_fixture_create(cases[c].input, ZYFA_DTYPE_FP32);
        attn_fixture* dirty = attn_fixture_create(cases[c].input, ZYFA_DTYPE_FP32);
        attn_fixture* both[] = {clean, dirty};
        for (int i = 0; i < 2; ++i) {
            both[i]->big.params.softmax = cases[c].softmax;
            if (cases[c].input == ZYFA_DTYPE_FP8_E4M3FN) {
                both[i]->big.params.q_descale = both[i]->descale;
                both[i]->big.params.k_descale = both[i]->descale;
                both[i]->big.params.v_descale = both[i]->descale;
            }
        }
        /* The descale fixture is shared by q, k and v: give k and v their own clean copy. */
        static float kv_descale[UNIT_BATCH * UNIT_HEADS_KV];
        for (int i = 0; i < UNIT_BATCH * UNIT_HEADS_KV; ++i) kv_descale[i] = dirty->descale[i];
        if (cases[c].input == ZYFA_DTYPE_FP8_E4M3FN) {
            dirty->big.params.k_descale = kv_descale;
            dirty->big.params.v_descale = kv_descale;
        }
        cases[c].apply(dirty);
        assert_int_equal(attn_fixture_fwd(clean), ZYFA_SUCCESS);
        assert_int_equal(attn_fixture_fwd(dirty), ZYFA_SUCCESS);
        for (int b = 0; b < UNIT_BATCH; ++b)
            for (int s = 0; s < UNIT_SEQ_Q; ++s)
                for (int h = 0; h < UNIT_HEADS_Q; ++h) {
                    const size_t row = o_row(b, s, h);
                    const float lse = dirty->lse[lse_index(b, h, s)];
                    if (row_poisoned(c < 2 ? c : c == 4 ? 3 : 2, b, s, h)) {
                        for (int d = 0; d < UNIT_DIM; ++d)
                            if (!isnan(o_value(dirty, row + d))) fail_msg("%s: o(%d,%d,%d,%d) = %g, want NaN", cases[c].name, b, s, h, d, (double)o_value(dirty, row + d));
                        if (!isnan(lse)) fail_msg("%s: lse(%d,%d,%d) = %g, want NaN", cases[c].name, b, h, s, (double)lse);
                    } else {
                        if (memcmp((const float*)dirty->o_data + row, (const float*)clean->o_data + row, UNIT_DIM * sizeof(float)) != 0)
                            fail_msg("%s: row (%d,%d,%d) differs from the clean run", cases[c].name, b, s, h);
                        if (memcmp(&lse, &clean->lse[lse_index(b, h, s)], sizeof lse) != 0)
                            fail_msg("%s: lse(%d,%d,%d) differs from the clean run", cases[c].name, b, h, s);
                    }
                }
        attn_fixture_destroy(clean);
        attn_fixture_destroy(dirty);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_keys_writes_zero_rows),
        cmocka_unit_test(test_empty_packed_key_sequences),
        cmocka_unit_test(test_non_finite_scores_give_nan_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
