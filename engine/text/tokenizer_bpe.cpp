#include "engine/text/tokenizer_bpe.h"

#include <mutex>
#include <queue>

namespace niwa::text {

void BpeMerger::add_merge(int32_t left, int32_t right, int32_t merged, int32_t rank) {
    merges_.try_emplace(key(left, right), Merge{rank, merged});
}

const BpeMerger::Merge* BpeMerger::find(int32_t left, int32_t right) const {
    auto it = merges_.find(key(left, right));
    return it == merges_.end() ? nullptr : &it->second;
}

void BpeMerger::encode(std::string_view word, std::vector<int32_t>& out) const {
    if (word.size() == 1) {
        out.push_back(byte_token_[static_cast<unsigned char>(word[0])]);
        return;
    }
    if (word.size() > kCacheWordBytes) {
        merge_word(word, out);
        return;
    }
    {
        std::shared_lock lock(cache_mutex_);
        auto it = cache_.find(word);
        if (it != cache_.end()) {
            out.insert(out.end(), it->second.begin(), it->second.end());
            return;
        }
    }
    const size_t first = out.size();
    merge_word(word, out);
    std::unique_lock lock(cache_mutex_);
    if (cache_.size() >= kCacheEntries) cache_.clear();
    cache_.try_emplace(std::string(word), out.begin() + static_cast<std::ptrdiff_t>(first), out.end());
}

void BpeMerger::merge_word(std::string_view word, std::vector<int32_t>& out) const {
    const int n = static_cast<int>(word.size());
    // Symbol i starts at byte i; merged-away symbols have id -1. prev/next link the live ones.
    std::vector<int32_t> id(n);
    std::vector<int> prev(n), next(n);
    for (int i = 0; i < n; ++i) {
        id[i] = byte_token_[static_cast<unsigned char>(word[i])];
        prev[i] = i - 1;
        next[i] = i + 1 < n ? i + 1 : -1;
    }

    // A candidate remembers the ids it was made for, so a stale one (either side merged
    // since) is recognised and dropped when it comes up.
    struct Candidate {
        int32_t rank;
        int left;
        int32_t left_id, right_id;
        bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : left > o.left; }
    };
    std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> heap;
    auto consider = [&](int left) {
        if (left < 0 || next[left] < 0) return;
        const int right = next[left];
        if (const Merge* m = find(id[left], id[right])) heap.push({m->rank, left, id[left], id[right]});
    };
    for (int i = 0; i + 1 < n; ++i) consider(i);

    while (!heap.empty()) {
        const Candidate c = heap.top();
        heap.pop();
        const int right = next[c.left];
        if (id[c.left] != c.left_id || right < 0 || id[right] != c.right_id) continue;
        id[c.left] = find(c.left_id, c.right_id)->merged;
        id[right] = -1;
        next[c.left] = next[right];
        if (next[right] >= 0) prev[next[right]] = c.left;
        consider(prev[c.left]);
        consider(c.left);
    }
    for (int i = 0; i >= 0; i = next[i]) out.push_back(id[i]);
}

}  // namespace niwa::text
