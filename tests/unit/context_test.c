/* zyfa_context_create / destroy and the handle queries. */
#include "unit_support.h"

/* A non-NULL value that no real context has, to see that a failed create resets *out. */
static zyfa_context* not_a_context(void) { return (zyfa_context*)(uintptr_t)0x1; }

/* Whether the build line lists a backend ("hip", "cuda") among those compiled in. */
static int backend_compiled_in(const char* name) {
    const char* backends = strstr(zyfa_build_info(), "backends: ");
    if (backends == NULL) return 0;
    const char* end = strchr(backends, ';');
    const char* found = strstr(backends, name);
    return found != NULL && (end == NULL || found < end);
}

static void test_null_options_mean_defaults(void** state) {
    (void)state;
    zyfa_context* ctx = not_a_context();
    assert_int_equal(zyfa_context_create(NULL, &ctx), ZYFA_SUCCESS);
    assert_non_null(ctx);
    assert_int_not_equal(zyfa_context_backend(ctx), ZYFA_BACKEND_AUTO); /* AUTO resolves */
    assert_non_null(zyfa_context_device_name(ctx));
    assert_true(strlen(zyfa_context_device_name(ctx)) > 0);
    if (!backend_compiled_in("hip") && !backend_compiled_in("cuda")) {
        assert_int_equal(zyfa_context_backend(ctx), ZYFA_BACKEND_CPU);
        assert_string_equal(zyfa_context_device_name(ctx), "cpu");
    }
    zyfa_context_destroy(ctx);
}

static void test_explicit_cpu_with_thread_counts(void** state) {
    (void)state;
    const int32_t thread_counts[] = {0, 1, 3};
    for (size_t i = 0; i < sizeof(thread_counts) / sizeof(thread_counts[0]); ++i) {
        zyfa_context_options options;
        zyfa_context_options_init(&options, sizeof(options));
        options.backend = ZYFA_BACKEND_CPU;
        options.num_threads = thread_counts[i];
        zyfa_context* ctx = NULL;
        assert_int_equal(zyfa_context_create(&options, &ctx), ZYFA_SUCCESS);
        assert_int_equal(zyfa_context_backend(ctx), ZYFA_BACKEND_CPU);
        assert_string_equal(zyfa_context_device_name(ctx), "cpu");
        zyfa_context_destroy(ctx);
    }
}

static void test_gpu_backend_not_compiled_in(void** state) {
    (void)state;
    const struct {
        zyfa_backend backend;
        const char* build_name;
        const char* message;
    } gpus[] = {{ZYFA_BACKEND_HIP, "hip", "backend HIP is not compiled"},
                {ZYFA_BACKEND_CUDA, "cuda", "backend CUDA is not compiled"}};
    for (size_t i = 0; i < 2; ++i) {
        if (backend_compiled_in(gpus[i].build_name)) continue; /* covered by the gpu tier */
        zyfa_context_options options;
        zyfa_context_options_init(&options, sizeof(options));
        options.backend = gpus[i].backend;
        zyfa_context* ctx = not_a_context();
        assert_int_equal(zyfa_context_create(&options, &ctx), ZYFA_ERROR_NOT_SUPPORTED);
        assert_null(ctx);
        unit_assert_message_contains("gpu backend", gpus[i].message);
    }
}

static void test_bad_options_are_invalid(void** state) {
    (void)state;
    const struct {
        zyfa_backend backend;
        int32_t device;
        int32_t num_threads;
        const char* needle;
    } cases[] = {
        {-1, 0, 0, "options.backend = -1"},
        {4, 0, 0, "options.backend = 4"},
        {ZYFA_BACKEND_CPU, -1, 0, "options.device = -1"},
        {ZYFA_BACKEND_AUTO, INT32_MIN, 0, "options.device"},
        {ZYFA_BACKEND_CPU, 0, -1, "options.num_threads = -1"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
        zyfa_context_options options;
        zyfa_context_options_init(&options, sizeof(options));
        options.backend = cases[i].backend;
        options.device = cases[i].device;
        options.num_threads = cases[i].num_threads;
        zyfa_context* ctx = not_a_context();
        assert_int_equal(zyfa_context_create(&options, &ctx), ZYFA_ERROR_INVALID_ARGUMENT);
        assert_null(ctx);
        unit_assert_message_contains(cases[i].needle, cases[i].needle);
    }
}

static void test_null_out_is_invalid(void** state) {
    (void)state;
    assert_int_equal(zyfa_context_create(NULL, NULL), ZYFA_ERROR_INVALID_ARGUMENT);
    unit_assert_message_contains("out", "out is NULL");
}

static void test_options_struct_size(void** state) {
    (void)state;
    struct {
        zyfa_context_options options;
        unsigned char tail[16];
    } big;
    zyfa_context* ctx = not_a_context();

    /* Below 4 bytes struct_size itself is missing. */
    memset(&big, 0, sizeof(big));
    big.options.struct_size = 3;
    assert_int_equal(zyfa_context_create(&big.options, &ctx), ZYFA_ERROR_INVALID_ARGUMENT);
    assert_null(ctx);
    unit_assert_message_contains("struct_size 3", "options.struct_size = 3");

    /* Only struct_size: every option at its default, the garbage behind it unread. */
    memset(&big, 0xCD, sizeof(big));
    zyfa_context_options_init(&big.options, sizeof(uint32_t));
    assert_int_equal(zyfa_context_create(&big.options, &ctx), ZYFA_SUCCESS);
    assert_int_not_equal(zyfa_context_backend(ctx), ZYFA_BACKEND_AUTO);
    zyfa_context_destroy(ctx);

    /* An older caller without num_threads: garbage there (negative) is not read. */
    memset(&big, 0xCD, sizeof(big));
    zyfa_context_options_init(&big.options, offsetof(zyfa_context_options, num_threads));
    big.options.backend = ZYFA_BACKEND_CPU;
    assert_int_equal(zyfa_context_create(&big.options, &ctx), ZYFA_SUCCESS);
    assert_int_equal(zyfa_context_backend(ctx), ZYFA_BACKEND_CPU);
    zyfa_context_destroy(ctx);

    /* A newer caller: zero tail accepted, non-zero tail NOT_SUPPORTED. */
    memset(&big, 0, sizeof(big));
    zyfa_context_options_init(&big.options, sizeof(big));
    big.options.backend = ZYFA_BACKEND_CPU;
    assert_int_equal(big.options.struct_size, sizeof(big));
    assert_int_equal(zyfa_context_create(&big.options, &ctx), ZYFA_SUCCESS);
    zyfa_context_destroy(ctx);
    big.tail[9] = 7;
    ctx = not_a_context();
    assert_int_equal(zyfa_context_create(&big.options, &ctx), ZYFA_ERROR_NOT_SUPPORTED);
    assert_null(ctx);
    unit_assert_message_contains("tail", "options.struct_size");
}

static void test_null_handle_queries(void** state) {
    (void)state;
    zyfa_context_destroy(NULL); /* a no-op */
    assert_int_equal(zyfa_context_backend(NULL), ZYFA_BACKEND_AUTO);
    assert_non_null(zyfa_context_device_name(NULL));
    assert_string_equal(zyfa_context_device_name(NULL), "");
}

/* Many contexts at once are independent. */
static void test_several_contexts(void** state) {
    (void)state;
    zyfa_context* contexts[4];
    for (int i = 0; i < 4; ++i) contexts[i] = unit_cpu_context();
    for (int i = 0; i < 4; ++i) assert_int_equal(zyfa_context_backend(contexts[i]), ZYFA_BACKEND_CPU);
    for (int i = 0; i < 4; ++i) zyfa_context_destroy(contexts[i]);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_null_options_mean_defaults),
        cmocka_unit_test(test_explicit_cpu_with_thread_counts),
        cmocka_unit_test(test_gpu_backend_not_compiled_in),
        cmocka_unit_test(test_bad_options_are_invalid),
        cmocka_unit_test(test_null_out_is_invalid),
        cmocka_unit_test(test_options_struct_size),
        cmocka_unit_test(test_null_handle_queries),
        cmocka_unit_test(test_several_contexts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
