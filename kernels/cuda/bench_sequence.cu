// Synthetic decode steps timed with CUDA events (see bench_sequence.h).
#include "kernels/cuda/bench_sequence.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <cuda_fp16.h>

#include "kernels/cuda/cuda_ops.h"

namespace niwa::kernels::cuda {

double time_calls(CudaOps& ops, int iters, const std::function<void()>& f) {
    f();
    cudaEvent_t start, stop;
    NIWA_CUDA_CHECK(cudaEventCreate(&start));
    NIWA_CUDA_CHECK(cudaEventCreate(&stop));
    NIWA_CUDA_CHECK(cudaEventRecord(start, ops.stream()));
    for (int i = 0; i < iters; ++i) f();
    NIWA_CUDA_CHECK(cudaEventRecord(stop, ops.stream()));
    NIWA_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0.0f;
    NIWA_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    return double(ms) * 1e-3 / std::max(iters, 1);
}

namespace {

// x[i] = lo + (hi - lo) * hash(i, seed) / 2^32: deterministic, never NaN.
template <typename T>
__global__ void fill_kernel(T* x, int64_t n, float lo, float hi, uint32_t seed) {
    const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= n) return;
    uint32_t h = uint32_t(i) * 2654435761u ^ seed;
    h ^= h >> 16;
    h *= 0x7feb352du;
    h ^= h >> 15;
    x[i] = T(lo + (hi - lo) * (float(h) * (1.0f / 4294967296.0f)));
}

CudaOps& cuda_of(Ops& ops, const char* what) {
    auto* c = dynamic_cast<CudaOps*>(&ops);
    require(c != nullptr, what, std::string("needs the CUDA backend, got ") + ops.name());
    return *c;
}

// Device buffers freed on scope exit.
struct Buffers {
    CudaOps& ops;
    std::vector<void*> held;
    explicit Buffers(CudaOps& o) : ops(o) {}
    ~Buffers() {
        for (void* p : held) ops.free(p);
    }
    Buffers(const Buffers&) = delete;
    Buffers& operator=(const Buffers&) = delete;
    template <typename T = float>
    T* filled(int64_t n, float lo, float hi) {
        auto* p = static_cast<T*>(ops.alloc(size_t(n) * sizeof(T)));
        held.push_back(p);
        fill_kernel<T>
            <<<grid_for(n, 256), 256, 0, ops.stream()>>>(p, n, lo, hi, uint32_t(held.size()) * 7919u);
        NIWA_CUDA_LAUNCHED("bench fill");
        return p;
    }
    // A KV pool of n elements of type t (F32 or F16).
    void* pool(DType t, int64_t n) {
        if (t == DType::F16) return filled<__half>(n, -1.0f, 1.0f);
        require(t == DType::F32, "time_attention", "bench pools are F32 or F16");
        return filled(n, -1.0f, 1.0f);
    }
    template <typename T>
    T* copied(const std::vector<T>& v) {
        void* p = ops.alloc(v.size() * sizeof(T));
        held.push_back(p);
        ops.upload(p, v.data(), v.size() * sizeof(T));
        return static_cast<T*>(p);
    }
};

// `batch` sequences of n_q new tokens each, `context` tokens long with them.
double time_attention(Ops& ops_in, int batch, int n_q, int context, int n_q_heads, int n_kv_heads,
                      int head_dim, int iters, DType pool_type = DType::F32) {
    CudaOps& ops = cuda_of(ops_in, "time_attention");
    require(batch > 0 && n_q > 0 && context >= n_q && n_kv_heads > 0 && n_q_heads % n_kv_heads == 0,
            "time_attention", "batch and tokens must be positive, query heads a multiple of KV heads");
    constexpr int kBlockTokens = 16;
    const int n_tokens = batch * n_q;
    const int per_seq = (context + kBlockTokens - 1) / kBlockTokens;
    const int n_blocks = batch * per_seq;
    const int64_t width = int64_t(n_kv_heads) * head_dim;
    Buffers buf(ops);
    const int64_t pool = int64_t(n_blocks) * kBlockTokens * width;
    const KvLayer kv{buf.pool(pool_type, pool),
                     buf.pool(pool_type, pool),
                     pool_type,
                     n_blocks,
                     kBlockTokens,
                     n_kv_heads,
                     head_dim};
    std::vector<SeqInfo> seqs(static_cast<size_t>(batch));
    std::vector<int32_t> tables(static_cast<size_t>(n_blocks)), positions, kv_slots;
    for (int b = 0; b < batch; ++b) {
        seqs[b].q_start = b * n_q;
        seqs[b].n_q = n_q;
        seqs[b].pos0 = context - n_q;
        seqs[b].state_slot = b;
        seqs[b].table_start = b * per_seq;
        for (int i = 0; i < per_seq; ++i) tables[size_t(b) * per_seq + i] = i * batch + b;  // interleaved
        for (int p = context - n_q; p < context; ++p) {
            positions.push_back(p);
            kv_slots.push_back(tables[size_t(b) * per_seq + p / kBlockTokens] * kBlockTokens +
                               p % kBlockTokens);
        }
    }
    StepInfo step;
    step.seqs = buf.copied(seqs);
    step.host_seqs = seqs.data();
    step.n_seqs = batch;
    step.n_tokens = n_tokens;
    step.positions = buf.copied(positions);
    step.kv_slots = buf.copied(kv_slots);
    step.block_tables = buf.copied(tables);
    std::vector<int32_t> kv_of_q(static_cast<size_t>(n_q_heads));
    for (int h = 0; h < n_q_heads; ++h) kv_of_q[h] = h / (n_q_heads / n_kv_heads);
    const int64_t qw = int64_t(n_q_heads) * head_dim;
    const Tensor q{buf.filled(n_tokens * qw, -1.0f, 1.0f), DType::F32, n_tokens, qw, qw};
    const Tensor out{buf.filled(n_tokens * qw, 0.0f, 0.0f), DType::F32, n_tokens, qw, qw};
    const float scale = 1.0f / std::sqrt(float(head_dim));
    return time_calls(ops, iters, [&] { ops.attention(q, kv, kv_of_q.data(), scale, step, out); });
}

// `batch` sequences of n_q new tokens each, in `mode`.
double time_gdn(Ops& ops_in, int batch, int n_q, int n_v_heads, int n_k_heads, int dk, int dv, GdnMode mode,
                int iters) {
    CudaOps& ops = cuda_of(ops_in, "time_gdn");
    require(batch > 0 && n_q > 0 && n_v_heads > 0 && n_k_heads > 0, "time_gdn",
            "batch, tokens and head counts must be positive");
    const int n = batch * n_q;
    Buffers buf(ops);
    std::vector<SeqInfo> seqs(static_cast<size_t>(batch));
    for (int b = 0; b < batch; ++b) {
        seqs[b].q_start = b * n_q;
        seqs[b].n_q = n_q;
        seqs[b].state_slot = b;
    }
    StepInfo step;
    step.seqs = buf.copied(seqs);
    step.host_seqs = seqs.data();
    step.n_seqs = batch;
    step.n_tokens = n;
    std::vector<int32_t> key_of_v(static_cast<size_t>(n_v_heads));
    for (int h = 0; h < n_v_heads; ++h) key_of_v[h] = h % n_k_heads;
    const int64_t kw = int64_t(n_k_heads) * dk, vw = int64_t(n_v_heads) * dv;
    const float unit = 1.0f / std::sqrt(float(dk));
    const Tensor q{buf.filled(n * kw, -unit, unit), DType::F32, n, kw, kw};
    const Tensor k{buf.filled(n * kw, -unit, unit), DType::F32, n, kw, kw};
    const Tensor v{buf.filled(n * vw, -1.0f, 1.0f), DType::F32, n, vw, vw};
    const Tensor g{buf.filled(int64_t(n) * n_v_heads, -0.5f, -0.01f), DType::F32, n, n_v_heads, n_v_heads};
    const Tensor beta{buf.filled(int64_t(n) * n_v_heads, 0.1f, 0.9f), DType::F32, n, n_v_heads, n_v_heads};
    const Tensor o{buf.filled(n * vw, 0.0f, 0.0f), DType::F32, n, vw, vw};
    const GdnState st{nullptr, buf.filled(int64_t(batch) * n_v_heads * dk * dv, -0.1f, 0.1f), batch};
    return time_calls(ops, iters, [&] {
        ops.gated_delta_rule(q, k, v, g, beta, key_of_v.data(), dk, dv, 1.0f / std::sqrt(float(dk)), st, step,
                             mode, o);
    });
}

}  // namespace

double time_attention_decode(Ops& ops, int batch, int context, int n_q_heads, int n_kv_heads, int head_dim,
                             int iters, DType pool) {
    return time_attention(ops, batch, 1, context, n_q_heads, n_kv_heads, head_dim, iters, pool);
}

double time_attention_prefill(Ops& ops, int batch, int n_tokens, int n_q_heads, int n_kv_heads, int head_dim,
                              int iters) {
    // F16: the pool a GPU runs in mixed precision, the tensor-core prefill's.
    return time_attention(ops, batch, n_tokens, n_tokens, n_q_heads, n_kv_heads, head_dim, iters, DType::F16);
}

double time_gdn_decode(Ops& ops, int batch, int n_v_heads, int n_k_heads, int dk, int dv, int iters) {
    return time_gdn(ops, batch, 1, n_v_heads, n_k_heads, dk, dv, GdnMode::Recurrent, iters);
}

double time_gdn_prefill(Ops& ops, int batch, int n_tokens, int n_v_heads, int n_k_heads, int dk, int dv,
                        int iters) {
    return time_gdn(ops, batch, n_tokens, n_v_heads, n_k_heads, dk, dv, GdnMode::Chunked, iters);
}

}  // namespace niwa::kernels::cuda
