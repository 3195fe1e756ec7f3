// The CPU backend's worker threads, created once with the context so that a call starts no
// threads. parallel_for hands out indices dynamically; results must not depend on which thread
// ran an index (every zyfa work item writes its own outputs), so output is bitwise reproducible.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace zyfa {
namespace cpu {

class WorkerPool {
public:
    // 0 = all hardware threads. A thread that cannot start throws Error(OUT_OF_MEMORY) after the
    // threads already started are joined.
    explicit WorkerPool(int num_threads);
    ~WorkerPool();
    WorkerPool(const WorkerPool&) = delete;
    WorkerPool& operator=(const WorkerPool&) = delete;

    int size() const { return static_cast<int>(workers_.size()) + 1; }  // the caller works too

    // Runs body(index, slot) for index in [0, count) on all threads; returns when all are done.
    // slot, in [0, slot_count(count)), names the thread running the item and is unique among the
    // threads of this call, so the caller can give each slot scratch acquired before the call.
    // Concurrent callers are served one after the other. An exception from body is rethrown
    // here. Neither this nor the pool allocates: body is referenced, never copied.
    template <class Body>
    void parallel_for(int64_t count, const Body& body) {
        run(count, [](const void* b, int64_t index, int slot) { (*static_cast<const Body*>(b))(index, slot); },
            &body);
    }
    // How many slots a parallel_for of count items uses: no more threads than items.
    int slot_count(int64_t count) const { return count < size() ? static_cast<int>(count > 0 ? count : 0) : size(); }

private:
    using ItemFn = void (*)(const void* body, int64_t index, int slot);

    void run(int64_t count, ItemFn fn, const void* body);
    void worker_loop();
    void run_items();
    void stop_and_join() noexcept;

    std::mutex call_mutex_;  // one parallel_for at a time
    std::mutex mutex_;
    std::condition_variable wake_;
    std::condition_variable done_;
    std::vector<std::thread> workers_;
    ItemFn fn_ = nullptr;
    const void* body_ = nullptr;
    int64_t count_ = 0;
    int64_t next_ = 0;
    int slots_taken_ = 0;
    int busy_ = 0;
    uint64_t generation_ = 0;
    bool stop_ = false;
    std::exception_ptr error_;
};

}  // namespace cpu
}  // namespace zyfa
