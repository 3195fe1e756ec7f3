/* Library information and the stable numbering of the C ABI: status codes, enum values, the
 * version functions, status strings and the build line. */
#include "unit_support.h"

/* Codes are part of the ABI: bindings and serving stacks compare them as numbers. */
static void test_codes_are_pinned(void** state) {
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

    assert_int_equal(ZYFA_QUANT_HADAMARD, 1u);

    /* The enum-like typedefs are 32-bit on every FFI. */
    assert_int_equal(sizeof(zyfa_status), 4);
    assert_int_equal(sizeof(zyfa_dtype), 4);
    assert_int_equal(sizeof(zyfa_backend), 4);
    assert_int_equal(sizeof(zyfa_mask), 4);
    assert_int_equal(sizeof(zyfa_softmax), 4);
}

static void test_status_strings(void** state) {
    (void)state;
    assert_string_equal(zyfa_status_string(ZYFA_SUCCESS), "success");
    assert_string_equal(zyfa_status_string(ZYFA_ERROR_INVALID_ARGUMENT), "invalid argument");
    assert_string_equal(zyfa_status_string(ZYFA_ERROR_NOT_SUPPORTED), "not supported");
    assert_string_equal(zyfa_status_string(ZYFA_ERROR_NO_DEVICE), "no device");
    assert_string_equal(zyfa_status_string(ZYFA_ERROR_DEVICE), "device error");
    assert_string_equal(zyfa_status_string(ZYFA_ERROR_OUT_OF_MEMORY), "out of memory");
    assert_string_equal(zyfa_status_string(ZYFA_ERROR_INTERNAL), "internal error");
    const zyfa_status unknown[] = {-1, 7, 100, INT32_MAX, INT32_MIN};
    for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); ++i) {
        assert_string_equal(zyfa_status_string(unknown[i]), "unknown status");
    }
    /* Static strings: the same pointer every time. */
    assert_ptr_equal(zyfa_status_string(ZYFA_ERROR_DEVICE), zyfa_status_string(ZYFA_ERROR_DEVICE));
    /* Distinct codes have distinct names. */
    for (zyfa_status a = ZYFA_SUCCESS; a <= ZYFA_ERROR_INTERNAL; ++a) {
        for (zyfa_status b = a + 1; b <= ZYFA_ERROR_INTERNAL; ++b) {
            assert_string_not_equal(zyfa_status_string(a), zyfa_status_string(b));
        }
    }
}

static void test_version(void** state) {
    (void)state;
    assert_int_equal(zyfa_version(), ZYFA_VERSION_NUMBER);
    assert_int_equal(zyfa_version() / 10000, ZYFA_VERSION_MAJOR);
    assert_int_equal(zyfa_version() / 100 % 100, ZYFA_VERSION_MINOR);
    assert_int_equal(zyfa_version() % 100, ZYFA_VERSION_PATCH);

    char expected[32];
    snprintf(expected, sizeof(expected), "%d.%d.%d", ZYFA_VERSION_MAJOR, ZYFA_VERSION_MINOR, ZYFA_VERSION_PATCH);
    assert_non_null(zyfa_version_string());
    assert_string_equal(zyfa_version_string(), expected);
    assert_ptr_equal(zyfa_version_string(), zyfa_version_string());
}

static void test_build_info(void** state) {
    (void)state;
    const char* info = zyfa_build_info();
    assert_non_null(info);
    assert_ptr_equal(info, zyfa_build_info());
    assert_null(strchr(info, '\n')); /* one line */
    if (strstr(info, zyfa_version_string()) == NULL) fail_msg("build info \"%s\" lacks the version", info);
    const char* backends = strstr(info, "backends: ");
    if (backends == NULL) fail_msg("build info \"%s\" names no backends", info);
    /* The CPU backend is always compiled in. */
    const char* end = strchr(backends, ';');
    const char* cpu = strstr(backends, "cpu");
    if (cpu == NULL || (end != NULL && cpu > end)) fail_msg("build info \"%s\" does not list the cpu backend", info);
    if (strstr(info, "gpu targets: ") == NULL) fail_msg("build info \"%s\" names no gpu targets", info);
}

/* No call on this thread has failed yet: the message is "" (never NULL). */
static void test_last_error_starts_empty(void** state) {
    (void)state;
    assert_non_null(zyfa_last_error_message());
    assert_string_equal(zyfa_last_error_message(), "");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_last_error_starts_empty), /* first: before any call fails */
        cmocka_unit_test(test_codes_are_pinned),
        cmocka_unit_test(test_status_strings),
        cmocka_unit_test(test_version),
        cmocka_unit_test(test_build_info),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
