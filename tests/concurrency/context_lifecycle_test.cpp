// Contexts created and destroyed from many threads at once: 16 threads each create a CPU context
// (1 to 3 workers), run a small problem on it and compare bitwise with the single-threaded
// result, and destroy it, many times; between rounds they also make creations that must fail
// (negative num_threads, an unknown backend) and leave *out NULL, and destroy NULL. Under
// LeakSanitizer (ASan build) a context that leaks fails the test; under ThreadSanitizer a race in
// creation, worker start-up or teardown does.
//   context_lifecycle_test [rounds]   (default 50; env ZYFA_CONCURRENCY_ITERATIONS overrides)
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "concurrency_problems.hpp"
#include "failure_report.hpp"

using namespace zyfa_concurrency;

namespace {

constexpr int kThreads = 16;

void expect_creation_fails(zyfa_context_options options, const char* what) {
    zyfa_context* ctx = reinterpret_cast<zyfa_context*>(&options);  // must be overwritten with NULL
    const zyfa_status status = zyfa_context_create(&options, &ctx);
    if (status == ZYFA_SUCCESS || ctx != nullptr) {
        report(std::string(what) + ": creation returned " + std::to_string(status) + " and a non-NULL context");
        zyfa_context_destroy(status == ZYFA_SUCCESS ? ctx : nullptr);
    }
}

void worker(int t, int rounds, const std::vector<uint8_t>& expected) {
    Problem problem(1);  // bf16, padded strides: each thread owns its own buffers
    for (int r = 0; r < rounds && failure_count().load() == 0; ++r) {
        zyfa_context* ctx = cpu_context(1 + (t + r) % 3);
        if (ctx == nullptr) {
            report("thread " + std::to_string(t) + ": creation failed: " + zyfa_last_error_message());
            return;
        }
        if (zyfa_context_backend(ctx) != ZYFA_BACKEND_CPU || std::string(zyfa_context_device_name(ctx)) != "cpu") {
            report("thread " + std::to_string(t) + ": the context is not the CPU context asked for");
        }
        if (problem.run(ctx) != ZYFA_SUCCESS) {
            report("thread " + std::to_string(t) + ": run failed: " + zyfa_last_error_message());
        } else if (problem.outputs() != expected) {
            report("thread " + std::to_string(t) + ": result differs on a context with " +
                   std::to_string(1 + (t + r) % 3) + " workers");
        }
        zyfa_context_destroy(ctx);

        zyfa_context_options options;
        zyfa_context_options_init(&options, sizeof options);
        options.backend = ZYFA_BACKEND_CPU;
        options.num_threads = -1 - t;
        expect_creation_fails(options, "num_threads < 0");
        zyfa_context_options_init(&options, sizeof options);
        options.backend = 99;
        expect_creation_fails(options, "backend 99");
        zyfa_context_destroy(nullptr);
    }
}

}  // namespace

int main(int argc, char** argv) {
    const int rounds = zyfa_concurrency::iterations(argc > 1 ? std::atoi(argv[1]) : 50);
    std::vector<uint8_t> expected;
    {
        zyfa_context* single = cpu_context(1);
        Problem reference(1);
        if (single == nullptr || reference.run(single) != ZYFA_SUCCESS) {
            std::fprintf(stderr, "reference run failed: %s\n", zyfa_last_error_message());
            zyfa_context_destroy(single);
            return 1;
        }
        expected = reference.outputs();
        zyfa_context_destroy(single);
    }
    const auto begin = std::chrono::steady_clock::now();
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) threads.emplace_back(worker, t, rounds, std::cref(expected));
    for (auto& thread : threads) thread.join();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    if (report_failures() != 0) return 1;
    std::printf("%d threads x %d rounds of create / run / destroy (%d contexts) and failing creations: ok, %.2f s\n",
                kThreads, rounds, kThreads * rounds, seconds);
    return 0;
}
