// A small persistent thread pool for the CPU ops: parallel_for over an index range, the
// calling thread working too. Idle workers sleep on a condition variable (no spinning).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace niwa::kernels::cpu {

class ThreadPool {
public:
    // `threads` threads in all, the caller included; 0 means hardware concurrency.
    explicit ThreadPool(int threads);
    ~ThreadPool();
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    int size() const { return static_cast<int>(workers_.size()) + 1; }

    // Calls fn(begin, end) on disjoint ranges covering [0, n), each at least `grain` long
    // (but the last). Returns when all are done; rethrows the first exception. A call from
    // inside a task runs inline, and concurrent callers take turns.
    void parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn, int64_t grain = 1);

private:
    struct Job {
        const std::function<void(int64_t, int64_t)>* fn = nullptr;
        int64_t n = 0;
        int64_t chunk = 1;
        int64_t n_chunks = 0;
        int64_t next = 0;  // next chunk to take, under mutex_
        std::exception_ptr error;
    };

    void worker_loop();
    void run_chunks(Job& job);

    std::vector<std::thread> workers_;
    std::mutex call_mutex_;  // one parallel_for at a time
    std::mutex mutex_;
    std::condition_variable wake_;
    std::condition_variable done_;
    Job* job_ = nullptr;
    uint64_t generation_ = 0;
    int busy_ = 0;  // workers still inside the current job
    bool stop_ = false;
};

}  // namespace niwa::kernels::cpu
