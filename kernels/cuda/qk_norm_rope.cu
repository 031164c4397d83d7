// qk_norm_rope: the attention layer's per-head RMS norm of queries and keys and their rope, in
// one launch instead of four. A warp takes one head row (of q or of k): it stages the row in
// shared memory while summing its squares (fp32, a warp's shuffle tree), then writes the normed
// row with its first n_rot dims rotated in pairs (rope.cuh: the angle in double, as the CPU).
#include <string>

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

__global__ void __launch_bounds__(kWarps * 32)
    qk_norm_rope_kernel(Side q, Side k, float eps, int n_rot, Frequencies freq, const int32_t* positions) {
    __shared__ float staged[kWarps][kMaxWidth];
    pdl_wait();  // launched to overlap the matmul before it: its launch is hidden (pdl.cuh)
    pdl_release();
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int64_t row = static_cast<int64_t>(blockIdx.x) * kWarps + warp;
    if (row >= q.rows + k.rows) return;  // no barrier below but the warp's own
    const bool is_q = row < q.rows;
    const Side& s = is_q ? q : k;
    const int64_t i = is_q ? row : row - q.rows;
    const float* x = s.x.at(i);
    float* y = s.y.at(i);
    float* v = staged[warp];
    const int width = static_cast<int>(s.y.width), half = n_rot / 2;
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
            y[c] = a;
            y[c + half] = b;
        } else if (c >= n_rot) {
            y[c] = normed(c);
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

}  // namespace

void CudaOps::qk_norm_rope(const Tensor& q, const float* q_w, const Tensor& q_out, const Tensor& k,
                           const float* k_w, const Tensor& k_out, float eps, int n_rot, float theta,
                           const StepInfo& step) {
    const char* op = "qk_norm_rope";
    require(q_out.cols == k_out.cols, op, "q and k heads differ in width");
    const int width = static_cast<int>(q_out.cols);
    require(width > 0 && width <= kMaxWidth, op,
            "head width " + std::to_string(width) + " is not in 1.." + std::to_string(kMaxWidth));
    require(n_rot >= 0 && n_rot <= width && n_rot % 2 == 0, op,
            "n_rot " + std::to_string(n_rot) + " must be even and at most the head width " +
                std::to_string(width));
    if (q_out.rows == 0 && k_out.rows == 0) return;
    require(step.n_tokens > 0, op, "no tokens in the step");
    const Side qs = side(q, q_w, q_out, step.n_tokens, "q", "q_out");
    const Side ks = side(k, k_w, k_out, step.n_tokens, "k", "k_out");
    const Frequencies freq = rope_frequencies(theta, n_rot, op);
    NIWA_CUDA_CHECK(launch_overlapping(overlap_launches(), qk_norm_rope_kernel,
                                       dim3(grid_for(qs.rows + ks.rows, kWarps)), dim3(kWarps * 32), 0,
                                       stream_, qs, ks, eps, n_rot, freq, step.positions));
}

}  // namespace niwa::kernels::cuda
