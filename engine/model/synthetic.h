// Synthetic qwen35 models (niwa-engine mkmodel): the presets' geometry and a writer that
// produces a GGUF with exactly the published Ternary-Bonsai-2-27B layout and random weights.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "engine/gguf/gguf.h"
#include "engine/model/hparams.h"

namespace niwa::model {

struct SyntheticPreset {
    std::string name;  // tiny, small, 27b
    HParams hp;        // n_vocab included
    int hadamard_block = 0;
    int32_t first_special = 0;  // id of <|endoftext|>; 0: right after the learned tokens
};

// The named preset; throws std::invalid_argument naming the known ones.
SyntheticPreset synthetic_preset(const std::string& name);

struct SyntheticOptions {
    std::string preset = "tiny";
    uint64_t seed = 0;
    gguf::TensorType quant = gguf::TensorType::PQ2_0;  // or PTQ1_0
    bool rotated = true;                               // false: no prism.hadamard.* keys
    int threads = 1;
    // Called after each tensor with the bytes of tensor data written so far and in all.
    std::function<void(uint64_t done, uint64_t total)> progress;
};

// Writes the model to `path` (via path + ".tmp"). Throws on an unknown preset or I/O error.
void write_synthetic_model(const SyntheticOptions& options, const std::string& path);

}  // namespace niwa::model
