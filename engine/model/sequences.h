// Drives a Model for the command line and tests: sequences with their position, state slot
// and KV blocks; prompts fed in steps of at most max_step_tokens (chunked prefill), several
// sequences batched into one step. Serving uses engine/sched instead.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/cache/block_allocator.h"
#include "engine/model/model.h"

namespace niwa::model {

class Sequences {
public:
    explicit Sequences(Model& m);

    int add();  // a new empty sequence (its id is its state slot); throws when all are in use
    void remove(int id);
    int length(int id) const { return int(seqs_.at(size_t(id)).pos); }
    const std::vector<int32_t>& blocks(int id) const { return seqs_.at(size_t(id)).blocks; }

    // Copies a sequence to host RAM (Model::park) and removes it; restore makes a new
    // sequence (lowest free slot, blocks from the pool) that goes on from where it stopped.
    cache::ParkedSequence park(int id);
    int restore(const cache::ParkedSequence& parked);

    struct Input {
        int seq;
        std::vector<int32_t> tokens;
    };
    // Appends each input's tokens to its sequence. Returns, per input, the logits after its
    // last token ([n_vocab]) or, with all_logits, after each of its tokens ([n, n_vocab]).
    std::vector<std::vector<float>> feed(const std::vector<Input>& inputs, bool all_logits = false);

private:
    struct Seq {
        bool used = false;
        int32_t pos = 0;
        std::vector<int32_t> blocks;
    };
    Model& m_;
    cache::BlockAllocator blocks_;
    std::vector<Seq> seqs_;
};

}  // namespace niwa::model
