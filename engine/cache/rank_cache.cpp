#include "engine/cache/rank_cache.h"

namespace niwa::cache {

RankCache::RankCache(const model::HParams& hp, const model::ShardPlan& plan, const CacheShape& shape,
                     kernels::Ops& ops)
    : ops_(ops) {
    auto alloc = [&](size_t bytes) {
        void* p = ops_.alloc(bytes);
        ops_.zero(p, bytes);
        owned_.push_back(p);
        bytes_ += bytes;
        return p;
    };
    const int64_t n_kv = plan.kv_heads.size();
    const size_t kv_bytes = size_t(shape.n_blocks) * size_t(shape.block_tokens) * size_t(n_kv) *
                            size_t(hp.head_dim) * sizeof(float);
    const int64_t channels =
        2 * int64_t(plan.k_heads.size()) * hp.ssm_d_state + int64_t(plan.v_tiled.size()) * hp.ssm_d_state;
    conv_slot_bytes_ = size_t(hp.ssm_conv_kernel - 1) * size_t(channels) * sizeof(float);
    ssm_slot_bytes_ = plan.v_tiled.size() * size_t(hp.ssm_d_state) * size_t(hp.ssm_d_state) * sizeof(float);
    kv.resize(size_t(hp.n_layer));
    state.resize(size_t(hp.n_layer));
    for (int il = 0; il < hp.n_layer; ++il) {
        if (hp.is_attention(il)) {
            kernels::KvLayer& L = kv[size_t(il)];
            L.type = kernels::DType::F32;
            L.n_blocks = shape.n_blocks;
            L.block_tokens = shape.block_tokens;
            L.n_kv_heads = int(n_kv);
            L.head_dim = hp.head_dim;
            L.k = alloc(kv_bytes);
            L.v = alloc(kv_bytes);
        } else {
            kernels::GdnState& S = state[size_t(il)];
            S.n_slots = shape.n_slots;
            S.conv = static_cast<float*>(alloc(conv_slot_bytes_ * size_t(shape.n_slots)));
            S.ssm = static_cast<float*>(alloc(ssm_slot_bytes_ * size_t(shape.n_slots)));
        }
    }
}

RankCache::~RankCache() {
    for (void* p : owned_) ops_.free(p);
}

void RankCache::clear_slot(int slot) {
    for (kernels::GdnState& S : state) {
        if (!S.conv) continue;
        ops_.zero(reinterpret_cast<char*>(S.conv) + conv_slot_bytes_ * size_t(slot), conv_slot_bytes_);
        ops_.zero(reinterpret_cast<char*>(S.ssm) + ssm_slot_bytes_ * size_t(slot), ssm_slot_bytes_);
    }
}

}  // namespace niwa::cache
