// The Qwen3.5 forward for one rank, written once against kernels/ops.h: embedding, 64
// hybrid decoder layers (Gated DeltaNet or gated full attention, then SwiGLU), final norm and
// this rank's slice of the logits. Ranks meet in all-reduces after each row-parallel matmul.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <set>
#include <vector>

#include "engine/cache/rank_cache.h"
#include "engine/model/hparams.h"
#include "engine/model/shard.h"
#include "engine/model/weights.h"
#include "engine/runtime/communicator.h"
#include "kernels/ops.h"

namespace niwa::model {

// A step as the host describes it: the sequences, their tokens, and which rows need logits.
struct StepPlan {
    std::vector<kernels::SeqInfo> seqs;
    std::vector<int32_t> tokens;        // [n_tokens]
    std::vector<int32_t> positions;     // [n_tokens]
    std::vector<int32_t> kv_slots;      // [n_tokens] KV slot of each token
    std::vector<int32_t> block_tables;  // concatenated, SeqInfo::table_start indexes it
    std::vector<Range> logit_rows;      // runs of rows whose logits are wanted, in order
    // Per logit row (or none: every row whole): an ask with k > 0 has the row reduced where it was
    // computed (Ops::top_logits) instead of brought back whole; Model::top_logits holds the result.
    std::vector<kernels::TopAsk> top_asks;

    int n_tokens() const { return int(tokens.size()); }
    int n_logit_rows() const;
};

class RankForward {
public:
    RankForward(const HParams& hp, const ShardPlan& plan, const RankWeights& w, cache::RankCache& cache,
                kernels::Ops& ops, runtime::Communicator& comm, int max_tokens, bool record_steps = true);
    ~RankForward();
    RankForward(const RankForward&) = delete;
    RankForward& operator=(const RankForward&) = delete;

    // Runs the step; writes this rank's logits, n_logit_rows rows of plan.vocab.size(), to host
    // memory at logits + i * ld for row i (ld = plan.vocab.size(): packed rows; ld = n_vocab with
    // logits at plan.vocab.begin: this rank's slice of the full rows every rank writes into).
    // A step of at most kMaxRecordedTokens tokens on one rank whose layout (rows per sequence,
    // logit rows, the backend's launch key) was seen before is replayed from a recording of
    // its launches (CUDA graphs) instead of issuing every op again.
    // Rows with a top ask are reduced instead (tops[i], this rank's slice; ids within the slice),
    // and their host rows left as they were, until fetch_rows brings them. The caller (Model::step)
    // checks that the asks are one per logit row, and fetch_rows' rows against them.
    void run(const StepPlan& step, float* logits, int64_t ld, kernels::TopLogits* tops = nullptr);
    // The last step's logit rows listed, this rank's slice, each to its host row (ld floats apart
    // from dst; rows run() reduced; a step of several chunks brought every row back whole, and
    // this does nothing).
    void fetch_rows(const std::vector<int64_t>& rows, float* dst, int64_t ld);
    static constexpr int kMaxRecordedTokens = 32;
    // Steps run from a recording so far (tests and stats).
    int64_t replayed_steps() const { return replayed_; }

private:
    kernels::Tensor buf(int64_t cols, int64_t rows = 0);
    void upload_step(const StepPlan& step);
    // The rows of a logits chunk to host rows ld floats apart; or only the rows listed.
    void download_logits(const kernels::Tensor& lg, float* dst, int64_t ld);
    void download_rows_at(const kernels::Tensor& lg, const std::vector<int64_t>& rows, float* dst,
                          int64_t ld);
    // A step's logit rows (one chunk): each reduced as step.top_asks says (into tops), or brought
    // back whole.
    void reduce_logits(const StepPlan& step, const kernels::Tensor& lg, float* dst, int64_t ld,
                       kernels::TopLogits* tops);
    // Everything up to this rank's first logits chunk: embedding, layers, final norm, output
    // rotation, and the output matmul of rows [0, first_chunk).
    void issue(const StepPlan& step, int64_t first_chunk);
    // Runs issue() from a recording when the step's layout allows it; false: not recordable.
    bool run_recorded(const StepPlan& step, int64_t first_chunk);
    // What a sublayer's first matmuls read: the normed rows rotated for its weights that
    // residual_norm made (xr; GDN also the plain ones, xn), or, where the backend norms inside
    // the matmuls (Ops::norms_in_matmuls), the residual stream as a ResidualNorm input (`norm`;
    // xr is then room to stage it, xn where GDN's first matmul leaves the plain rows).
    struct SublayerInput {
        kernels::Tensor xr, xn;
        kernels::RotatedInput norm;
        bool fused = false;
    };
    static const kernels::Rotation& input_rotation(const LayerWeights& L);
    // After a sublayer whose output is y (or was added to x already: fused, `squares` what the
    // add left): the input of the next, normed by w and rotated by r.
    SublayerInput next_input(const kernels::Tensor& y, const kernels::Tensor& squares, const float* w,
                             const kernels::Rotation& r);
    // y = in · Wᵀ.
    void input_matmul(const kernels::Weight& w, const SublayerInput& in, const kernels::Tensor& y);
    // y = in · [parts]ᵀ: one matmul when the parts are stacked in `stacked` (weights.h), else
    // one per part into consecutive column ranges of y.
    void stacked_matmul(const kernels::Weight& stacked, std::initializer_list<const kernels::Weight*> parts,
                        const SublayerInput& in, const kernels::Tensor& y);
    // A sublayer's output projection of `in`: into y, or with the norms in the matmuls added to
    // the residual stream x_ (returning what rotated_matmul_add left for the next norm).
    kernels::Tensor project(const kernels::Weight& w, const kernels::RotatedInput& in,
                            const kernels::Tensor& staged, const kernels::Tensor& y);
    // Each sublayer writes its output to y, or adds it to x_ (project); returns project's result.
    kernels::Tensor attention_layer(int il, const SublayerInput& in, const kernels::Tensor& y);
    kernels::Tensor gdn_layer(int il, const SublayerInput& in, const kernels::Tensor& y);
    kernels::Tensor ffn(int il, const SublayerInput& in, const kernels::Tensor& y);
    void all_reduce(const kernels::Tensor& t);
    // rows [0, n) of a scratch tensor
    static kernels::Tensor first(const kernels::Tensor& t, int64_t n) { return t.rows_view(0, n); }

    const HParams& hp_;
    const ShardPlan& plan_;
    const RankWeights& w_;
    cache::RankCache& cache_;
    kernels::Ops& ops_;
    runtime::Communicator& comm_;
    int max_tokens_;
    std::vector<void*> owned_;

    // Scratch activations, max_tokens rows each.
    kernels::Tensor x_, xn_, xr_, y_;
    kernels::Tensor qg_, q_, kv_, k_, o_, or_, qgkv_;   // attention (qgkv_: one token's q, k and v)
    kernels::Tensor qkvz_, conv_, ab_, qkn_, go_, gr_;  // GDN
    kernels::Tensor fgu_, fh_;                          // FFN
    kernels::Tensor logits_;
    int64_t logits_held_ = 0;  // rows of the last step's logits still in logits_ (fetch_rows)
    // Step metadata in backend memory.
    int32_t* d_tokens_ = nullptr;
    int32_t* d_positions_ = nullptr;
    int32_t* d_slots_ = nullptr;
    int32_t* d_tables_ = nullptr;
    size_t tables_cap_ = 0;
    kernels::SeqInfo* d_seqs_ = nullptr;
    size_t seqs_cap_ = 0;
    kernels::StepInfo info_;
    std::vector<kernels::SeqInfo> host_seqs_;
    std::vector<float> staging_;  // host copy for all-reduces of device tensors
    int n_tokens_ = 0;
    bool norms_in_matmuls_ = false;  // this step's (Ops::norms_in_matmuls, one rank)

    // Recordings by step layout; a layout is recorded the second time it is seen (the first
    // run grows the backend's workspaces, which must not move inside a recording).
    struct Recorded {
        std::unique_ptr<kernels::Ops::Recording> rec;  // nullptr: this layout does not record
        uint64_t epoch = 0;
    };
    bool record_steps_;
    std::map<std::vector<int64_t>, Recorded> recordings_;
    std::set<std::vector<int64_t>> seen_;
    int64_t replayed_ = 0;
};

}  // namespace niwa::model
