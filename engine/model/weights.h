// One rank's weights in its backend's memory: ternary matrices stay packed (views into the
// mapped file on host backends, shard copies elsewhere, where matrices reading the same input
// are stacked so one matmul serves them), small vectors as fp32.
#pragma once

#include <vector>

#include "engine/model/hparams.h"
#include "engine/model/prism.h"
#include "engine/model/shard.h"
#include "kernels/ops.h"

namespace niwa::gguf {
class Reader;
}

namespace niwa::model {

struct AttentionWeights {
    kernels::Weight q, k, v, out;  // q rows: per local head, 2 * head_dim (query then gate)
    kernels::Weight kv;            // k and v stacked (k, v are views of it); empty on host backends
    kernels::Weight qkv;           // q, k and v stacked (kv a view of its rows from k's), or empty
    const float* q_norm = nullptr;
    const float* k_norm = nullptr;
    kernels::Rotation in_rot, out_rot;  // for q/k/v's input and attn_output's input
};

struct GdnWeights {
    kernels::Weight qkv, gate, alpha, beta, out;  // qkv rows: [q local keys | k local keys | v local heads]
    kernels::Weight qkvz, ab;                     // qkv + gate and alpha + beta stacked, when they are
    const float* conv = nullptr;                  // [channels][kernel]
    const float* a = nullptr;                     // ssm_a = -exp(A_log), per local value head
    const float* dt_bias = nullptr;
    const float* norm = nullptr;  // ssm_norm (plain w)
    kernels::Rotation in_rot, out_rot;
};

struct LayerWeights {
    bool attention = false;
    const float* attn_norm = nullptr;
    const float* post_norm = nullptr;
    AttentionWeights attn;
    GdnWeights gdn;
    kernels::Weight ffn_gate, ffn_up, ffn_down;
    kernels::Weight ffn_gate_up;  // gate and up stacked (see RankWeights::Loader::stack), or empty
    kernels::Rotation ffn_in_rot, ffn_down_rot;
};

class RankWeights {
public:
    RankWeights(const gguf::Reader& file, const HParams& hp, const PrismRotation& prism,
                const ShardPlan& plan, kernels::Ops& ops);
    ~RankWeights();
    RankWeights(const RankWeights&) = delete;
    RankWeights& operator=(const RankWeights&) = delete;

    kernels::Weight embd;  // rows plan.vocab
    bool embd_inverse = false;
    kernels::Rotation embd_rot;
    const float* output_norm = nullptr;
    kernels::Weight output;  // rows plan.vocab
    kernels::Rotation output_rot;
    std::vector<LayerWeights> layers;
    size_t bytes_copied = 0;  // backend memory taken by copies (views into the file take none)

private:
    class Loader;
    kernels::Ops& ops_;
    std::vector<void*> owned_;
};

}  // namespace niwa::model
