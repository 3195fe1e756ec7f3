// The fault tier, in the manner of SQLite's OOM tests: each call is first run unfailed to count
// the allocations and thread starts it makes, then run once per N with the N-th of them failing.
// Every such run must return ZYFA_ERROR_OUT_OF_MEMORY with every output as it was (sentinels,
// *out NULL) and no block it allocated left live, or succeed with the unfailed result bit for bit
// (an allocation it could do without, such as std::stable_sort's buffer); nothing may abort.
#include <csignal>
#include <cstdio>
#include <cstring>
#include <memory>
#include <unistd.h>

#include "fault_cases.hpp"
#include "interposer.hpp"

namespace zyfa_fault {
namespace {

int g_failures = 0;
char g_current[256] = "";  // what runs now, for the SIGABRT handler

void on_abort(int) {
    static const char prefix[] = "FAIL: aborted during ";
    ssize_t ignored = write(2, prefix, sizeof prefix - 1);
    ignored = write(2, g_current, std::strlen(g_current));
    ignored = write(2, "\n", 1);
    (void)ignored;
}

#define FAULT_CHECK(condition, ...)                          \
    do {                                                     \
        if (!(condition)) {                                  \
            ++g_failures;                                    \
            std::fprintf(stderr, "FAIL: %s: ", g_current);   \
            std::fprintf(stderr, __VA_ARGS__);               \
            std::fputc('\n', stderr);                        \
        }                                                    \
    } while (0)

enum class Fault { Allocation, ThreadStart };

uint64_t counted(const Tally& before, const Tally& after, Fault fault) {
    return fault == Fault::Allocation ? after.allocations - before.allocations
                                      : after.thread_starts - before.thread_starts;
}

// One unfailed run: succeeds and, when check_live, leaves nothing live once released; returns
// what it counted. The first run keeps the reference (which allocates) and may leave what a
// first use builds once: function-local statics, glibc's cached thread stacks and their TLS.
Tally unfailed_run(Case& c, bool keep, bool check_live) {
    c.prepare();
    const Tally before = tally();
    const zyfa_status status = c.call();
    const Tally after = tally();
    FAULT_CHECK(status == ZYFA_SUCCESS, "unfailed call returned %s (%s)", zyfa_status_string(status),
                zyfa_last_error_message());
    if (keep) c.keep_reference();
    FAULT_CHECK(c.matches_reference(), "unfailed call differs from the first unfailed call");
    c.release();
    const Tally released = tally();
    FAULT_CHECK(!check_live || (released.live_blocks == before.live_blocks && released.live_bytes == before.live_bytes),
                "unfailed call left %lld blocks (%lld bytes) live", static_cast<long long>(released.live_blocks - before.live_blocks),
                static_cast<long long>(released.live_bytes - before.live_bytes));
    return Tally{after.allocations - before.allocations, after.thread_starts - before.thread_starts, 0, 0};
}

struct Swept {
    uint64_t exercised = 0;  // values of N run
    uint64_t recovered = 0;  // of which the call succeeded anyway
};

// Runs the call once for every N in [1, count] with the N-th allocation or thread start failing.
Swept sweep(Case& c, Fault fault, uint64_t count) {
    Swept swept;
    const char* what = fault == Fault::Allocation ? "allocation" : "thread start";
    for (uint64_t n = 1; n <= count; ++n) {
        std::snprintf(g_current, sizeof g_current, "%s, %s %llu of %llu failing", c.name(), what,
                      static_cast<unsigned long long>(n), static_cast<unsigned long long>(count));
        c.prepare();
        const Tally before = tally();
        if (fault == Fault::Allocation) {
            fail_allocation(n);
        } else {
            fail_thread_start(n);
        }
        const zyfa_status status = c.call();
        disarm();
        const Tally after = tally();
        ++swept.exercised;
        FAULT_CHECK(failure_fired(), "the call made only %llu %ss this time",
                    static_cast<unsigned long long>(counted(before, after, fault)), what);
        if (status == ZYFA_SUCCESS) {
            ++swept.recovered;
            FAULT_CHECK(c.matches_reference(), "succeeded, but its output differs from the unfailed call's");
            c.release();
        } else {
            FAULT_CHECK(status == ZYFA_ERROR_OUT_OF_MEMORY, "returned %s (%s), not OUT_OF_MEMORY",
                        zyfa_status_string(status), zyfa_last_error_message());
            FAULT_CHECK(zyfa_last_error_message()[0] != '\0', "failed without a message");
            FAULT_CHECK(c.as_after_failure(), "failed, but wrote its output");
        }
        const Tally settled = tally();
        FAULT_CHECK(settled.live_blocks == before.live_blocks && settled.live_bytes == before.live_bytes,
                    "%lld blocks (%lld bytes) left live", static_cast<long long>(settled.live_blocks - before.live_blocks),
                    static_cast<long long>(settled.live_bytes - before.live_bytes));
    }
    return swept;
}

void run_case(Case& c, bool expect_no_thread_start) {
    std::snprintf(g_current, sizeof g_current, "%s, unfailed", c.name());
    unfailed_run(c, true, false);  // first use: lazily built statics, cached thread stacks
    const Tally counts = unfailed_run(c, false, true);
    const Tally again = unfailed_run(c, false, true);
    FAULT_CHECK(counts.allocations == again.allocations && counts.thread_starts == again.thread_starts,
                "not reproducible: %llu allocations and %llu thread starts, then %llu and %llu",
                static_cast<unsigned long long>(counts.allocations), static_cast<unsigned long long>(counts.thread_starts),
                static_cast<unsigned long long>(again.allocations), static_cast<unsigned long long>(again.thread_starts));
    if (expect_no_thread_start)
        FAULT_CHECK(counts.thread_starts == 0, "started %llu threads", static_cast<unsigned long long>(counts.thread_starts));
    const Swept allocations = sweep(c, Fault::Allocation, counts.allocations);
    const Swept threads = sweep(c, Fault::ThreadStart, counts.thread_starts);
    std::printf("fault: %-52s %3llu allocation failures (%llu recovered), %llu thread-start failures (%llu recovered)\n",
                c.name(), static_cast<unsigned long long>(allocations.exercised),
                static_cast<unsigned long long>(allocations.recovered), static_cast<unsigned long long>(threads.exercised),
                static_cast<unsigned long long>(threads.recovered));
    std::fflush(stdout);
}

// The message of a context whose second worker thread cannot start names the thread.
void check_thread_start_message() {
    std::snprintf(g_current, sizeof g_current, "zyfa_context_create(4 threads), message");
    zyfa_context_options options;
    zyfa_context_options_init(&options, sizeof options);
    options.backend = ZYFA_BACKEND_CPU;
    options.num_threads = 4;
    zyfa_context* ctx = nullptr;
    fail_thread_start(2);
    const zyfa_status status = zyfa_context_create(&options, &ctx);
    disarm();
    FAULT_CHECK(status == ZYFA_ERROR_OUT_OF_MEMORY && ctx == nullptr, "returned %s", zyfa_status_string(status));
    FAULT_CHECK(std::strstr(zyfa_last_error_message(), "could not start worker thread 2 of 4") != nullptr,
                "message \"%s\"", zyfa_last_error_message());
}

const AttnShape kShapes[] = {
    {"BF16 causal", ZYFA_DTYPE_BF16, ZYFA_DTYPE_BF16, ZYFA_MASK_CAUSAL, ZYFA_SOFTMAX_AUTO, 2, 40, 40, 2, 2, 64, 64,
     false, false, false},
    {"FP8 LEAN GQA varlen", ZYFA_DTYPE_FP8_E4M3FN, ZYFA_DTYPE_FP16, ZYFA_MASK_CAUSAL_BOTTOM_RIGHT, ZYFA_SOFTMAX_LEAN, 2,
     37, 70, 4, 2, 128, 128, true, true, true},
    {"FP32 lse", ZYFA_DTYPE_FP32, ZYFA_DTYPE_FP32, ZYFA_MASK_NONE, ZYFA_SOFTMAX_AUTO, 1, 33, 70, 2, 1, 64, 32, false,
     false, true},
};

zyfa_context* cpu_context(int threads) {
    zyfa_context_options options;
    zyfa_context_options_init(&options, sizeof options);
    options.backend = ZYFA_BACKEND_CPU;
    options.num_threads = threads;
    zyfa_context* ctx = nullptr;
    if (zyfa_context_create(&options, &ctx) != ZYFA_SUCCESS) {
        std::fprintf(stderr, "FAIL: a CPU context of %d threads: %s\n", threads, zyfa_last_error_message());
        return nullptr;
    }
    return ctx;
}

}  // namespace
}  // namespace zyfa_fault

int main() {
    using namespace zyfa_fault;
    std::signal(SIGABRT, on_abort);
    for (int threads : {1, 2, 4}) {
        CreateCase c(threads);
        run_case(c, false);
    }
    check_thread_start_message();
    for (int threads : {1, 4}) {
        zyfa_context* ctx = cpu_context(threads);
        if (ctx == nullptr) return 1;
        for (const AttnShape& shape : kShapes) {
            AttnCase c(ctx, threads, shape);
            run_case(c, true);
        }
        for (uint32_t flags : {0u, ZYFA_QUANT_HADAMARD, ZYFA_QUANT_HADAMARD | ZYFA_QUANT_SMOOTH}) {
            QuantCase c(ctx, threads, flags);
            run_case(c, true);
        }
        {
            MergeCase c(ctx, threads);
            run_case(c, true);
        }
        zyfa_context_destroy(ctx);
    }
    if (g_failures != 0) {
        std::fprintf(stderr, "%d failure(s)\n", g_failures);
        return 1;
    }
    std::printf("fault: ok\n");
    return 0;
}
