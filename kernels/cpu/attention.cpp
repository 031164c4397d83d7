// kv_store and paged causal attention over the fp32 KV pool
// [n_blocks][block_tokens][n_kv_heads][head_dim]; softmax in fp32 with the max subtracted.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/cpu/cpu_ops.h"

namespace niwa::kernels::cpu {

namespace {

void check_pool(const KvLayer& kv, const char* op) {
    require(kv.type == DType::F32, op,
            std::string("KV pool of type ") + dtype_name(kv.type) + "; the CPU backend keeps it in F32");
    require(kv.block_tokens > 0 && kv.n_kv_heads > 0 && kv.head_dim > 0, op, "empty KV pool geometry");
}

// Sequence index of every token row of the step.
std::vector<int> seq_of_rows(const StepInfo& step, int64_t rows, const char* op) {
    std::vector<int> seq(static_cast<size_t>(rows), -1);
    for (int s = 0; s < step.n_seqs; ++s) {
        const SeqInfo& si = step.seqs[s];
        require(si.q_start >= 0 && si.n_q >= 0 && si.q_start + si.n_q <= rows, op,
                "sequence " + std::to_string(s) + " rows [" + std::to_string(si.q_start) + ", " +
                    std::to_string(si.q_start + si.n_q) + ") outside the step's " + std::to_string(rows));
        for (int i = 0; i < si.n_q; ++i) seq[si.q_start + i] = s;
    }
    return seq;
}

}  // namespace

void CpuOps::kv_store(const KvLayer& kv, const Tensor& k, const Tensor& v, const StepInfo& step) {
    check_pool(kv, "kv_store");
    require_f32(k, "kv_store", "k");
    require_f32(v, "kv_store", "v");
    const int64_t width = static_cast<int64_t>(kv.n_kv_heads) * kv.head_dim;
    require(k.cols == width && v.cols == width && k.rows >= step.n_tokens && v.rows >= step.n_tokens,
            "kv_store", "k/v rows must be [n_tokens, n_kv_heads * head_dim]");
    const int64_t n_slots = static_cast<int64_t>(kv.n_blocks) * kv.block_tokens;
    for (int t = 0; t < step.n_tokens; ++t) {
        const int64_t slot = step.kv_slots[t];
        require(slot >= 0 && slot < n_slots, "kv_store",
                "token " + std::to_string(t) + " slot " + std::to_string(slot) + " outside the pool of " +
                    std::to_string(n_slots));
        std::memcpy(static_cast<float*>(kv.k) + slot * width, row_f32(k, t), width * sizeof(float));
        std::memcpy(static_cast<float*>(kv.v) + slot * width, row_f32(v, t), width * sizeof(float));
    }
}

void CpuOps::attention(const Tensor& q, const KvLayer& kv, const int32_t* kv_of_q, float scale,
                       const StepInfo& step, const Tensor& out) {
    check_pool(kv, "attention");
    check_attention("cpu", q, kv, kv_of_q, out);
    const int d = kv.head_dim;
    const int64_t n_heads = q.cols / d;
    const std::vector<int> seq = seq_of_rows(step, q.rows, "attention");
    const int64_t token_width = static_cast<int64_t>(kv.n_kv_heads) * d;
    const auto* kpool = static_cast<const float*>(kv.k);
    const auto* vpool = static_cast<const float*>(kv.v);

    pool_.parallel_for(q.rows * n_heads, [&](int64_t i0, int64_t i1) {
        thread_local std::vector<float> scores;
        thread_local std::vector<float> acc;
        for (int64_t i = i0; i < i1; ++i) {
            const int64_t r = i / n_heads;
            const int64_t h = i % n_heads;
            float* o = row_f32(out, r) + h * d;
            if (seq[r] < 0) {  // a row no sequence owns (padding)
                std::fill(o, o + d, 0.0f);
                continue;
            }
            const SeqInfo& si = step.seqs[seq[r]];
            const int64_t pos = si.pos0 + (r - si.q_start);
            const float* qh = row_f32(q, r) + h * d;
            const int64_t kv_offset = static_cast<int64_t>(kv_of_q[h]) * d;
            auto cache_slot = [&](int64_t j) {
                const int64_t block = step.block_tables[si.table_start + j / kv.block_tokens];
                return (block * kv.block_tokens + j % kv.block_tokens) * token_width + kv_offset;
            };
            scores.resize(static_cast<size_t>(pos + 1));
            float max_score = -INFINITY;
            for (int64_t j = 0; j <= pos; ++j) {
                scores[j] = dot_f32(qh, kpool + cache_slot(j), d) * scale;
                max_score = std::max(max_score, scores[j]);
            }
            float sum = 0.0f;
            for (int64_t j = 0; j <= pos; ++j) {
                scores[j] = std::exp(scores[j] - max_score);
                sum += scores[j];
            }
            acc.assign(static_cast<size_t>(d), 0.0f);
            for (int64_t j = 0; j <= pos; ++j) {
                const float* vj = vpool + cache_slot(j);
                for (int c = 0; c < d; ++c) acc[c] += scores[j] * vj[c];
            }
            for (int c = 0; c < d; ++c) o[c] = acc[c] / sum;
        }
    });
}

}  // namespace niwa::kernels::cpu
