/* ZYFA_LOG=info: each zyfa_attn_fwd that runs reports its kernel on stderr, the same name that
 * zyfa_attn_kernel_name gives; an empty problem runs no kernel and reports none. */
#include "unit_support.h"

static void test_info_log_names_the_kernel(void** state) {
    (void)state;
    attn_fixture* f = attn_fixture_create(ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP32);
    const char* name = attn_fixture_kernel_name(f);
    assert_non_null(name);
    char expected[256];
    snprintf(expected, sizeof(expected), "zyfa: kernel %s\n", name);

    zyfa_status status = ZYFA_ERROR_INTERNAL;
    char* text = attn_fixture_fwd_capturing_stderr(f, &status);
    assert_int_equal(status, ZYFA_SUCCESS);
    assert_string_equal(text, expected);
    free(text);

    f->big.params.seqlen_q = 0; /* no query row: no kernel runs, nothing is logged */
    text = attn_fixture_fwd_capturing_stderr(f, &status);
    assert_int_equal(status, ZYFA_SUCCESS);
    assert_string_equal(text, "");
    free(text);
    attn_fixture_destroy(f);
}

int main(void) {
    setenv("ZYFA_LOG", "info", 1); /* before the first zyfa_attn_fwd, which reads it once */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_info_log_names_the_kernel),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
