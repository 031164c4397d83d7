// One rank's caches in its backend's memory: the paged KV pool of every attention layer
// and the recurrent-state slots (conv + delta-rule state) of every GDN layer.
#pragma once

#include <vector>

#include "engine/model/hparams.h"
#include "engine/model/shard.h"
#include "kernels/ops.h"

namespace niwa::cache {

struct CacheShape {
    int n_blocks = 0;       // KV blocks per attention layer
    int block_tokens = 16;  // tokens per block
    int n_slots = 0;        // recurrent-state slots (sequences that can be resident)
};

class RankCache {
public:
    RankCache(const model::HParams& hp, const model::ShardPlan& plan, const CacheShape& shape,
              kernels::Ops& ops);
    ~RankCache();
    RankCache(const RankCache&) = delete;
    RankCache& operator=(const RankCache&) = delete;

    // Indexed by layer; entries of the other kind are empty.
    std::vector<kernels::KvLayer> kv;
    std::vector<kernels::GdnState> state;

    // Zeroes one slot's recurrent state in every GDN layer (a new sequence starts there).
    void clear_slot(int slot);
    size_t bytes() const { return bytes_; }

private:
    kernels::Ops& ops_;
    std::vector<void*> owned_;
    size_t conv_slot_bytes_ = 0, ssm_slot_bytes_ = 0;
    size_t bytes_ = 0;
};

}  // namespace niwa::cache
