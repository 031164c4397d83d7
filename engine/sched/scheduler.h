// Decides each step: which requests run and how many of their tokens the model reads.
//
// - Continuous batching: requests join and leave between steps.
// - Chunked prefill: a step carries at most `step_tokens` tokens; decodes (one token each) go
//   first, prefill chunks fill the rest, so a long prompt never stalls the decoders.
// - Priorities: lower runs first. A waiting request's effective priority improves by
//   `aging_per_second` per second waited (so nothing starves). When the best waiting request
//   finds no seat or too few KV blocks and its effective priority, in whole levels, is better
//   than the worst running request's, that one is preempted (the newest among equals):
//   its seat and blocks are freed and its tokens kept. Whole levels: equal priorities wait a
//   full level (1 / aging_per_second seconds) before one may take another's seat, instead of
//   trading seats every step.
// - Park or recompute: a preempted request's caches (KV rows and recurrent state) are parked
//   in host RAM when copying them out and back is cheaper than re-reading its tokens (at the
//   prefill rate the engine measures) and they fit the park budget; it then resumes where it
//   stopped. Otherwise they are dropped and its tokens are re-read when it resumes.
// - No thrash: a request preempted less than `no_thrash_steps` steps ago is re-admitted only
//   into free room, never by preempting another.
// A request admitted to run holds KV blocks for all its tokens, so its prefill never waits
// for memory; decoding grows one block at a time, preempting the worst running request when
// the pool is empty.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/sched/block_manager.h"
#include "engine/sched/request.h"
#include "engine/sched/state_slots.h"

namespace niwa::sched {

// What parking costs. A sequence of n cached tokens takes state_bytes + token_bytes * n
// bytes of host RAM (Model::park_bytes), copied out at preemption and back at resumption.
struct ParkConfig {
    int64_t budget_bytes = 0;  // host RAM for all parked sequences; 0: always recompute
    int64_t state_bytes = 0;
    int64_t token_bytes = 0;
    // Assumed rate of one host <-> backend copy: conservative for a PCIe GPU with pageable
    // host memory (docs/BENCHMARKS.md has the rates measured on an H200).
    double copy_bytes_per_s = 3e9;
};

struct SchedulerConfig {
    int step_tokens = 256;
    int no_thrash_steps = 8;
    double aging_per_second = 0.1;
    ParkConfig park;
};

// n tokens of a request, from position req->computed.
struct Chunk {
    Request* req = nullptr;
    int n = 0;
    bool logits = false;  // the chunk reaches the last known token: sample the next one
};

// A preempted request whose caches go to host RAM: where they are until the step runs.
struct Parking {
    Request* req = nullptr;
    int slot = -1;
    std::vector<int32_t> blocks;
    int tokens = 0;
};

struct Step {
    int64_t index = 0;
    std::vector<Chunk> chunks;
    std::vector<Request*> admitted;   // took a state slot this step: clear it (or restore it) before use
    std::vector<Request*> restored;   // those of admitted that resume from host RAM: restore, not clear
    std::vector<Request*> preempted;  // lost their seat this step
    std::vector<Parking> parked;      // those of preempted to park: copy out before anything else
    int tokens() const;
};

class Scheduler {
public:
    Scheduler(SchedulerConfig cfg, BlockManager& blocks, StateSlots& slots);

    void add(Request* r, double now);  // joins the waiting queue
    void remove(Request* r);           // leaves for good (finished, cancelled, failed): frees all
    Step schedule(double now);         // the next step (empty when there is nothing to run)
    void complete(const Step& step);   // the model read the step's chunks
    // The engine's measured prefill rate (tokens a second; 0: not measured yet, park).
    void set_prefill_rate(double tokens_per_s) { prefill_rate_ = tokens_per_s; }
    // A parking of this step the engine could not make: the request re-reads its tokens
    // when it resumes.
    void park_failed(Request* r);

    double effective_priority(const Request& r, double now) const;
    const SchedulerConfig& config() const { return cfg_; }
    const std::vector<Request*>& running() const { return running_; }
    const std::vector<Request*>& waiting() const { return waiting_; }
    int64_t steps() const { return step_; }
    uint64_t preempted_total() const { return preempted_total_; }
    uint64_t parked_total() const { return parked_total_; }
    int parked_count() const { return parked_count_; }
    int64_t parked_bytes() const { return parked_bytes_; }

private:
    int level(const Request& r, double now) const;  // effective priority in whole levels
    void grow_running(Step& s, double now);
    int victims_for(const Request& c, double now, const std::vector<Request*>& admitted) const;
    void admit(Request* r, Step& s);
    void preempt(Request* r, Step& s, double now);
    bool parks(const Request& r) const;
    void forget_parked(Request* r);  // its parked caches are restored or gone
    int64_t park_bytes(int tokens) const { return cfg_.park.state_bytes + cfg_.park.token_bytes * tokens; }
    void plan_chunks(Step& s) const;

    SchedulerConfig cfg_;
    BlockManager& blocks_;
    StateSlots& slots_;
    std::vector<Request*> running_;  // kept best first: (priority, id)
    std::vector<Request*> waiting_;
    int64_t step_ = 0;
    uint64_t preempted_total_ = 0;
    uint64_t parked_total_ = 0;
    int parked_count_ = 0;
    int64_t parked_bytes_ = 0;
    double prefill_rate_ = 0;
};

}  // namespace niwa::sched
