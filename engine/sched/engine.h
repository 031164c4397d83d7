// The serving engine as the HTTP layer sees it: submit a request of token ids, read its
// tokens as they come, cancel it. Behind this, one loop thread runs the scheduler (continuous
// batching, chunked prefill, priority preemption) and the model, one step at a time.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace niwa::model {
class Model;
}

namespace niwa::sched {

class JsonConstraint;

struct SamplingParams {
    float temperature = 1.0f;  // <= 0: greedy
    int top_k = 0;             // 0: off
    float top_p = 1.0f;
    float min_p = 0.0f;
    float presence_penalty = 0.0f;
    float frequency_penalty = 0.0f;
    std::optional<uint64_t> seed;  // none: seeded from the request id
    int top_logprobs = -1;         // -1: no logprobs; 0..20: logprob of the token and this many alternatives
};

struct GenerateRequest {
    std::vector<int32_t> prompt;
    SamplingParams sampling;
    int max_tokens = 256;           // new tokens at most (the server clamps to the context)
    std::vector<int32_t> stop_ids;  // ending tokens (eos); the token is not emitted
    int priority = 0;               // lower runs first
    std::string client;             // API key name, for per-key limits and logs (never the key)
    // Output that must be one JSON object (response_format json_object); it ends as soon as
    // the object closes. Empty: unconstrained.
    std::shared_ptr<JsonConstraint> json;
};

struct TokenEvent {
    int32_t token = 0;
    float logprob = 0.0f;                        // when requested
    std::vector<std::pair<int32_t, float>> top;  // (token, logprob), best first
};

enum class FinishReason { None, Stop, Length, Cancelled, Error };

struct FinishInfo {
    FinishReason reason = FinishReason::None;
    std::string error;  // when reason == Error: what happened, for the client
    int prompt_tokens = 0;
    int completion_tokens = 0;
    int cached_prompt_tokens = 0;  // reused from a shared prefix
    int preemptions = 0;
    double queue_seconds = 0;        // submit -> first scheduled
    double first_token_seconds = 0;  // submit -> first token
    uint64_t submit_step = 0;        // EngineStats::steps_total when it was submitted...
    uint64_t first_token_step = 0;   // ...and the step that sampled its first token
};

// One request's handle. The engine pushes events; the server thread pops them. Thread-safe.
class Stream {
public:
    // Waits up to `timeout` for new tokens; appends them to `out`. Returns false once the
    // request has finished and every token has been taken (then finish() is final).
    bool next(std::vector<TokenEvent>& out, std::chrono::milliseconds timeout);
    // Stops the request as soon as possible (a client went away); its resources are freed by
    // the engine within a step.
    void cancel();
    bool cancelled() const;
    FinishInfo finish() const;
    uint64_t id() const { return id_; }

    // Engine side.
    explicit Stream(uint64_t id) : id_(id) {}
    void push(TokenEvent e);
    void close(FinishInfo f);

private:
    const uint64_t id_;
    mutable std::mutex mu_;
    std::condition_variable cv_;
    std::deque<TokenEvent> events_;
    FinishInfo finish_;
    bool closed_ = false;
    bool cancelled_ = false;
};

// Thrown by submit when the waiting queue is full (HTTP 429 with Retry-After).
class QueueFull : public std::runtime_error {
public:
    explicit QueueFull(double retry_after_s)
        : std::runtime_error("the server is busy: too many requests are waiting"),
          retry_after_s(retry_after_s) {}
    double retry_after_s;
};

// Thrown by submit for a request the engine can never run (prompt longer than the context
// or the KV pool): HTTP 400 with this message.
class RequestTooLarge : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct EngineConfig {
    int max_seqs = 8;               // sequences running at once (state slots)
    int max_waiting = 256;          // queue length before QueueFull
    int step_token_budget = 256;    // tokens per step (decode tokens + prefill chunk)
    int max_context = 4096;         // tokens per sequence (prompt + generated)
    int no_thrash_steps = 8;        // a preempted request is not re-admitted for this many steps...
    double aging_per_second = 0.1;  // ...and waiting requests gain this much priority per second
    // Host RAM for the caches of preempted requests (parking; see scheduler.h). 0: preemption
    // always recomputes; below 0: a quarter of the machine's physical RAM.
    int64_t park_memory_bytes = -1;
    double park_copy_bytes_per_s = 3e9;  // assumed host <-> backend copy rate, for park or recompute
};

// Counters and gauges for /metrics and /v1/engine/stats (a consistent snapshot).
struct EngineStats {
    int running = 0;
    int waiting = 0;
    uint64_t preempted_total = 0;
    uint64_t parked_total = 0;      // preemptions that parked the caches in host RAM
    int parked = 0;                 // requests waiting with parked caches
    int64_t parked_bytes = 0;       // host RAM they take
    int64_t park_budget_bytes = 0;  // host RAM they may take (0: parking off)
    int kv_blocks_total = 0;
    int kv_blocks_used = 0;
    int kv_block_tokens = 0;
    int64_t kv_tokens_used = 0;
    int slots_total = 0;
    int slots_used = 0;
    uint64_t prompt_tokens_total = 0;
    uint64_t generation_tokens_total = 0;
    uint64_t steps_total = 0;
    uint64_t requests_finished_total = 0;
    // Sampled rows drawn from their reduction on the device (Model::top_logits), and of those
    // the ones whose draw reached below it, so the whole row came back after all.
    uint64_t rows_reduced_total = 0;
    uint64_t rows_fetched_total = 0;
};

class Engine {
public:
    // Starts the loop thread over `model` (which must outlive the engine).
    Engine(model::Model& model, EngineConfig config);
    ~Engine();  // stops the loop; unfinished requests finish as Cancelled
    Engine(const Engine&) = delete;
    Engine& operator=(const Engine&) = delete;

    // Queues a request; throws QueueFull or RequestTooLarge. Never blocks on the model.
    std::shared_ptr<Stream> submit(GenerateRequest request);
    EngineStats stats() const;
    const EngineConfig& config() const;

private:
    class Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace niwa::sched
