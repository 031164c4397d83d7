#include "engine/model/model.h"

#include <algorithm>
#include <stdexcept>
#include <thread>

#include <spdlog/fmt/fmt.h>

#include "engine/model/layout.h"
#include "engine/runtime/log.h"
#include "kernels/devices.h"
#include "kernels/sample_draw.h"

namespace niwa::model {

// The step's logits rows from rank 0's alloc_host (page-locked on a GPU, so the downloads run at
// full speed; with unified addressing, for every GPU's download alike), kept across steps.
class Model::HostLogits {
public:
    explicit HostLogits(kernels::Ops& ops) : ops_(ops) {}
    ~HostLogits() { ops_.free_host(data_); }
    HostLogits(const HostLogits&) = delete;
    HostLogits& operator=(const HostLogits&) = delete;

    float* data() const { return data_; }
    // Room for at least n floats; what it held is not kept when it moves.
    void grow(size_t n) {
        if (n <= size_) return;
        float* p = static_cast<float*>(ops_.alloc_host(n * sizeof(float)));
        ops_.free_host(data_);
        data_ = p;
        size_ = n;
    }

private:
    kernels::Ops& ops_;
    float* data_ = nullptr;
    size_t size_ = 0;
};

struct Model::Rank {
    explicit Rank(std::unique_ptr<kernels::Ops> o) : ops(std::move(o)) {}
    std::unique_ptr<kernels::Ops> ops;
    ShardPlan plan;
    std::unique_ptr<RankWeights> weights;
    std::unique_ptr<cache::RankCache> cache;
    std::unique_ptr<RankForward> forward;
};

namespace {

// The GPU rank `rank` runs on: ranks go round the GPUs (-1: a host backend).
int device_of(const ModelConfig& cfg, int rank) {
    if (cfg.backend == "cpu") return -1;
    if (cfg.backend != "cuda")
        throw std::runtime_error("unknown backend '" + cfg.backend + "' (cpu or cuda)");
    if (!kernels::cuda_built())
        throw std::runtime_error(
            "--backend cuda: this niwa-engine was built without CUDA; use --backend cpu");
    const auto gpus = kernels::list_gpus();
    if (gpus.empty()) throw std::runtime_error("--backend cuda: no GPU found (check nvidia-smi)");
    return rank % int(gpus.size());
}

std::unique_ptr<kernels::Ops> make_ops(const ModelConfig& cfg, int device, int threads) {
    if (device < 0) return kernels::make_cpu_ops(threads);
    return kernels::make_cuda_ops(device, cfg.precision);
}

// The KV pool's element type: fp16 on a GPU in mixed precision (half the bytes attention
// reads, twice the tokens), fp32 for the exactness path and on the CPU (the oracle).
kernels::DType kv_type_of(const ModelConfig& cfg) {
    if (!known_kv_format(cfg.kv_format))
        throw std::runtime_error("KV format '" + cfg.kv_format +
                                 "': use auto, f32, f16, bf16, k8v8, k4v4 or k3v2");
    if (cfg.kv_format == "f32") return kernels::DType::F32;
    if (cfg.kv_format == "f16" || cfg.kv_format == "bf16") {
        if (cfg.backend != "cuda")
            throw std::runtime_error("--kv-format " + cfg.kv_format +
                                     " needs --backend cuda; the CPU backend keeps KV in f32");
        return cfg.kv_format == "f16" ? kernels::DType::F16 : kernels::DType::BF16;
    }
    const bool gpu_mixed = cfg.backend == "cuda" && cfg.precision == kernels::Precision::Mixed;
    return gpu_mixed ? kernels::DType::F16 : kernels::DType::F32;
}

constexpr size_t kGiB = size_t(1) << 30;
// Kept free on a GPU after planning: the CUDA context's growth, kernel workspaces that grow
// on first use (attention partials, matmul split-K partials, the prefill GEMM's fp16 weight
// slab of at most 128 MiB and fp16 copy of x, cuBLAS's own), the driver's own allocations.
constexpr size_t kGpuReserve = size_t(768) << 20;

}  // namespace

bool known_kv_format(const std::string& name) {
    return kv_format_implemented(name) || name == "k8v8" || name == "k4v4" || name == "k3v2";
}

bool kv_format_implemented(const std::string& name) {
    return name == "auto" || name == "f32" || name == "f16" || name == "bf16";
}

std::string kv_format_name(kernels::DType t) {
    return t == kernels::DType::F16 ? "f16" : t == kernels::DType::BF16 ? "bf16" : "f32";
}

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
    m->shape_.kv_type = kv_type_of(cfg);
    m->shape_.n_blocks = cfg.kv_blocks > 0
                             ? cfg.kv_blocks
                             : cfg.max_seqs * ((cfg.max_context + cfg.block_tokens - 1) / cfg.block_tokens);
    m->group_ = std::make_unique<runtime::LocalGroup>(cfg.tp);
    const int hw = int(std::max(1u, std::thread::hardware_concurrency()));
    const int threads = std::max(1, (cfg.threads > 0 ? cfg.threads : hw) / cfg.tp);
    const int blocks_for_context = (cfg.max_context + cfg.block_tokens - 1) / cfg.block_tokens;
    const auto build = [&](Rank& rank, int r, const cache::CacheShape& shape) {
        rank.ops->bind();
        rank.cache = std::make_unique<cache::RankCache>(hp, rank.plan, shape, *rank.ops);
        rank.forward = std::make_unique<RankForward>(hp, rank.plan, *rank.weights, *rank.cache, *rank.ops,
                                                     m->group_->rank(r), cfg.max_step_tokens, cfg.graphs);
    };
    m->memory_.ranks.resize(size_t(cfg.tp));
    m->memory_.block_tokens = cfg.block_tokens;
    for (int r = 0; r < cfg.tp; ++r) {
        m->memory_.ranks[size_t(r)].device = device_of(cfg, r);
        auto rank = std::make_unique<Rank>(make_ops(cfg, m->memory_.ranks[size_t(r)].device, threads));
        rank->ops->bind();
        rank->plan =
            ShardPlan::make(hp, m->prism_.enabled ? m->prism_.block : 0, m->prism_.gdn_v_grouped, r, cfg.tp);
        rank->weights = std::make_unique<RankWeights>(m->file_, hp, m->prism_, rank->plan, *rank->ops);
        m->memory_.ranks[size_t(r)].weights = rank->weights->bytes_copied;
        m->ranks_.push_back(std::move(rank));
    }
    m->logits_ = std::make_unique<HostLogits>(*m->ranks_[0]->ops);
    m->grow_logits(1);  // never null: the ranks offset into it even in a step that wants no logits

    // The KV pool: what the caller asked for, enough for max_seqs x max_context on the host,
    // or on a GPU whatever fills the budget once weights, state slots and scratch are in.
    m->shape_.n_blocks = cfg.kv_blocks > 0 ? cfg.kv_blocks : cfg.max_seqs * blocks_for_context;
    const bool device = !m->ranks_[0]->ops->host_memory();
    // The device group's buffers (NCCL) are not ours to count, so what it took from each card is
    // measured and planned around like our own (a --vram-limit card must hold them too).
    std::vector<size_t> group_bytes(size_t(cfg.tp), 0);
    if (device && cfg.tp > 1) {  // before the KV pool is sized
        std::vector<kernels::Ops*> ops;
        std::vector<size_t> free_before;
        for (auto& r : m->ranks_) {
            ops.push_back(r->ops.get());
            free_before.push_back(r->ops->memory_info().free);
        }
        std::string why, how;
        if (kernels::join_device_group(ops, &why, &how)) {
            for (int r = 0; r < cfg.tp; ++r) {
                const size_t after = m->ranks_[size_t(r)]->ops->memory_info().free;
                group_bytes[size_t(r)] = free_before[size_t(r)] > after ? free_before[size_t(r)] - after : 0;
            }
            log->info("tensor parallel: {} GPUs, all-reduce over NCCL ({:.0f} MiB a GPU); {}", cfg.tp,
                      double(*std::max_element(group_bytes.begin(), group_bytes.end())) / double(1 << 20),
                      how);
        } else
            log->warn(
                "tensor parallel: the {} ranks meet in host memory, every layer waiting on the host ({})",
                cfg.tp, why);
    }
    if (!device && cfg.vram_limit_gib > 0)
        log->warn(
            "--vram-limit applies to GPU backends; the {} backend sizes its KV pool for --max-seqs x "
            "--max-context",
            cfg.backend);
    if (device && cfg.kv_blocks <= 0) {
        if (!(cfg.mem_fraction > 0 && cfg.mem_fraction <= 1))
            throw std::runtime_error("--mem-fraction must be in (0, 1]");
        int64_t fit = INT64_MAX;
        for (int r = 0; r < cfg.tp; ++r) {
            Rank& rank = *m->ranks_[size_t(r)];
            build(rank, r,
                  {1, cfg.block_tokens, cfg.max_seqs,
                   m->shape_.kv_type});  // state, scratch, one KV block: measured
            rank.ops->synchronize();
            const kernels::Ops::MemoryInfo now = rank.ops->memory_info();
            const size_t card =
                cfg.vram_limit_gib > 0 ? size_t(cfg.vram_limit_gib * double(kGiB)) : now.total;
            const size_t budget = size_t(double(card) * cfg.mem_fraction);
            // Ours (weights, state, scratch, one KV block) and the device group's.
            const size_t used = now.allocated + group_bytes[size_t(r)];
            const size_t block = rank.cache->sequence_bytes(cfg.block_tokens) - rank.cache->sequence_bytes(0);
            const size_t room = std::min(budget > used + kGpuReserve ? budget - used - kGpuReserve : 0,
                                         now.free > kGpuReserve ? now.free - kGpuReserve : 0);
            fit = std::min<int64_t>(fit, int64_t(room / block) + 1);
            rank.forward.reset();
            rank.cache.reset();
            if (fit < blocks_for_context)
                throw std::runtime_error(fmt::format(
                    "GPU {}: after the weights ({:.2f} GiB), {} state slots and scratch ({:.2f} GiB in all) "
                    "the budget of {:.2f} GiB ({}% of {:.1f} GiB) leaves room for {} tokens of KV cache, "
                    "less than one --max-context of {}; raise --mem-fraction or --vram-limit, or lower "
                    "--max-seqs, --max-context or --step-tokens",
                    r, double(m->memory_.ranks[size_t(r)].weights) / double(kGiB), cfg.max_seqs,
                    double(used) / double(kGiB), double(budget) / double(kGiB), int(cfg.mem_fraction * 100),
                    double(card) / double(kGiB), std::max<int64_t>(0, fit) * cfg.block_tokens,
                    cfg.max_context));
            m->memory_.ranks[size_t(r)].budget = budget;
            m->memory_.ranks[size_t(r)].reserve = kGpuReserve;
        }
        m->shape_.n_blocks = int(std::min<int64_t>(fit, INT32_MAX / cfg.block_tokens));
    }
    m->memory_.kv_blocks = m->shape_.n_blocks;
    for (int r = 0; r < cfg.tp; ++r) {
        Rank& rank = *m->ranks_[size_t(r)];
        build(rank, r, m->shape_);
        MemoryPlan::Rank& mr = m->memory_.ranks[size_t(r)];
        mr.kv =
            rank.cache->sequence_bytes(cfg.block_tokens * m->shape_.n_blocks) - rank.cache->sequence_bytes(0);
        mr.state = rank.cache->bytes() - mr.kv;
        if (device) {
            const size_t used = rank.ops->memory_info().allocated;
            mr.scratch = used - std::min(used, mr.weights + rank.cache->bytes());
            log->info(
                "GPU {}: weights {:.2f} GiB, KV pool {:.2f} GiB ({} tokens), state {:.2f} GiB ({} slots), "
                "scratch {:.2f} GiB; budget {:.2f} GiB",
                r, double(mr.weights) / double(kGiB), double(mr.kv) / double(kGiB),
                int64_t(m->shape_.n_blocks) * cfg.block_tokens, double(mr.state) / double(kGiB), cfg.max_seqs,
                double(mr.scratch) / double(kGiB), double(mr.budget) / double(kGiB));
        }
    }
    log->info(
        "loaded {}: {} layers, hidden {}, vocab {}, {} Hadamard, tp {}, backend {}, KV {} blocks x {} tokens",
        path, hp.n_layer, hp.n_embd, hp.n_vocab,
        m->prism_.enabled ? "block " + std::to_string(m->prism_.block) : std::string("no"), cfg.tp,
        cfg.backend, m->shape_.n_blocks, m->shape_.block_tokens);
    return m;
}

std::span<float> Model::step(const StepPlan& step) {
    if (step.n_tokens() < 1 || step.n_tokens() > cfg_.max_step_tokens)
        throw std::runtime_error("a step carries 1.." + std::to_string(cfg_.max_step_tokens) +
                                 " tokens, got " + std::to_string(step.n_tokens()));
    const int rows = step.n_logit_rows();
    if (rows > logit_rows_) grow_logits(rows);
    // Each rank downloads its slice of the vocabulary straight into the full rows (one rank: the
    // whole rows, one contiguous download), the others on threads of their own.
    float* full = logits_->data();
    const int64_t vocab = hp_.n_vocab;
    const bool asked = !step.top_asks.empty();
    if (asked && int(step.top_asks.size()) != rows)
        throw std::logic_error("a step's top asks must be one per logit row");
    rank_tops_.resize(ranks_.size());
    for (auto& t : rank_tops_) t.resize(asked ? size_t(rows) : 0);
    const auto run = [&](size_t r) {
        Rank& rank = *ranks_[r];
        rank.forward->run(step, full + rank.plan.vocab.begin, vocab, asked ? rank_tops_[r].data() : nullptr);
    };
    std::vector<std::thread> threads;
    for (size_t r = 1; r < ranks_.size(); ++r) threads.emplace_back([&, r] { run(r); });
    run(0);
    for (auto& t : threads) t.join();
    last_rows_ = rows;
    tops_.resize(asked ? size_t(rows) : 0);
    if (asked) {
        // Each rank reduced its slice of the vocabulary: one rank's is the row, several merge.
        std::vector<kernels::TopLogits> parts(ranks_.size());
        std::vector<int32_t> offsets(ranks_.size());
        for (size_t r = 0; r < ranks_.size(); ++r) offsets[r] = int32_t(ranks_[r]->plan.vocab.begin);
        for (int i = 0; i < rows; ++i) {
            if (step.top_asks[size_t(i)].k <= 0) {
                tops_[size_t(i)] = {};
                continue;
            }
            if (ranks_.size() == 1) {
                tops_[size_t(i)] = std::move(rank_tops_[0][size_t(i)]);
                continue;
            }
            for (size_t r = 0; r < ranks_.size(); ++r) parts[r] = std::move(rank_tops_[r][size_t(i)]);
            tops_[size_t(i)] =
                kernels::merge_top_logits(parts, offsets, step.top_asks[size_t(i)].temperature);
        }
    }
    return {full, size_t(rows) * size_t(vocab)};
}

const kernels::TopLogits& Model::top_logits(int i) const {
    if (i < 0 || size_t(i) >= tops_.size() || tops_[size_t(i)].size == 0)  // a reduced row has a vocabulary
        throw std::logic_error("logit row " + std::to_string(i) + " was not reduced in the last step");
    return tops_[size_t(i)];
}

void Model::fetch_rows(const std::vector<int64_t>& rows) {
    for (int64_t i : rows)
        if (i < 0 || i >= last_rows_)
            throw std::logic_error("logit row " + std::to_string(i) + " is not among the last step's " +
                                   std::to_string(last_rows_));
    for (auto& r : ranks_) r->forward->fetch_rows(rows, logits_->data() + r->plan.vocab.begin, hp_.n_vocab);
}

// Page-locking memory is slow, so the buffer grows by doubling (a batch that ramps up one
// request at a time does not reallocate every step), up to the rows the largest step wants.
void Model::grow_logits(int rows) {
    const int held = std::max(rows, std::min(2 * logit_rows_, cfg_.max_step_tokens));
    logits_->grow(size_t(held) * size_t(hp_.n_vocab));
    logit_rows_ = held;
}

int64_t Model::replayed_steps() const {
    return ranks_.empty() ? 0 : ranks_[0]->forward->replayed_steps();
}

void Model::clear_slot(int slot) {
    if (slot < 0 || slot >= cfg_.max_seqs) throw std::runtime_error("state slot out of range");
    for (auto& r : ranks_) {
        r->ops->bind();
        r->cache->clear_slot(slot);
    }
}

size_t Model::park_bytes(int n_tokens) const {
    size_t n = 0;
    for (const auto& r : ranks_) n += r->cache->sequence_bytes(n_tokens);
    return n;
}

namespace {

void check_sequence(int slot, int n_slots, std::span<const int32_t> blocks, int n_blocks, int block_tokens,
                    int n_tokens) {
    if (slot < 0 || slot >= n_slots)
        throw std::runtime_error("state slot " + std::to_string(slot) + " out of range (0.." +
                                 std::to_string(n_slots - 1) + ")");
    if (n_tokens < 0 || int64_t(blocks.size()) * block_tokens < n_tokens)
        throw std::runtime_error(std::to_string(blocks.size()) + " KV blocks cannot hold " +
                                 std::to_string(n_tokens) + " tokens");
    for (int32_t b : blocks)
        if (b < 0 || b >= n_blocks)
            throw std::runtime_error("KV block " + std::to_string(b) + " out of range (0.." +
                                     std::to_string(n_blocks - 1) + ")");
}

}  // namespace

cache::ParkedSequence Model::park(int slot, std::span<const int32_t> blocks, int n_tokens) {
    check_sequence(slot, cfg_.max_seqs, blocks, shape_.n_blocks, shape_.block_tokens, n_tokens);
    cache::ParkedSequence p;
    p.n_tokens = n_tokens;
    p.bytes = park_bytes(n_tokens);
    p.data = cache::allocate_host(p.bytes);
    std::byte* at = p.data.get();
    for (auto& r : ranks_) {
        r->ops->bind();
        r->cache->save_sequence(slot, blocks, n_tokens, at);
        at += r->cache->sequence_bytes(n_tokens);
    }
    return p;
}

void Model::restore(const cache::ParkedSequence& parked, int slot, std::span<const int32_t> blocks) {
    check_sequence(slot, cfg_.max_seqs, blocks, shape_.n_blocks, shape_.block_tokens, parked.n_tokens);
    if (!parked.data || parked.bytes != park_bytes(parked.n_tokens))
        throw std::logic_error("a parked sequence of " + std::to_string(parked.n_tokens) +
                               " tokens has the wrong size for this model");
    const std::byte* at = parked.data.get();
    for (auto& r : ranks_) {
        r->ops->bind();
        r->cache->load_sequence(at, slot, blocks, parked.n_tokens);
        at += r->cache->sequence_bytes(parked.n_tokens);
    }
}

}  // namespace niwa::model
