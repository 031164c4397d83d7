// qk_norm_rope: the attention layer's per-head RMS norm of queries and keys and their rope, in
// one launch instead of four. A warp takes one head row (of q or of k): it stages the row in
// shared memory while summing its squares (fp32, a warp's shuffle tree), then writes the normed
// row with its first n_rot dims rotated in pairs (rope.cuh: the angle in double, as the CPU).
// qk_norm_rope_store writes the keys into the KV pool instead, and its warps past the keys copy
// the values there: kv_store's launch is gone, and the pool gets the same bits.
#include <string>

#include "kernels/cuda/attention_kernels.h"
#include "kernels/cuda/cuda_ops.h"
#include "kernels/cuda/pdl.cuh"
#include "kernels/cuda/rope.cuh"
#include "kernels/cuda/segments.cuh"

namespace niwa::kernels::cuda {

namespace {

constexpr int kWarps = 4;
constexpr int kMaxWidth = 512;

// One side (q or k): its head rows in and out, their norm weight, and how many a token has.
struct Side {
    Segs x, y;
    const float* w;
    int64_t rows, per_token;
};

// Where qk_norm_rope_store puts a token's keys and values: the pool's rows at its slot (one
// outside the pool is skipped, as kv_store skips it). k null: the keys go to their side's y.
template <typename T>
struct PoolRows {
    T* k = nullptr;
    T* v = nullptr;
    const int32_t* slots = nullptr;
    int64_t n_slots = 0;
    int64_t width = 0;  // a slot's row: n_kv_heads * head_dim
    Segs v_in{};        // the values' head rows
    int64_t v_rows = 0;
};

template <typename T>
__global__ void __launch_bounds__(kWarps * 32)
    qk_norm_rope_kernel(Side q, Side k, float eps, int n_rot, Frequencies freq, const int32_t* positions,
                        PoolRows<T> pool, bool release_early) {
    __shared__ float staged[kWarps][kMaxWidth];
    pdl_wait();  // launched to overlap the matmul before it: its launch is hidden (pdl.cuh)
    if (release_early) pdl_release();  // else the kernel after it launches as this one ends
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int64_t row = static_cast<int64_t>(blockIdx.x) * kWarps + warp;
    if (row >= q.rows + k.rows + pool.v_rows) return;  // no barrier below but the warp's own
    const bool is_q = row < q.rows;
    const Side& s = is_q ? q : k;
    const int width = static_cast<int>(s.y.width), half = n_rot / 2;
    // A key or value head row's place in the pool (pool.k set): its token's slot, its head.
    T* to = nullptr;
    if (!is_q && pool.k) {
        const bool is_v = row >= q.rows + k.rows;
        const int64_t j = row - q.rows - (is_v ? k.rows : 0);  // the key's or value's head row
        const int64_t slot = pool.slots[j / k.per_token];
        if (slot < 0 || slot >= pool.n_slots) return;
        to = (is_v ? pool.v : pool.k) + slot * pool.width + (j % k.per_token) * width;
        if (is_v) {
            const float* x = pool.v_in.at(j);
            for (int c = lane; c < width; c += 32) to[c] = attn::from_f32<T>(x[c]);
            return;
        }
    }
    const int64_t i = is_q ? row : row - q.rows;
    const float* x = s.x.at(i);
    float* y = to ? nullptr : s.y.at(i);
    auto put = [&](int c, float e) {
        if (to)
            to[c] = attn::from_f32<T>(e);
        else
            y[c] = e;
    };
    float* v = staged[warp];
    float ss = 0.0f;
    for (int c = lane; c < width; c += 32) {
        const float e = x[c];
        v[c] = e;
        ss += e * e;
    }
    for (int off = 16; off > 0; off >>= 1) ss += __shfl_xor_sync(0xffffffffu, ss, off);
    const float inv = 1.0f / sqrtf(ss / static_cast<float>(width) + eps);
    __syncwarp();
    auto normed = [&](int c) { return s.w != nullptr ? v[c] * inv * s.w[c] : v[c] * inv; };
    const double position = positions[i / s.per_token];
    for (int c = lane; c < width; c += 32) {
        if (c < half) {
            float a = normed(c), b = normed(c + half);
            rope_rotate(a, b, rope_cos_sin(position, freq.f[c]));
            put(c, a);
            put(c + half, b);
        } else if (c >= n_rot) {
            put(c, normed(c));
        }
    }
}

Side side(const Tensor& x, const float* w, const Tensor& y, int64_t n_tokens, const char* name_x,
          const char* name_y) {
    const char* op = "qk_norm_rope";
    const int64_t width = y.cols;
    Side s{segments(x, width, op, name_x), segments(y, width, op, name_y), w, 0, 0};
    s.rows = y.rows * s.y.per_row;
    require(x.rows * s.x.per_row == s.rows, op,
            std::string(name_x) + " and " + name_y + " hold different numbers of rows");
    require(
        s.rows % n_tokens == 0, op,
        std::to_string(s.rows) + " head rows of " + name_y + " for " + std::to_string(n_tokens) + " tokens");
    s.per_token = s.rows / n_tokens;
    return s;
}

// The two sides of qk_norm_rope's arguments, checked; rows == 0 on both: nothing to do.
struct QkSides {
    Side q, k;
    Frequencies freq;
};

QkSides qk_sides(const char* op, const Tensor& q, const float* q_w, const Tensor& q_out, const Tensor& k,
                 const float* k_w, const Tensor& k_out, int n_rot, float theta, const StepInfo& step) {
    require(q_out.cols == k_out.cols, op, "q and k heads differ in width");
    const int width = static_cast<int>(q_out.cols);
    require(width > 0 && width <= kMaxWidth, op,
            "head width " + std::to_string(width) + " is not in 1.." + std::to_string(kMaxWidth));
    require(n_rot >= 0 && n_rot <= width && n_rot % 2 == 0, op,
            "n_rot " + std::to_string(n_rot) + " must be even and at most the head width " +
                std::to_string(width));
    QkSides s{};
    if (q_out.rows == 0 && k_out.rows == 0) return s;
    require(step.n_tokens > 0, op, "no tokens in the step");
    s.q = side(q, q_w, q_out, step.n_tokens, "q", "q_out");
    s.k = side(k, k_w, k_out, step.n_tokens, "k", "k_out");
    s.freq = rope_frequencies(theta, n_rot, op);
    return s;
}

// The kernel lets the one after it launch as it starts, so that kernel's launch and first loads
// overlap it. With the keys stored the one after is attention, and there only while this grid
// is small (at most a block for every four SMs): at 1-4 tokens (8-32 blocks) the early launch
// made the step 0.7-1.5 % faster, at 8 and 24 (64 and 192 blocks) attention, launched beside
// this grid, ran longer (15 µs a call at 24: the step 2.4 % slower; 0.5 % at 8). Why was not
// profiled (docs/BENCHMARKS.md, thirty-second pass).
template <typename T>
void launch_qk(CudaOps& ops, const QkSides& s, float eps, int n_rot, const int32_t* positions,
               const PoolRows<T>& pool) {
    const unsigned blocks = grid_for(s.q.rows + s.k.rows + pool.v_rows, kWarps);
    const bool release_early = !pool.k || int64_t(blocks) * 4 <= ops.props().multiProcessorCount;
    NIWA_CUDA_CHECK(launch_overlapping(ops.overlap_launches(), qk_norm_rope_kernel<T>, dim3(blocks),
                                       dim3(kWarps * 32), 0, ops.stream(), s.q, s.k, eps, n_rot, s.freq,
                                       positions, pool, release_early));
}

}  // namespace

void CudaOps::qk_norm_rope(const Tensor& q, const float* q_w, const Tensor& q_out, const Tensor& k,
                           const float* k_w, const Tensor& k_out, float eps, int n_rot, float theta,
                           const StepInfo& step) {
    const QkSides s = qk_sides("qk_norm_rope", q, q_w, q_out, k, k_w, k_out, n_rot, theta, step);
    if (s.q.rows + s.k.rows == 0) return;
    launch_qk(*this, s, eps, n_rot, step.positions, PoolRows<float>{});
}

void CudaOps::qk_norm_rope_store(const Tensor& q, const float* q_w, const Tensor& q_out, const Tensor& k,
                                 const float* k_w, const Tensor& k_out, const Tensor& v, float eps, int n_rot,
                                 float theta, const KvLayer& kv, const StepInfo& step) {
    const char* op = "qk_norm_rope_store";
    attn::check_pool(kv, op);
    const QkSides s = qk_sides(op, q, q_w, q_out, k, k_w, k_out, n_rot, theta, step);
    const int64_t width = int64_t(kv.n_kv_heads) * kv.head_dim;
    require(k_out.cols == kv.head_dim && s.k.rows == int64_t(step.n_tokens) * kv.n_kv_heads, op,
            "the keys must be [n_tokens * n_kv_heads, head_dim] head rows of the pool's geometry");
    require_f32(v, op, "v");
    require(v.cols == width && v.rows >= step.n_tokens, op, "v must be [n_tokens, n_kv_heads * head_dim]");
    if (step.n_tokens == 0) return;
    attn::with_pool_element(kv.type, [&](auto element) {
        using T = decltype(element);
        PoolRows<T> pool;
        pool.k = static_cast<T*>(kv.k);
        pool.v = static_cast<T*>(kv.v);
        pool.slots = step.kv_slots;
        pool.n_slots = int64_t(kv.n_blocks) * kv.block_tokens;
        pool.width = width;
        pool.v_in = segments(v, kv.head_dim, op, "v");
        pool.v_rows = s.k.rows;
        launch_qk(*this, s, eps, n_rot, step.positions, pool);
    });
}

}  // namespace niwa::kernels::cuda
