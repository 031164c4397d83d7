#include "engine/cache/rank_cache.h"

#include <algorithm>
#include <stdexcept>
#include <string>

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
    const size_t kv_elem = size_t(kernels::dtype_block_bytes(shape.kv_type));
    kv_row_bytes_ = size_t(n_kv) * size_t(hp.head_dim) * kv_elem;
    block_tokens_ = shape.block_tokens;
    const size_t kv_bytes = size_t(shape.n_blocks) * size_t(shape.block_tokens) * kv_row_bytes_;
    const int64_t channels =
        2 * int64_t(plan.k_heads.size()) * hp.ssm_d_state + int64_t(plan.v_tiled.size()) * hp.ssm_d_state;
    conv_slot_bytes_ = size_t(hp.ssm_conv_kernel - 1) * size_t(channels) * sizeof(float);
    ssm_slot_bytes_ = plan.v_tiled.size() * size_t(hp.ssm_d_state) * size_t(hp.ssm_d_state) * sizeof(float);
    kv.resize(size_t(hp.n_layer));
    state.resize(size_t(hp.n_layer));
    for (int il = 0; il < hp.n_layer; ++il) {
        if (hp.is_attention(il)) {
            kernels::KvLayer& L = kv[size_t(il)];
            L.type = shape.kv_type;
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

template <typename Fn>
void RankCache::for_each_run(std::span<const int32_t> blocks, int n_tokens, Fn fn) const {
    const int bt = block_tokens_;
    if (n_tokens < 0 || int64_t(blocks.size()) * bt < n_tokens)
        throw std::logic_error(std::to_string(blocks.size()) + " KV blocks cannot hold " +
                               std::to_string(n_tokens) + " tokens");
    int seq_row = 0;
    size_t i = 0;
    while (seq_row < n_tokens) {
        // A run: blocks[i..j) with consecutive ids; every block but the sequence's last is full.
        size_t j = i + 1;
        while (j < blocks.size() && blocks[j] == blocks[j - 1] + 1 && int64_t(j) * bt < n_tokens) ++j;
        const int rows = std::min(n_tokens - seq_row, int(j - i) * bt);
        fn(size_t(blocks[i]) * size_t(bt), size_t(seq_row), size_t(rows));
        seq_row += rows;
        i = j;
    }
}

size_t RankCache::sequence_bytes(int n_tokens) const {
    size_t n = 0;
    for (const kernels::KvLayer& L : kv)
        if (L.k) n += 2 * size_t(n_tokens) * kv_row_bytes_;
    for (const kernels::GdnState& S : state)
        if (S.conv) n += conv_slot_bytes_ + ssm_slot_bytes_;
    return n;
}

void RankCache::save_sequence(int slot, std::span<const int32_t> blocks, int n_tokens, std::byte* dst) {
    const size_t layer_rows = size_t(n_tokens) * kv_row_bytes_;
    for (const kernels::KvLayer& L : kv) {
        if (!L.k) continue;
        for (const void* pool : {L.k, L.v}) {
            const auto* base = static_cast<const std::byte*>(pool);
            for_each_run(blocks, n_tokens, [&](size_t pool_row, size_t seq_row, size_t rows) {
                ops_.download(dst + seq_row * kv_row_bytes_, base + pool_row * kv_row_bytes_,
                              rows * kv_row_bytes_);
            });
            dst += layer_rows;
        }
    }
    for (const kernels::GdnState& S : state) {
        if (!S.conv) continue;
        ops_.download(dst, reinterpret_cast<const std::byte*>(S.conv) + conv_slot_bytes_ * size_t(slot),
                      conv_slot_bytes_);
        dst += conv_slot_bytes_;
        ops_.download(dst, reinterpret_cast<const std::byte*>(S.ssm) + ssm_slot_bytes_ * size_t(slot),
                      ssm_slot_bytes_);
        dst += ssm_slot_bytes_;
    }
}

void RankCache::load_sequence(const std::byte* src, int slot, std::span<const int32_t> blocks, int n_tokens) {
    const size_t layer_rows = size_t(n_tokens) * kv_row_bytes_;
    for (const kernels::KvLayer& L : kv) {
        if (!L.k) continue;
        for (void* pool : {L.k, L.v}) {
            auto* base = static_cast<std::byte*>(pool);
            for_each_run(blocks, n_tokens, [&](size_t pool_row, size_t seq_row, size_t rows) {
                ops_.upload(base + pool_row * kv_row_bytes_, src + seq_row * kv_row_bytes_,
                            rows * kv_row_bytes_);
            });
            src += layer_rows;
        }
    }
    for (const kernels::GdnState& S : state) {
        if (!S.conv) continue;
        ops_.upload(reinterpret_cast<std::byte*>(S.conv) + conv_slot_bytes_ * size_t(slot), src,
                    conv_slot_bytes_);
        src += conv_slot_bytes_;
        ops_.upload(reinterpret_cast<std::byte*>(S.ssm) + ssm_slot_bytes_ * size_t(slot), src,
                    ssm_slot_bytes_);
        src += ssm_slot_bytes_;
    }
}

}  // namespace niwa::cache
