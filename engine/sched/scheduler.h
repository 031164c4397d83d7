// Decides each step: which requests run and how many of their tokens the model reads.
//
// - Continuous batching: requests join and leave between steps.
// - Chunked prefill: a step carries at most `step_tokens` tokens; decodes (one token each) go
//   first, prefill chunks fill the rest, so a long prompt never stalls the decoders.
// - Priorities: lower runs first. A waiting request's effective priority improves by
//   `aging_per_second` per second waited (so nothing starves). When the best waiting request
//   finds no seat or too few KV blocks and its effective priority, in whole levels, is better
//   than the worst running request's, that one is preempted (the newest among equals):
//   its seat and blocks are freed and its tokens kept, to be re-read when it resumes. Whole
//   levels: equal priorities wait a full level (1 / aging_per_second seconds) before one may
//   take another's seat, instead of trading seats every step.
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

struct SchedulerConfig {
    int step_tokens = 256;
    int no_thrash_steps = 8;
    double aging_per_second = 0.1;
};

// n tokens of a request, from position req->computed.
struct Chunk {
    Request* req = nullptr;
    int n = 0;
    bool logits = false;  // the chunk reaches the last known token: sample the next one
};

struct Step {
    int64_t index = 0;
    std::vector<Chunk> chunks;
    std::vector<Request*> admitted;   // took a state slot this step: clear it before use
    std::vector<Request*> preempted;  // lost their seat this step
    int tokens() const;
};

class Scheduler {
public:
    Scheduler(SchedulerConfig cfg, BlockManager& blocks, StateSlots& slots);

    void add(Request* r, double now);  // joins the waiting queue
    void remove(Request* r);           // leaves for good (finished, cancelled, failed): frees all
    Step schedule(double now);         // the next step (empty when there is nothing to run)
    void complete(const Step& step);   // the model read the step's chunks

    double effective_priority(const Request& r, double now) const;
    const std::vector<Request*>& running() const { return running_; }
    const std::vector<Request*>& waiting() const { return waiting_; }
    int64_t steps() const { return step_; }
    uint64_t preempted_total() const { return preempted_total_; }

private:
    int level(const Request& r, double now) const;  // effective priority in whole levels
    void grow_running(Step& s, double now);
    int victims_for(const Request& c, double now, const std::vector<Request*>& admitted) const;
    void admit(Request* r, Step& s);
    void preempt(Request* r, Step& s, double now);
    void plan_chunks(Step& s) const;

    SchedulerConfig cfg_;
    BlockManager& blocks_;
    StateSlots& slots_;
    std::vector<Request*> running_;  // kept best first: (priority, id)
    std::vector<Request*> waiting_;
    int64_t step_ = 0;
    uint64_t preempted_total_ = 0;
};

}  // namespace niwa::sched
