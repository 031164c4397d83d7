#include "engine/model/shard.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>

namespace niwa::model {

Range split_even(int64_t n, int world, int rank) {
    const int64_t base = n / world, extra = n % world;
    const int64_t begin = rank * base + std::min<int64_t>(rank, extra);
    return {begin, begin + base + (rank < extra ? 1 : 0)};
}

namespace {

// Heads per split unit: a unit is the smallest run of whole heads that is also whole
// Hadamard blocks (or one head when the file is unrotated).
int64_t heads_per_unit(int64_t head_dim, int block, int64_t n_heads, const char* what) {
    const int64_t unit = block > 0 ? std::lcm(int64_t(block), head_dim) : head_dim;
    const int64_t per = unit / head_dim;
    if (n_heads % per)
        throw std::runtime_error(std::string(what) + ": " + std::to_string(n_heads) +
                                 " heads do not fill whole Hadamard blocks of " + std::to_string(block));
    return per;
}

Range head_range(int64_t n_heads, int64_t per_unit, int world, int rank) {
    const Range u = split_even(n_heads / per_unit, world, rank);
    return {u.begin * per_unit, u.end * per_unit};
}

}  // namespace

ShardPlan ShardPlan::make(const HParams& hp, int block, bool gdn_v_grouped, int rank, int world) {
    if (world < 1 || rank < 0 || rank >= world) throw std::runtime_error("bad tensor-parallel rank");
    ShardPlan s;
    s.rank = rank;
    s.world = world;
    s.vocab = split_even(hp.n_vocab, world, rank);

    const int64_t ff_unit = block > 0 ? block : 128;
    if (hp.n_ff % ff_unit)
        throw std::runtime_error("feed_forward_length is not a multiple of the Hadamard block");
    const Range ffu = split_even(hp.n_ff / ff_unit, world, rank);
    s.ffn = {ffu.begin * ff_unit, ffu.end * ff_unit};

    // Attention: query heads by blocks of attn_output's input; the KV heads they read.
    const int64_t group = hp.n_head / hp.n_head_kv;
    s.q_heads =
        head_range(hp.n_head, heads_per_unit(hp.head_dim, block, hp.n_head, "attention"), world, rank);
    if (s.q_heads.size() > 0) {
        s.kv_heads = {s.q_heads.begin / group, (s.q_heads.end - 1) / group + 1};
        for (int64_t h = s.q_heads.begin; h < s.q_heads.end; ++h)
            s.kv_of_q.push_back(int32_t(h / group - s.kv_heads.begin));
    }

    // GDN: value heads by blocks of ssm_out's input, in the order ssm_out reads them.
    const int64_t nk = hp.ssm_n_k_heads, nv = hp.ssm_n_v_heads, ratio = nv / nk;
    s.v_in = head_range(nv, heads_per_unit(hp.ssm_d_state, block, nv, "GDN"), world, rank);
    std::vector<int32_t> keys;
    for (int64_t q = s.v_in.begin; q < s.v_in.end; ++q) {
        // Grouped head j uses key j / ratio and sits at tiled position (j % ratio) * nk + j / ratio;
        // tiled head t uses key t % nk.
        const int64_t tiled = gdn_v_grouped ? (q % ratio) * nk + q / ratio : q;
        s.v_tiled.push_back(int32_t(tiled));
        keys.push_back(int32_t(tiled % nk));
    }
    s.k_heads = keys;
    std::sort(s.k_heads.begin(), s.k_heads.end());
    s.k_heads.erase(std::unique(s.k_heads.begin(), s.k_heads.end()), s.k_heads.end());
    for (int32_t k : keys)
        s.v_key.push_back(
            int32_t(std::lower_bound(s.k_heads.begin(), s.k_heads.end(), k) - s.k_heads.begin()));
    return s;
}

}  // namespace niwa::model
