// rope: NeoX rotate-half on the first n_rot dims of each head, in place. One thread per (row,
// frequency): its angle is computed once in double, as the CPU oracle does (exact at long
// positions), then applied to that frequency's pair in every head of the row.
#include <cmath>
#include <string>

#include "kernels/cuda/cuda_ops.h"

namespace niwa::kernels::cuda {

namespace {

// Rotation frequencies theta^(-2i / n_rot), computed on the host as the CPU oracle does (a
// double pow per thread was most of the kernel's time).
constexpr int kMaxHalf = 256;
struct Frequencies {
    double f[kMaxHalf];
};

__global__ void rope_kernel(float* x, int64_t ld, int64_t rows, int64_t rows_per_token, int heads,
                            int head_dim, int n_rot, Frequencies freq, const int32_t* positions) {
    const int half = n_rot / 2;
    const int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (idx >= rows * half) return;
    const int64_t r = idx / half;
    const int i = static_cast<int>(idx - r * half);
    const double angle = positions[r / rows_per_token] * freq.f[i];
    double sd, cd;
    sincos(angle, &sd, &cd);
    const auto c = static_cast<float>(cd), s = static_cast<float>(sd);
    float* v = x + r * ld + i;
    for (int h = 0; h < heads; ++h, v += head_dim) {
        const float a = v[0], b = v[half];
        v[0] = a * c - b * s;
        v[half] = a * s + b * c;
    }
}

}  // namespace

void CudaOps::rope(const Tensor& x, int head_dim, int n_rot, float theta, const StepInfo& step) {
    require_f32(x, "rope", "x");
    require(head_dim > 0 && x.cols % head_dim == 0, "rope",
            std::to_string(x.cols) + " columns are not whole heads of " + std::to_string(head_dim));
    require(
        n_rot >= 0 && n_rot <= head_dim && n_rot % 2 == 0, "rope",
        "n_rot " + std::to_string(n_rot) + " must be even and at most head_dim " + std::to_string(head_dim));
    if (x.rows == 0 || n_rot == 0) return;
    require(step.n_tokens > 0 && x.rows % step.n_tokens == 0, "rope",
            std::to_string(x.rows) + " rows for " + std::to_string(step.n_tokens) + " tokens");
    require(n_rot / 2 <= kMaxHalf, "rope",
            "n_rot " + std::to_string(n_rot) + " is above " + std::to_string(2 * kMaxHalf));
    Frequencies freq;
    for (int i = 0; i < n_rot / 2; ++i) freq.f[i] = std::pow(static_cast<double>(theta), -2.0 * i / n_rot);
    const int64_t work = x.rows * (n_rot / 2);
    rope_kernel<<<grid_for(work, 128), 128, 0, stream_>>>(x.as<float>(), x.ld, x.rows, x.rows / step.n_tokens,
                                                          static_cast<int>(x.cols / head_dim), head_dim,
                                                          n_rot, freq, step.positions);
    NIWA_CUDA_LAUNCHED("rope_kernel");
}

}  // namespace niwa::kernels::cuda
