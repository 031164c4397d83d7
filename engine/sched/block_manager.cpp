#include "engine/sched/block_manager.h"

#include <stdexcept>
#include <string>

namespace niwa::sched {

BlockManager::BlockManager(int n_blocks, int block_tokens)
    : block_tokens_(block_tokens), pool_(n_blocks), refs_(static_cast<size_t>(n_blocks), 0) {
    if (block_tokens < 1) throw std::invalid_argument("KV blocks must hold at least one token");
}

bool BlockManager::reserve(std::vector<int32_t>& blocks, int64_t tokens) {
    const int need = blocks_for(tokens) - int(blocks.size());
    if (need <= 0) return true;
    if (need > free()) return false;
    for (int i = 0; i < need; ++i) {
        const int32_t b = pool_.allocate();
        refs_[size_t(b)] = 1;
        blocks.push_back(b);
    }
    return true;
}

void BlockManager::release(std::vector<int32_t>& blocks) {
    for (int32_t b : blocks) {
        int& r = refs_.at(size_t(b));
        if (r <= 0)
            throw std::logic_error("KV block " + std::to_string(b) + " released more often than held");
        if (--r == 0) pool_.release(b);
    }
    blocks.clear();
}

void BlockManager::share(int32_t block) {
    int& r = refs_.at(size_t(block));
    if (r <= 0) throw std::logic_error("KV block " + std::to_string(block) + " is free and cannot be shared");
    ++r;
}

}  // namespace niwa::sched
