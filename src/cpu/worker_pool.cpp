#include "worker_pool.hpp"

#include <exception>

namespace zyfa {
namespace cpu {

WorkerPool::WorkerPool(int num_threads) {
    int total = num_threads > 0 ? num_threads : static_cast<int>(std::thread::hardware_concurrency());
    if (total < 1) total = 1;
    workers_.reserve(static_cast<size_t>(total - 1));
    for (int i = 1; i < total; ++i) workers_.emplace_back([this] { worker_loop(); });
}

WorkerPool::~WorkerPool() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_ = true;
    }
    wake_.notify_all();
    for (auto& t : workers_) t.join();
}

void WorkerPool::run_items() {
    for (;;) {
        int64_t index;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (next_ >= count_ || error_) return;
            index = next_++;
        }
        try {
            (*body_)(index);
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

void WorkerPool::parallel_for(int64_t count, const std::function<void(int64_t)>& body) {
    if (count <= 0) return;
    std::lock_guard<std::mutex> call_lock(call_mutex_);
    {
        std::lock_guard<std::mutex> lock(mutex_);
        body_ = &body;
        count_ = count;
        next_ = 0;
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
        body_ = nullptr;
        next_ = count_ = 0;  // a worker that wakes late finds nothing to run
        error = error_;
        error_ = nullptr;
    }
    if (error) std::rethrow_exception(error);
}

}  // namespace cpu
}  // namespace zyfa
