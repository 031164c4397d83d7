// rope: NeoX rotate-half on the first n_rot dims of each head, in place. One thread per (row,
// frequency): its angle is computed once (rope.cuh), then applied to that frequency's pair in
// every head of the row.
#include <string>

#include "kernels/cuda/cuda_ops.h"
#include "kernels/cuda/rope.cuh"

namespace niwa::kernels::cuda {

namespace {

__global__ void rope_kernel(float* x, int64_t ld, int64_t rows, int64_t rows_per_token, int heads,
                            int head_dim, int n_rot, Frequencies freq, const int32_t* positions) {
    const int half = n_rot / 2;
    const int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (idx >= rows * half) return;
    const int64_t r = idx / half;
    const int i = static_cast<int>(idx - r * half);
    const float2 cs = rope_cos_sin(positions[r / rows_per_token], freq.f[i]);
    float* v = x + r * ld + i;
    for (int h = 0; h < heads; ++h, v += head_dim) rope_rotate(v[0], v[half], cs);
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
    const Frequencies freq = rope_frequencies(theta, n_rot, "rope");
    const int64_t work = x.rows * (n_rot / 2);
    rope_kernel<<<grid_for(work, 128), 128, 0, stream_>>>(x.as<float>(), x.ld, x.rows, x.rows / step.n_tokens,
                                                          static_cast<int>(x.cols / head_dim), head_dim,
                                                          n_rot, freq, step.positions);
    NIWA_CUDA_LAUNCHED("rope_kernel");
}

}  // namespace niwa::kernels::cuda
