// One rank's caches in its backend's memory: the paged KV pool of every attention layer
// and the recurrent-state slots (conv + delta-rule state) of every GDN layer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "engine/model/hparams.h"
#include "engine/model/shard.h"
#include "kernels/ops.h"

namespace niwa::cache {

struct CacheShape {
    int n_blocks = 0;                              // KV blocks per attention layer
    int block_tokens = 16;                         // tokens per block
    int n_slots = 0;                               // recurrent-state slots (sequences that can be resident)
    kernels::DType kv_type = kernels::DType::F32;  // KV pool elements: F32, F16 or BF16
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

    // One sequence's share of this rank's caches in host RAM: the KV rows of positions
    // [0, n_tokens) (read through its block table) and its state slot. Linear in n_tokens.
    size_t sequence_bytes(int n_tokens) const;
    // Copies that share to host `dst` (sequence_bytes(n_tokens) bytes) and back; the block
    // table and slot of load may differ from those of save.
    void save_sequence(int slot, std::span<const int32_t> blocks, int n_tokens, std::byte* dst);
    void load_sequence(const std::byte* src, int slot, std::span<const int32_t> blocks, int n_tokens);

private:
    // Calls fn(pool_row, seq_row, rows) for runs of a sequence's rows [0, n_tokens) that lie
    // contiguously in the pool (consecutive block ids make one run).
    template <typename Fn>
    void for_each_run(std::span<const int32_t> blocks, int n_tokens, Fn fn) const;

    kernels::Ops& ops_;
    std::vector<void*> owned_;
    size_t conv_slot_bytes_ = 0, ssm_slot_bytes_ = 0;
    size_t kv_row_bytes_ = 0;  // one token of one layer's K (or V): every KV head of this rank
    int block_tokens_ = 0;
    size_t bytes_ = 0;
};

}  // namespace niwa::cache
