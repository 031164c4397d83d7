// Paged KV blocks with reference counts, over the pool of one Model. A request holds the
// blocks its tokens occupy; a block with more than one reference is shared and read-only.
//
// Prefix sharing (several requests reading one copy of a common prompt prefix) is not done:
// the KV of a prefix is not enough to resume after it, because every Gated DeltaNet layer's
// recurrent state is a function of the whole prefix and lives in the request's own state
// slot. Sharing needs a snapshot of that state at the end of the shared prefix, kept beside
// the shared blocks (docs/ARCHITECTURE.md, "Prefix sharing", has the design).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/cache/block_allocator.h"

namespace niwa::sched {

class BlockManager {
public:
    BlockManager(int n_blocks, int block_tokens);

    int block_tokens() const { return block_tokens_; }
    int total() const { return pool_.total(); }
    int free() const { return pool_.free_count(); }
    int used() const { return total() - free(); }
    int blocks_for(int64_t tokens) const { return int((tokens + block_tokens_ - 1) / block_tokens_); }

    // Grows `blocks` with fresh (unshared, writable) blocks until they hold `tokens` tokens.
    // Returns false, leaving `blocks` as it was, when the pool has too few free blocks.
    bool reserve(std::vector<int32_t>& blocks, int64_t tokens);
    // Drops one reference to each block (a block returns to the pool at zero) and clears `blocks`.
    void release(std::vector<int32_t>& blocks);
    // Adds a reference: the block is now shared, and no writer may be given it.
    void share(int32_t block);
    int refs(int32_t block) const { return refs_.at(size_t(block)); }

private:
    int block_tokens_;
    cache::BlockAllocator pool_;
    std::vector<int> refs_;
};

}  // namespace niwa::sched
