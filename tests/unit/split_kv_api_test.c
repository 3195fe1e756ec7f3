/* Split-KV's public surface on the CPU backend (issue 22 item 4): the 0.1.5 fields of
 * zyfa_attn_params are validated on every backend (INVALID_ARGUMENT naming the field, nothing
 * written), zyfa_attn_fwd_workspace_size answers 0 on the CPU, and the CPU backend ignores a valid
 * workspace and split request (bitwise the same result). The NVIDIA plan's choices:
 * split_kv_plan_test.cpp; the kernels against the CPU: tests/gpu/split_kv_gpu_test.cpp. */
#include "unit_support.h"

static int setup(void** state) {
    *state = attn_fixture_create(ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP32);
    return 0;
}

static int teardown(void** state) {
    attn_fixture_destroy((attn_fixture*)*state);
    return 0;
}

static void refused_fwd(attn_fixture* f, const char* what, const char* needle) {
    unit_assert_refused(what, attn_fixture_fwd(f), ZYFA_ERROR_INVALID_ARGUMENT, "zyfa_attn_fwd", needle);
    assert_true(attn_fixture_outputs_untouched(f));
    size_t bytes = 12345;
    unit_assert_refused(what, zyfa_attn_fwd_workspace_size(f->ctx, f->p, &bytes), ZYFA_ERROR_INVALID_ARGUMENT,
                        "zyfa_attn_fwd_workspace_size", needle);
    assert_int_equal(bytes, 12345); /* nothing written */
}

static void test_negative_num_splits(void** state) {
    attn_fixture* f = (attn_fixture*)*state;
    f->big.params.num_splits = -1;
    refused_fwd(f, "num_splits -1", "params.num_splits = -1");
}

/* reserved3 is tail padding, a later field's place, as reserved and reserved2: set, it is
 * NOT_SUPPORTED (a newer caller's request), not INVALID_ARGUMENT. */
static void test_reserved3(void** state) {
    attn_fixture* f = (attn_fixture*)*state;
    f->big.params.reserved3 = 7;
    unit_assert_refused("reserved3 7", attn_fixture_fwd(f), ZYFA_ERROR_NOT_SUPPORTED, "zyfa_attn_fwd",
                        "params.reserved3 = 7");
    assert_true(attn_fixture_outputs_untouched(f));
    size_t bytes = 12345;
    unit_assert_refused("reserved3 7", zyfa_attn_fwd_workspace_size(f->ctx, f->p, &bytes), ZYFA_ERROR_NOT_SUPPORTED,
                        "zyfa_attn_fwd_workspace_size", "params.reserved3 = 7");
    assert_int_equal(bytes, 12345); /* nothing written */
}

static void test_bytes_without_workspace(void** state) {
    attn_fixture* f = (attn_fixture*)*state;
    f->big.params.workspace_bytes = 4096;
    refused_fwd(f, "workspace_bytes without workspace", "params.workspace_bytes = 4096");
}

static void test_misaligned_workspace(void** state) {
    attn_fixture* f = (attn_fixture*)*state;
    static unsigned char buffer[256 + 16];
    f->big.params.workspace = buffer + 16 - ((uintptr_t)buffer % 16) + 4;
    f->big.params.workspace_bytes = 128;
    unit_assert_refused("misaligned workspace", attn_fixture_fwd(f), ZYFA_ERROR_INVALID_ARGUMENT, "zyfa_attn_fwd",
                        "params.workspace");
    assert_true(attn_fixture_outputs_untouched(f));
}

/* The workspace is written scratch: it may not overlap an input or an output. */
static void test_workspace_overlapping_o(void** state) {
    attn_fixture* f = (attn_fixture*)*state;
    f->big.params.workspace = f->o_data;
    f->big.params.workspace_bytes = 64;
    unit_assert_refused("workspace over o", attn_fixture_fwd(f), ZYFA_ERROR_INVALID_ARGUMENT, "zyfa_attn_fwd",
                        "params.workspace");
    assert_true(attn_fixture_outputs_untouched(f));
}

static void test_workspace_size_null_bytes(void** state) {
    attn_fixture* f = (attn_fixture*)*state;
    unit_assert_refused("bytes NULL", zyfa_attn_fwd_workspace_size(f->ctx, f->p, NULL), ZYFA_ERROR_INVALID_ARGUMENT,
                        "zyfa_attn_fwd_workspace_size", "bytes is NULL");
    unit_assert_refused("ctx NULL", zyfa_attn_fwd_workspace_size(NULL, f->p, NULL), ZYFA_ERROR_INVALID_ARGUMENT,
                        "zyfa_attn_fwd_workspace_size", "ctx is NULL");
}

/* The CPU backend never splits: 0 bytes, for a decode shape too, and whatever num_splits asks. */
static void test_cpu_workspace_size_is_zero(void** state) {
    attn_fixture* f = (attn_fixture*)*state;
    zyfa_attn_params p;
    zyfa_attn_params_init(&p, sizeof(p));
    p.batch = 64;
    p.seqlen_q = 1;
    p.seqlen_k = 8192;
    p.heads_q = 32;
    p.heads_kv = 8;
    p.head_dim_qk = p.head_dim_v = 128;
    for (int32_t n = 0; n <= 8; n += 4) {
        p.num_splits = n;
        size_t bytes = 99;
        assert_int_equal(zyfa_attn_fwd_workspace_size(f->ctx, &p, &bytes), ZYFA_SUCCESS);
        assert_int_equal(bytes, 0);
    }
    /* Validated like zyfa_attn_fwd: heads_kv must divide heads_q. */
    p.heads_kv = 5;
    size_t bytes = 99;
    unit_assert_refused("heads_kv 5", zyfa_attn_fwd_workspace_size(f->ctx, &p, &bytes), ZYFA_ERROR_INVALID_ARGUMENT,
                        "zyfa_attn_fwd_workspace_size", "params.heads_kv = 5");
    assert_int_equal(bytes, 99);
}

/* A valid workspace and split request change nothing on the CPU backend: bitwise the same. */
static void test_cpu_ignores_split_request(void** state) {
    attn_fixture* f = (attn_fixture*)*state;
    assert_int_equal(attn_fixture_fwd(f), ZYFA_SUCCESS);
    unsigned char* o_first = (unsigned char*)unit_alloc(f->o_bytes);
    float* lse_first = (float*)unit_alloc(f->lse_count * sizeof(float));
    memcpy(o_first, f->o_data, f->o_bytes);
    memcpy(lse_first, f->lse, f->lse_count * sizeof(float));
    unsigned char* workspace = (unsigned char*)unit_alloc(4096); /* malloc: 16-byte aligned on LP64 glibc */
    memset(f->o_data, UNIT_SENTINEL_BYTE, f->o_bytes);
    f->big.params.workspace = workspace;
    f->big.params.workspace_bytes = 4096;
    f->big.params.num_splits = 4;
    assert_int_equal(attn_fixture_fwd(f), ZYFA_SUCCESS);
    assert_memory_equal(o_first, f->o_data, f->o_bytes);
    assert_memory_equal(lse_first, f->lse, f->lse_count * sizeof(float));
    free(o_first);
    free(lse_first);
    free(workspace);
}

/* A 0.1.4 caller's struct (struct_size 208) ends before the split fields: garbage behind it is
 * not read, so the call succeeds as an unsplit one. */
static void test_older_struct_size_ignores_split_fields(void** state) {
    attn_fixture* f = (attn_fixture*)*state;
    f->big.params.struct_size = (uint32_t)offsetof(zyfa_attn_params, workspace);
    f->big.params.num_splits = -5;
    f->big.params.reserved3 = 3;
    f->big.params.workspace_bytes = 77;
    assert_int_equal(attn_fixture_fwd(f), ZYFA_SUCCESS);
    size_t bytes = 1;
    assert_int_equal(zyfa_attn_fwd_workspace_size(f->ctx, f->p, &bytes), ZYFA_SUCCESS);
    assert_int_equal(bytes, 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_negative_num_splits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reserved3, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bytes_without_workspace, setup, teardown),
        cmocka_unit_test_setup_teardown(test_misaligned_workspace, setup, teardown),
        cmocka_unit_test_setup_teardown(test_workspace_overlapping_o, setup, teardown),
        cmocka_unit_test_setup_teardown(test_workspace_size_null_bytes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cpu_workspace_size_is_zero, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cpu_ignores_split_request, setup, teardown),
        cmocka_unit_test_setup_teardown(test_older_struct_size_ignores_split_fields, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
