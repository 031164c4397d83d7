#include "engine/model/model.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "engine/model/layout.h"
#include "engine/runtime/log.h"

namespace niwa::model {

struct Model::Rank {
    std::unique_ptr<kernels::Ops> ops;
    ShardPlan plan;
    std::unique_ptr<RankWeights> weights;
    std::unique_ptr<cache::RankCache> cache;
    std::unique_ptr<RankForward> forward;
    std::vector<float> logits;  // [rows, plan.vocab.size()]
};

namespace {

std::unique_ptr<kernels::Ops> make_ops(const std::string& backend, int threads) {
    if (backend == "cpu") return kernels::make_cpu_ops(threads);
    throw std::runtime_error("unknown backend '" + backend + "' (this build has: cpu)");
}

}  // namespace

Model::Model(gguf::Reader file, const ModelConfig& cfg) : file_(std::move(file)), cfg_(cfg) {}

Model::~Model() = default;

std::unique_ptr<Model> Model::open(const std::string& path, const ModelConfig& cfg) {
    auto log = log::get("model");
    std::unique_ptr<Model> m(new Model(gguf::Reader::open(path), cfg));
    m->hp_ = HParams::from_gguf(m->file_);
    check_layout(m->file_, m->hp_);
    m->prism_ = PrismRotation::from_gguf(m->file_);
    if (cfg.tp < 1) throw std::runtime_error("--tp must be at least 1");
    if (cfg.max_seqs < 1 || cfg.max_step_tokens < 1)
        throw std::runtime_error("max seqs and step tokens must be positive");
    const HParams& hp = m->hp_;
    m->shape_.block_tokens = cfg.block_tokens;
    m->shape_.n_slots = cfg.max_seqs;
    m->shape_.n_blocks = cfg.kv_blocks > 0
                             ? cfg.kv_blocks
                             : cfg.max_seqs * ((cfg.max_context + cfg.block_tokens - 1) / cfg.block_tokens);
    m->group_ = std::make_unique<runtime::LocalGroup>(cfg.tp);
    const int hw = int(std::max(1u, std::thread::hardware_concurrency()));
    const int threads = std::max(1, (cfg.threads > 0 ? cfg.threads : hw) / cfg.tp);
    for (int r = 0; r < cfg.tp; ++r) {
        auto rank = std::make_unique<Rank>();
        rank->ops = make_ops(cfg.backend, threads);
        rank->plan =
            ShardPlan::make(hp, m->prism_.enabled ? m->prism_.block : 0, m->prism_.gdn_v_grouped, r, cfg.tp);
        rank->weights = std::make_unique<RankWeights>(m->file_, hp, m->prism_, rank->plan, *rank->ops);
        rank->cache = std::make_unique<cache::RankCache>(hp, rank->plan, m->shape_, *rank->ops);
        rank->forward = std::make_unique<RankForward>(hp, rank->plan, *rank->weights, *rank->cache,
                                                      *rank->ops, m->group_->rank(r), cfg.max_step_tokens);
        m->ranks_.push_back(std::move(rank));
    }
    log->info(
        "loaded {}: {} layers, hidden {}, vocab {}, {} Hadamard, tp {}, backend {}, KV {} blocks x {} tokens",
        path, hp.n_layer, hp.n_embd, hp.n_vocab,
        m->prism_.enabled ? "block " + std::to_string(m->prism_.block) : std::string("no"), cfg.tp,
        cfg.backend, m->shape_.n_blocks, m->shape_.block_tokens);
    return m;
}

std::vector<float> Model::step(const StepPlan& step) {
    if (step.n_tokens() < 1 || step.n_tokens() > cfg_.max_step_tokens)
        throw std::runtime_error("a step carries 1.." + std::to_string(cfg_.max_step_tokens) +
                                 " tokens, got " + std::to_string(step.n_tokens()));
    const int rows = step.n_logit_rows();
    for (auto& r : ranks_) r->logits.resize(size_t(rows) * size_t(r->plan.vocab.size()));
    if (ranks_.size() == 1) {
        ranks_[0]->forward->run(step, ranks_[0]->logits.data());
    } else {
        std::vector<std::thread> threads;
        for (size_t r = 1; r < ranks_.size(); ++r)
            threads.emplace_back([&, r] { ranks_[r]->forward->run(step, ranks_[r]->logits.data()); });
        ranks_[0]->forward->run(step, ranks_[0]->logits.data());
        for (auto& t : threads) t.join();
    }
    // Each rank holds a slice of the vocabulary: interleave them into full rows.
    const size_t vocab = size_t(hp_.n_vocab);
    std::vector<float> out(size_t(rows) * vocab);
    for (auto& r : ranks_) {
        const size_t n = size_t(r->plan.vocab.size());
        for (int i = 0; i < rows; ++i)
            std::memcpy(&out[size_t(i) * vocab + size_t(r->plan.vocab.begin)], &r->logits[size_t(i) * n],
                        n * sizeof(float));
    }
    return out;
}

void Model::clear_slot(int slot) {
    if (slot < 0 || slot >= cfg_.max_seqs) throw std::runtime_error("state slot out of range");
    for (auto& r : ranks_) r->cache->clear_slot(slot);
}

}  // namespace niwa::model
