// A loaded model: the mapped GGUF, its hyper-parameters, and one rank per tensor-parallel
// shard (weights, caches, forward) on the chosen backend. Runs one step at a time.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/cache/rank_cache.h"
#include "engine/gguf/reader.h"
#include "engine/model/forward.h"
#include "engine/model/hparams.h"
#include "engine/model/prism.h"

namespace niwa::model {

struct ModelConfig {
    std::string backend = "cpu";
    int tp = 1;                 // tensor-parallel ranks
    int threads = 0;            // CPU threads in all (0: all cores)
    int max_seqs = 4;           // recurrent-state slots
    int max_step_tokens = 256;  // tokens one step may carry (the prefill chunk)
    int block_tokens = 16;
    int kv_blocks = 0;  // KV blocks per layer; 0: enough for max_seqs x max_context
    int max_context = 4096;
};

class Model {
public:
    static std::unique_ptr<Model> open(const std::string& path, const ModelConfig& cfg);
    ~Model();

    const HParams& hparams() const { return hp_; }
    const PrismRotation& prism() const { return prism_; }
    const gguf::Reader& file() const { return file_; }
    const ModelConfig& config() const { return cfg_; }
    int kv_blocks() const { return shape_.n_blocks; }

    // Runs one step on every rank; returns logits [step.n_logit_rows(), n_vocab] (host).
    std::vector<float> step(const StepPlan& step);
    // Zeroes a state slot before a new sequence uses it.
    void clear_slot(int slot);

private:
    struct Rank;
    Model(gguf::Reader file, const ModelConfig& cfg);

    gguf::Reader file_;
    ModelConfig cfg_;
    HParams hp_;
    PrismRotation prism_;
    cache::CacheShape shape_;
    std::unique_ptr<runtime::LocalGroup> group_;
    std::vector<std::unique_ptr<Rank>> ranks_;
};

}  // namespace niwa::model
