// Failures reported from many threads at once: counted, and the first 20 printed (a broken
// build would otherwise print one line per thread per iteration).
#pragma once

#include <atomic>
#include <cstdio>
#include <mutex>
#include <string>

namespace zyfa_concurrency {

inline std::atomic<int>& failure_count() {
    static std::atomic<int> count{0};
    return count;
}

inline void report(const std::string& what) {
    static std::mutex print_mutex;
    std::lock_guard<std::mutex> lock(print_mutex);
    if (failure_count().fetch_add(1) < 20) std::fprintf(stderr, "FAIL: %s\n", what.c_str());
}

// Prints the count and returns 1 when anything failed, else 0.
inline int report_failures() {
    const int failures = failure_count().load();
    if (failures != 0) std::fprintf(stderr, "%d failure(s)\n", failures);
    return failures != 0 ? 1 : 0;
}

}  // namespace zyfa_concurrency
