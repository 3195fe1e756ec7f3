// 16 threads share one CPU context and each runs its own problem (different dtype, mask, shape,
// packing, operation) for many iterations, checking every result bitwise against the result the
// same problem gave single-threaded on a separate one-worker context. Every other iteration a
// thread also sends a malformed request that names a value unique to it and checks that the call
// fails, writes nothing, and that zyfa_last_error_message (thread-local) names that value and not
// another thread's. One bad request must not corrupt another request's output.
//   shared_context_test [iterations]   (default 200; env ZYFA_CONCURRENCY_ITERATIONS overrides)
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "concurrency_problems.hpp"
#include "failure_report.hpp"

using namespace zyfa_concurrency;

namespace {

constexpr int kThreads = 16;

// All threads start their loops together, so calls overlap from the first iteration.
class StartLine {
public:
    void wait() {
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait(lock, [&] { return open_; });
    }
    void open() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            open_ = true;
        }
        cv_.notify_all();
    }

private:
    std::mutex mutex_;
    std::condition_variable cv_;
    bool open_ = false;
};

void worker(int t, zyfa_context* shared, Problem& problem, const std::vector<uint8_t>& expected, int iterations,
            StartLine& start) {
    start.wait();
    const int64_t marker = 1000 + t;  // unique per thread: "1003" is no substring of another marker
    for (int it = 0; it < iterations && failure_count().load() == 0; ++it) {
        const zyfa_status status = problem.run(shared);
        if (status != ZYFA_SUCCESS) {
            report(problem.describe() + ": iteration " + std::to_string(it) + " failed: " + zyfa_last_error_message());
            return;
        }
        if (problem.outputs() != expected) {
            report(problem.describe() + ": iteration " + std::to_string(it) +
                   " differs from the single-threaded result");
            return;
        }
        if (it % 2 == 1) {
            const zyfa_status bad = problem.run_malformed(shared, marker);
            const std::string message = zyfa_last_error_message();
            if (bad != ZYFA_ERROR_INVALID_ARGUMENT) {
                report(problem.describe() + ": malformed request returned " + std::to_string(bad));
            } else if (message.find(std::to_string(marker)) == std::string::npos) {
                report(problem.describe() + ": thread " + std::to_string(t) + " sees another message: " + message);
            } else if (!problem.outputs_untouched()) {
                report(problem.describe() + ": a failed call wrote its outputs");
            }
        }
    }
}

}  // namespace

int main(int argc, char** argv) {
    const int iterations_per_thread = zyfa_concurrency::iterations(argc > 1 ? std::atoi(argv[1]) : 200);

    // Reference results: one problem at a time on a one-worker context.
    std::vector<std::unique_ptr<Problem>> problems;
    std::vector<std::vector<uint8_t>> expected;
    zyfa_context* single = cpu_context(1);
    if (single == nullptr) {
        std::fprintf(stderr, "cannot create a CPU context: %s\n", zyfa_last_error_message());
        return 1;
    }
    for (int t = 0; t < kThreads; ++t) {
        problems.push_back(std::make_unique<Problem>(t));
        if (problems[t]->run(single) != ZYFA_SUCCESS) {
            std::fprintf(stderr, "%s: reference run failed: %s\n", problems[t]->describe().c_str(),
                         zyfa_last_error_message());
            return 1;
        }
        expected.push_back(problems[t]->outputs());
    }
    zyfa_context_destroy(single);

    // The shared context: as many workers as the machine has (0), as a server would create it.
    zyfa_context* shared = cpu_context(0);
    if (shared == nullptr) return 1;
    StartLine start;
    std::vector<std::thread> threads;
    const auto begin = std::chrono::steady_clock::now();
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back(worker, t, shared, std::ref(*problems[t]), std::cref(expected[t]), iterations_per_thread,
                             std::ref(start));
    }
    start.open();
    for (auto& thread : threads) thread.join();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    zyfa_context_destroy(shared);

    if (report_failures() != 0) return 1;
    std::printf("%d threads x %d iterations on one context (+ %d malformed requests per thread): all bitwise equal "
                "to the single-threaded results, %.2f s\n",
                kThreads, iterations_per_thread, iterations_per_thread / 2, seconds);
    return 0;
}
