#include "engine/cache/block_allocator.h"

#include <stdexcept>
#include <string>

namespace niwa::cache {

BlockAllocator::BlockAllocator(int n_blocks) : n_(n_blocks) {
    for (int32_t i = 0; i < n_blocks; ++i) free_.insert(free_.end(), i);
}

int32_t BlockAllocator::allocate() {
    if (free_.empty())
        throw std::runtime_error("the KV cache is full (" + std::to_string(n_) +
                                 " blocks in use); use a shorter context or more KV memory");
    const int32_t b = *free_.begin();
    free_.erase(free_.begin());
    return b;
}

void BlockAllocator::release(int32_t block) {
    if (block < 0 || block >= n_ || !free_.insert(block).second)
        throw std::logic_error("KV block " + std::to_string(block) + " released twice or out of range");
}

}  // namespace niwa::cache
