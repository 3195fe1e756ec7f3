// The CPU backend's worker threads, created once with the context so that a call starts no
// threads. parallel_for hands out indices dynamically; results must not depend on which thread
// ran an index (every zyfa work item writes its own outputs), so output is bitwise reproducible.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace zyfa {
namespace cpu {

class WorkerPool {
public:
    explicit WorkerPool(int num_threads);  // 0 = all hardware threads
    ~WorkerPool();
    WorkerPool(const WorkerPool&) = delete;
    WorkerPool& operator=(const WorkerPool&) = delete;

    int size() const { return static_cast<int>(workers_.size()) + 1; }  // the caller works too
    // Runs body(i) for i in [0, count) on all threads; returns when all are done. Concurrent
    // callers are served one after the other. An exception from body is rethrown here.
    void parallel_for(int64_t count, const std::function<void(int64_t)>& body);

private:
    void worker_loop();
    void run_items();

    std::mutex call_mutex_;  // one parallel_for at a time
    std::mutex mutex_;
    std::condition_variable wake_;
    std::condition_variable done_;
    std::vector<std::thread> workers_;
    const std::function<void(int64_t)>* body_ = nullptr;
    int64_t count_ = 0;
    int64_t next_ = 0;
    int busy_ = 0;
    uint64_t generation_ = 0;
    bool stop_ = false;
    std::exception_ptr error_;
};

}  // namespace cpu
}  // namespace zyfa
