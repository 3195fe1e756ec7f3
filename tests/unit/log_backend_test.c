/* ZYFA_LOG=info: zyfa_context_create prints one line on stderr saying which backend it created;
 * with AUTO also why each backend tried before it was passed over (not compiled in, or no device
 * with the runtime's reason). */
#include <unistd.h>

#include "unit_support.h"

/* Whether the build line lists a backend ("hip", "cuda") among those compiled in. */
static int backend_compiled_in(const char* name) {
    const char* backends = strstr(zyfa_build_info(), "backends: ");
    if (backends == NULL) return 0;
    const char* end = strchr(backends, ';');
    const char* found = strstr(backends, name);
    return found != NULL && (end == NULL || found < end);
}

/* zyfa_context_create(options) with stderr captured into text (malloc'd, NUL-terminated). */
static zyfa_context* create_capturing_stderr(const zyfa_context_options* options, char** text) {
    char path[] = "/tmp/zyfa_log_backend_XXXXXX";
    const int file = mkstemp(path);
    assert_true(file >= 0);
    fflush(stderr);
    const int saved = dup(STDERR_FILENO);
    assert_true(saved >= 0);
    assert_true(dup2(file, STDERR_FILENO) >= 0);
    zyfa_context* ctx = NULL;
    const zyfa_status status = zyfa_context_create(options, &ctx);
    fflush(stderr);
    assert_true(dup2(saved, STDERR_FILENO) >= 0);
    close(saved);
    assert_int_equal(status, ZYFA_SUCCESS);
    const off_t length = lseek(file, 0, SEEK_END);
    assert_true(length >= 0);
    *text = (char*)malloc((size_t)length + 1);
    assert_non_null(*text);
    assert_int_equal(pread(file, *text, (size_t)length, 0), length);
    (*text)[length] = '\0';
    close(file);
    unlink(path);
    return ctx;
}

/* One line: "\n" only at its end. */
static void assert_one_line(const char* text) {
    const char* newline = strchr(text, '\n');
    assert_non_null(newline);
    assert_int_equal(newline[1], '\0');
}

static void test_auto_says_what_it_chose_and_why(void** state) {
    (void)state;
    zyfa_context_options options;
    zyfa_context_options_init(&options, sizeof(options));
    char* text = NULL;
    zyfa_context* ctx = create_capturing_stderr(&options, &text);
    printf("%s", text);
    assert_one_line(text);
    static const char* const names[] = {"HIP", "CUDA", "CPU"}; /* the order AUTO tries */
    static const char* const build_names[] = {"hip", "cuda", "cpu"};
    static const zyfa_backend kinds[] = {ZYFA_BACKEND_HIP, ZYFA_BACKEND_CUDA, ZYFA_BACKEND_CPU};
    int chosen = 0;
    while (kinds[chosen] != zyfa_context_backend(ctx)) ++chosen;
    char expected[64];
    snprintf(expected, sizeof(expected), "zyfa: AUTO chose %s", names[chosen]);
    assert_memory_equal(text, expected, strlen(expected));
    for (int i = 0; i < chosen; ++i) {
        char reason[64];
        if (!backend_compiled_in(build_names[i])) {
            snprintf(reason, sizeof(reason), "%s: not compiled in", names[i]);
        } else {
            snprintf(reason, sizeof(reason), "%s: no device: ", names[i]);
        }
        if (strstr(text, reason) == NULL) fail_msg("\"%s\" lacks \"%s\"", text, reason);
    }
    free(text);
    zyfa_context_destroy(ctx);
}

static void test_explicit_backend_says_what_it_created(void** state) {
    (void)state;
    zyfa_context_options options;
    zyfa_context_options_init(&options, sizeof(options));
    options.backend = ZYFA_BACKEND_CPU;
    char* text = NULL;
    zyfa_context* ctx = create_capturing_stderr(&options, &text);
    assert_string_equal(text, "zyfa: created CPU (options.backend)\n");
    free(text);
    zyfa_context_destroy(ctx);
}

int main(void) {
    setenv("ZYFA_LOG", "info", 1); /* before the first call, which reads it once */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_auto_says_what_it_chose_and_why),
        cmocka_unit_test(test_explicit_backend_says_what_it_created),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
