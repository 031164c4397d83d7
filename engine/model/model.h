// A loaded model: the mapped GGUF, its hyper-parameters, and one rank per tensor-parallel
// shard (weights, caches, forward) on the chosen backend. Runs one step at a time.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/cache/parked_sequence.h"
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
    int kv_blocks = 0;  // KV blocks per layer; 0: planned (see Model::open)
    int max_context = 4096;
    // GPU backends: how the matmuls compute, and the memory planner's budget — the engine
    // fills mem_fraction of each card (of vram_limit_gib when > 0, to emulate a smaller card).
    kernels::Precision precision = kernels::Precision::Mixed;
    double mem_fraction = 0.90;
    double vram_limit_gib = 0.0;
    // Record small steps' launches once and replay them (CUDA graphs; see RankForward::run).
    bool graphs = true;
    // KV pool format: auto (f16 on a GPU in mixed precision, else f32), f32, f16, bf16; the
    // quantized k8v8, k4v4, k3v2 are accepted and run as auto until they exist.
    std::string kv_format = "auto";
};

bool known_kv_format(const std::string& name);
// Whether a --kv-format name is carried out as named (the quantized ones are not yet).
bool kv_format_implemented(const std::string& name);
// The --kv-format name of a pool element type ("f32", "f16", "bf16").
std::string kv_format_name(kernels::DType t);

// What the memory planner decided, per rank (one GPU each): bytes by use.
struct MemoryPlan {
    struct Rank {
        int device = -1;                                     // the GPU it runs on; -1: host memory
        size_t weights = 0, state = 0, scratch = 0, kv = 0;  // bytes in backend memory
        size_t budget = 0;   // what the planner aimed at (0: host memory, no plan)
        size_t reserve = 0;  // of the budget, left free for the CUDA context and workspaces
    };
    std::vector<Rank> ranks;
    int kv_blocks = 0;
    int block_tokens = 0;
    int64_t kv_tokens() const { return int64_t(kv_blocks) * block_tokens; }  // the pool's capacity
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
    kernels::DType kv_type() const { return shape_.kv_type; }
    const MemoryPlan& memory() const { return memory_; }

    // Runs one step on every rank; returns its logits [step.n_logit_rows(), n_vocab] in host
    // memory the model owns and reuses: valid until the next call of step(). The caller may
    // write into it (the sampler applies penalties in place).
    // Rows with a top ask (StepPlan::top_asks) are reduced where they were computed instead:
    // top_logits(i) holds row i's reduction, and its host row is left as it was until
    // fetch_rows brings it.
    std::span<float> step(const StepPlan& step);
    // The last step's reduction of logit row i (its ask's k > 0), over the whole vocabulary.
    const kernels::TopLogits& top_logits(int i) const;
    // The last step's logit rows listed, whole, into the span step() returned (reduced rows whose
    // draws reach below their candidates); valid until the next step.
    void fetch_rows(const std::vector<int64_t>& rows);
    // Steps rank 0 ran from a recording of their launches (ModelConfig::graphs).
    int64_t replayed_steps() const;
    // Zeroes a state slot before a new sequence uses it.
    void clear_slot(int slot);

    // Parking (preemption without recompute): the KV rows of a sequence's first n_tokens
    // positions in every attention layer and its recurrent state in every GDN layer, on every
    // rank, copied to host RAM and back. The caller owns blocks and slots: free them after
    // park; restore writes into the ones it is given, which may differ from the parked ones.
    size_t park_bytes(int n_tokens) const;  // host bytes of park(.., n_tokens)
    cache::ParkedSequence park(int slot, std::span<const int32_t> blocks, int n_tokens);
    void restore(const cache::ParkedSequence& parked, int slot, std::span<const int32_t> blocks);

private:
    struct Rank;
    Model(gguf::Reader file, const ModelConfig& cfg);
    class HostLogits;
    // Makes the logits buffer hold at least `rows` rows.
    void grow_logits(int rows);

    gguf::Reader file_;
    ModelConfig cfg_;
    HParams hp_;
    PrismRotation prism_;
    cache::CacheShape shape_;
    MemoryPlan memory_;
    std::unique_ptr<runtime::LocalGroup> group_;
    std::vector<std::unique_ptr<Rank>> ranks_;
    // The step's logits [logit_rows_, n_vocab], every rank's vocabulary slice downloaded straight
    // into its columns. After ranks_: freed while rank 0's Ops, which allocated it, still lives.
    std::unique_ptr<HostLogits> logits_;
    int logit_rows_ = 0;
    // The last step's reductions: each rank's slices, then the whole rows'.
    std::vector<std::vector<kernels::TopLogits>> rank_tops_;
    std::vector<kernels::TopLogits> tops_;
    int last_rows_ = 0;
};

}  // namespace niwa::model
