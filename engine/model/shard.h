// How the model is split across the ranks of a tensor-parallel group. Row-parallel weights
// (attn_output, ssm_out, ffn_down) are split on their input side in whole Hadamard blocks
// (MODEL.md: the transform mixes a block, so a block cannot be cut); uneven splits are fine.
// Heads that straddle two ranks' blocks (KV heads, GDN key heads) are computed on both.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/model/hparams.h"

namespace niwa::model {

struct Range {
    int64_t begin = 0;
    int64_t end = 0;
    int64_t size() const { return end - begin; }
};

// [begin, end) of `n` units for `rank` of `world`: the first n % world ranks get one more.
Range split_even(int64_t n, int world, int rank);

struct ShardPlan {
    int rank = 0;
    int world = 1;
    Range vocab;                   // rows of token_embd and output
    Range ffn;                     // channels of ffn_gate/up rows and ffn_down input
    Range q_heads;                 // attention query heads
    Range kv_heads;                // KV heads the query heads read
    std::vector<int32_t> kv_of_q;  // local query head -> local KV head
    // GDN: local value heads in the order ssm_out reads them. v_tiled[i] is the head's index
    // in the file's tiled order; v_key[i] its local key head; k_heads the global key heads.
    Range v_in;  // the ssm_out input range, in value heads
    std::vector<int32_t> v_tiled;
    std::vector<int32_t> v_key;
    std::vector<int32_t> k_heads;

    // block: the Hadamard block size (0 for an unrotated file); gdn_v_grouped as in prism.
    static ShardPlan make(const HParams& hp, int block, bool gdn_v_grouped, int rank, int world);
};

}  // namespace niwa::model
