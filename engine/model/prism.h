// Prism's Hadamard fold metadata (MODEL.md "The Hadamard fold"): which weights store
// W·H·diag(s), the block size, and the ±1 sign vector for each input width.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace niwa::gguf {
class Reader;
class Writer;
}  // namespace niwa::gguf

namespace niwa::model {

struct PrismRotation {
    bool enabled = false;  // false: an unrotated file, run without the transform
    int block = 0;
    std::map<int64_t, std::vector<float>> signs;  // input width -> ±1 per channel
    std::set<std::string> folded;                 // weights stored as W·H·diag(s)
    std::set<std::string> inverse;                // weights stored the other way (the embedding)
    bool gdn_v_grouped = false;  // ssm_out reads value heads in grouped order (also in unrotated files)

    // Reads prism.hadamard.*; a file without them is unrotated. Throws on malformed metadata
    // (unknown version/transform/axis, signs that are not ±1, lengths that do not add up).
    static PrismRotation from_gguf(const gguf::Reader& r);
    void to_gguf(gguf::Writer& w) const;

    // Sign vector for an input width; throws naming the width when the file has none.
    const std::vector<float>& signs_for(int64_t width) const;
};

}  // namespace niwa::model
