// The CPU ops' thread pool (thread_pool.h).
#include "kernels/cpu/thread_pool.h"

#include <algorithm>

namespace niwa::kernels::cpu {

namespace {
thread_local bool t_inside_task = false;
}

ThreadPool::ThreadPool(int threads) {
    if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
    }
    wake_.notify_all();
    for (auto& t : workers_) t.join();
}

void ThreadPool::run_chunks(Job& job) {
    const bool was_inside = t_inside_task;
    t_inside_task = true;
    for (;;) {
        int64_t c;
        {
            std::lock_guard lock(mutex_);
            if (job.next >= job.n_chunks || job.error) break;
            c = job.next++;
        }
        const int64_t begin = c * job.chunk;
        const int64_t end = std::min(job.n, begin + job.chunk);
        try {
            (*job.fn)(begin, end);
        } catch (...) {
            std::lock_guard lock(mutex_);
            if (!job.error) job.error = std::current_exception();
        }
    }
    t_inside_task = was_inside;
}

void ThreadPool::worker_loop() {
    uint64_t seen = 0;
    for (;;) {
        Job* job;
        {
            std::unique_lock lock(mutex_);
            wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
            if (stop_) return;
            seen = generation_;
            job = job_;
        }
        run_chunks(*job);
        {
            std::lock_guard lock(mutex_);
            --busy_;
        }
        done_.notify_one();
    }
}

void ThreadPool::parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn, int64_t grain) {
    if (n <= 0) return;
    grain = std::max<int64_t>(grain, 1);
    // Inline when there is nothing to share, or when called from a task (no nested waits).
    if (workers_.empty() || t_inside_task || n <= grain) {
        fn(0, n);
        return;
    }
    std::lock_guard call_lock(call_mutex_);
    Job job;
    job.fn = &fn;
    job.n = n;
    // A few chunks per thread balances uneven work without much locking.
    const int64_t target_chunks = static_cast<int64_t>(size()) * 4;
    job.chunk = std::max(grain, (n + target_chunks - 1) / target_chunks);
    job.n_chunks = (n + job.chunk - 1) / job.chunk;
    {
        std::lock_guard lock(mutex_);
        job_ = &job;
        busy_ = static_cast<int>(workers_.size());
        ++generation_;
    }
    wake_.notify_all();
    run_chunks(job);
    {
        std::unique_lock lock(mutex_);
        done_.wait(lock, [&] { return busy_ == 0; });
        job_ = nullptr;
    }
    if (job.error) std::rethrow_exception(job.error);
}

}  // namespace niwa::kernels::cpu
