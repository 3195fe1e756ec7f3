#include "worker_pool.hpp"

#include <string>
#include <system_error>

#include "core/errors.hpp"

namespace zyfa {
namespace cpu {

WorkerPool::WorkerPool(int num_threads) {
    int total = num_threads > 0 ? num_threads : static_cast<int>(std::thread::hardware_concurrency());
    if (total < 1) total = 1;
    int i = 1;  // thread 0 is the caller's
    try {
        workers_.reserve(static_cast<size_t>(total - 1));
        for (; i < total; ++i) workers_.emplace_back([this] { worker_loop(); });
    } catch (const std::system_error& error) {
        // A std::thread still joinable at destruction terminates the process: join those started.
        stop_and_join();
        throw Error(ZYFA_ERROR_OUT_OF_MEMORY, "could not start worker thread " + std::to_string(i) + " of " +
                                                  std::to_string(total) + ": " + error.code().message());
    } catch (...) {
        stop_and_join();  // std::bad_alloc (the thread's state or the vector) stays OUT_OF_MEMORY
        throw;
    }
}

WorkerPool::~WorkerPool() { stop_and_join(); }

void WorkerPool::stop_and_join() noexcept {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_ = true;
    }
    wake_.notify_all();
    for (auto& t : workers_) t.join();
    workers_.clear();
}

void WorkerPool::run_items() {
    int slot = -1;  // taken with the first item, so a call uses no more slots than it has items
    for (;;) {
        int64_t index;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (next_ >= count_ || error_) return;
            index = next_++;
            if (slot < 0) slot = slots_taken_++;
        }
        try {
            fn_(body_, index, slot);
        } catch (...) {
            std::lock_guard<std::mutex> lock(mutex_);
            if (!error_) error_ = std::current_exception();
        }
    }
}

void WorkerPool::worker_loop() {
    uint64_t seen = 0;
    for (;;) {
        {
            std::unique_lock<std::mutex> lock(mutex_);
            wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
            if (stop_) return;
            seen = generation_;
            ++busy_;
        }
        run_items();
        {
            std::lock_guard<std::mutex> lock(mutex_);
            --busy_;
        }
        done_.notify_all();
    }
}

void WorkerPool::run(int64_t count, ItemFn fn, const void* body) {
    if (count <= 0) return;
    std::lock_guard<std::mutex> call_lock(call_mutex_);
    {
        std::lock_guard<std::mutex> lock(mutex_);
        fn_ = fn;
        body_ = body;
        count_ = count;
        next_ = 0;
        slots_taken_ = 0;
        error_ = nullptr;
        ++generation_;
    }
    wake_.notify_all();
    run_items();
    std::exception_ptr error;
    {
        std::unique_lock<std::mutex> lock(mutex_);
        // Workers that have not woken yet find no items left; wait only for those still running.
        done_.wait(lock, [&] { return busy_ == 0 && (next_ >= count_ || error_); });
        fn_ = nullptr;
        body_ = nullptr;
        next_ = count_ = 0;  // a worker that wakes late finds nothing to run
        error = error_;
        error_ = nullptr;
    }
    if (error) std::rethrow_exception(error);
}

}  // namespace cpu
}  // namespace zyfa
