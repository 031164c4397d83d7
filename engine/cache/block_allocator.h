// Hands out KV block ids from a fixed pool (lowest free id first, so runs are reproducible).
#pragma once

#include <cstdint>
#include <set>

namespace niwa::cache {

class BlockAllocator {
public:
    explicit BlockAllocator(int n_blocks);
    int32_t allocate();  // throws std::runtime_error when the pool is exhausted
    void release(int32_t block);
    int free_count() const { return int(free_.size()); }
    int total() const { return n_; }

private:
    int n_;
    std::set<int32_t> free_;
};

}  // namespace niwa::cache
