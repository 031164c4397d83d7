// Byte-pair merging of one pre-token: start from one token per byte and apply the
// lowest-ranked merge (leftmost on ties) until none applies. A linked list of symbols plus
// a heap of candidate pairs makes a word of n bytes O(n log n); results of short words are
// cached because text repeats its words.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace niwa::text {

class BpeMerger {
public:
    // `byte_token[b]` is the token of byte b alone.
    explicit BpeMerger(std::array<int32_t, 256> byte_token) : byte_token_(byte_token) {}

    // Merge `left` + `right` -> `merged`, at priority `rank` (lower first). A pair given twice
    // keeps its first (lowest) rank.
    void add_merge(int32_t left, int32_t right, int32_t merged, int32_t rank);
    size_t n_merges() const { return merges_.size(); }

    // Appends the tokens of `word` (raw bytes) to `out`. Thread-safe.
    void encode(std::string_view word, std::vector<int32_t>& out) const;

private:
    struct Merge {
        int32_t rank;
        int32_t merged;
    };
    static uint64_t key(int32_t left, int32_t right) {
        return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
    }
    const Merge* find(int32_t left, int32_t right) const;
    void merge_word(std::string_view word, std::vector<int32_t>& out) const;

    std::array<int32_t, 256> byte_token_;
    std::unordered_map<uint64_t, Merge> merges_;

    // Cache of word -> tokens. Cleared when full rather than evicting one by one: words
    // that matter come back at once, and the bound keeps a long-running server's memory flat.
    static constexpr size_t kCacheEntries = 1 << 16;
    static constexpr size_t kCacheWordBytes = 64;
    struct WordHash {  // lets the cache be searched with a string_view, without a copy
        using is_transparent = void;
        size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
    };
    mutable std::shared_mutex cache_mutex_;
    mutable std::unordered_map<std::string, std::vector<int32_t>, WordHash, std::equal_to<>> cache_;
};

}  // namespace niwa::text
