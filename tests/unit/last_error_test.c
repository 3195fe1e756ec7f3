/* zyfa_last_error_message is thread-local: two threads that fail differently at the same time
 * each see only their own message, and a successful call leaves the message as it was. */
#include <pthread.h>

#include "unit_support.h"

typedef struct thread_result {
    char message_after_failure[512];
    char message_after_success[512];
    zyfa_status failure_status;
    zyfa_status success_status;
} thread_result;

static pthread_barrier_t both_failed;
static pthread_barrier_t both_checked;

/* Fails with a NULL context. */
static void* fail_with_null_ctx(void* arg) {
    thread_result* result = (thread_result*)arg;
    zyfa_attn_params params;
    zyfa_attn_params_init(&params, sizeof(params));
    zyfa_tensor t;
    memset(&t, 0, sizeof(t));
    result->failure_status = zyfa_attn_fwd(NULL, &params, &t, &t, &t, &t, NULL);
    pthread_barrier_wait(&both_failed); /* the other thread has failed too before we read */
    snprintf(result->message_after_failure, sizeof(result->message_after_failure), "%s", zyfa_last_error_message());
    pthread_barrier_wait(&both_checked);
    zyfa_context* ctx = NULL;
    result->success_status = zyfa_context_create(NULL, &ctx);
    zyfa_context_destroy(ctx);
    snprintf(result->message_after_success, sizeof(result->message_after_success), "%s", zyfa_last_error_message());
    return NULL;
}

/* Fails with an unknown backend. */
static void* fail_with_bad_backend(void* arg) {
    thread_result* result = (thread_result*)arg;
    zyfa_context_options options;
    zyfa_context_options_init(&options, sizeof(options));
    options.backend = 99;
    zyfa_context* ctx = NULL;
    result->failure_status = zyfa_context_create(&options, &ctx);
    pthread_barrier_wait(&both_failed);
    snprintf(result->message_after_failure, sizeof(result->message_after_failure), "%s", zyfa_last_error_message());
    pthread_barrier_wait(&both_checked);
    zyfa_context* cpu = NULL; /* no cmocka asserts off the main thread: record, check later */
    zyfa_context_options cpu_options; /* host buffers: the CPU backend, whatever GPU is present */
    zyfa_context_options_init(&cpu_options, sizeof(cpu_options));
    cpu_options.backend = ZYFA_BACKEND_CPU;
    const zyfa_status created = zyfa_context_create(&cpu_options, &cpu);
    zyfa_quant_params qp;
    zyfa_quant_params_init(&qp, sizeof(qp));
    qp.heads = 1;
    qp.head_dim = 16; /* batch = seqlen = 0: a valid empty problem */
    zyfa_tensor in = unit_tensor(NULL, ZYFA_DTYPE_BF16, 0, 1, 16);
    zyfa_tensor out = unit_tensor(NULL, ZYFA_DTYPE_FP8_E4M3FN, 0, 1, 16);
    float descale = 0.0f;
    result->success_status = created != ZYFA_SUCCESS ? created : zyfa_quantize_fp8(cpu, &qp, &in, &out, &descale, NULL);
    zyfa_context_destroy(cpu);
    snprintf(result->message_after_success, sizeof(result->message_after_success), "%s", zyfa_last_error_message());
    return NULL;
}

static void test_messages_are_per_thread(void** state) {
    (void)state;
    assert_int_equal(pthread_barrier_init(&both_failed, NULL, 2), 0);
    assert_int_equal(pthread_barrier_init(&both_checked, NULL, 2), 0);
    thread_result a, b;
    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    pthread_t thread_a, thread_b;
    assert_int_equal(pthread_create(&thread_a, NULL, fail_with_null_ctx, &a), 0);
    assert_int_equal(pthread_create(&thread_b, NULL, fail_with_bad_backend, &b), 0);
    assert_int_equal(pthread_join(thread_a, NULL), 0);
    assert_int_equal(pthread_join(thread_b, NULL), 0);
    pthread_barrier_destroy(&both_failed);
    pthread_barrier_destroy(&both_checked);

    assert_int_equal(a.failure_status, ZYFA_ERROR_INVALID_ARGUMENT);
    assert_int_equal(b.failure_status, ZYFA_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(a.message_after_failure, "ctx is NULL"));
    assert_null(strstr(a.message_after_failure, "options.backend"));
    assert_non_null(strstr(b.message_after_failure, "options.backend = 99"));
    assert_null(strstr(b.message_after_failure, "ctx is NULL"));

    /* A successful call leaves each thread's message as it was. */
    assert_int_equal(a.success_status, ZYFA_SUCCESS);
    assert_int_equal(b.success_status, ZYFA_SUCCESS);
    assert_string_equal(a.message_after_success, a.message_after_failure);
    assert_string_equal(b.message_after_success, b.message_after_failure);

    /* Neither thread's failure reached this one. */
    assert_string_equal(zyfa_last_error_message(), "");
}

/* The most recent failure replaces an older message on the same thread. */
static void test_latest_failure_wins(void** state) {
    (void)state;
    zyfa_context* ctx = NULL;
    zyfa_context_options options;
    zyfa_context_options_init(&options, sizeof(options));
    options.device = -3;
    assert_int_equal(zyfa_context_create(&options, &ctx), ZYFA_ERROR_INVALID_ARGUMENT);
    unit_assert_message_contains("device", "options.device = -3");
    options.device = 0;
    options.num_threads = -2;
    assert_int_equal(zyfa_context_create(&options, &ctx), ZYFA_ERROR_INVALID_ARGUMENT);
    unit_assert_message_contains("num_threads", "options.num_threads = -2");
    assert_null(strstr(zyfa_last_error_message(), "options.device"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_messages_are_per_thread),
        cmocka_unit_test(test_latest_failure_wins),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
