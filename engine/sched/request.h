// One request as the scheduler sees it: its tokens (prompt, then what it generated), where
// its sequence lives (state slot, KV blocks) and how far the model has read it. Preemption
// keeps the tokens and either parks the caches in host RAM (the request resumes where it
// stopped) or drops them (it re-reads its tokens when it resumes).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/sched/engine.h"
#include "engine/sched/json_constraint.h"

namespace niwa::sched {

enum class Status { Waiting, Running, Preempted, Finished };

struct Request {
    uint64_t id = 0;              // also the arrival order: a larger id came later
    std::vector<int32_t> tokens;  // prompt, then generated tokens
    int prompt_len = 0;
    int max_tokens = 0;
    std::vector<int32_t> stop_ids;
    SamplingParams sampling;
    int priority = 0;     // lower runs first
    double arrival = 0;   // engine clock, seconds
    double enqueued = 0;  // when it last joined the waiting queue (arrival or preemption)

    Status status = Status::Waiting;
    int slot = -1;                // recurrent-state slot while running
    std::vector<int32_t> blocks;  // KV blocks while running; block i holds positions [i*bt, (i+1)*bt)
    int computed = 0;             // tokens whose KV and state the model has (a prefix of tokens)
    int parked = 0;               // while preempted: tokens whose KV and state wait in host RAM
    int64_t parked_bytes = 0;     // ...and the host bytes they take
    int preemptions = 0;
    int64_t preempted_step = -1;  // scheduler step of the last preemption
    uint64_t rng = 0;             // sampler state (splitmix64); survives preemption
    // response_format json_object: which tokens may come next (survives preemption too);
    // empty: unconstrained.
    std::shared_ptr<JsonConstraint> constraint;

    std::shared_ptr<Stream> stream;  // the engine's; empty in scheduler tests
    FinishInfo info;                 // filled as it runs
    double first_scheduled = -1;

    int generated() const { return int(tokens.size()) - prompt_len; }
    // Tokens the model must read before the next logits (1 when decoding).
    int remaining() const { return int(tokens.size()) - computed; }
};

}  // namespace niwa::sched
