// GDN's small per-element ops: the gates (log decay and beta) and the output's gated rmsnorm.
#include <string>

#include "kernels/cuda/activations.cuh"
#include "kernels/cuda/cuda_ops.h"
#include "kernels/cuda/segments.cuh"

namespace niwa::kernels::cuda {

namespace {

// alpha <- a * softplus(alpha + dt_bias), beta <- sigmoid(beta); one thread per element.
__global__ void gates_kernel(float* alpha, int64_t alpha_ld, float* beta, int64_t beta_ld, int64_t rows,
                             int64_t cols, const float* a, const float* dt_bias) {
    const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= rows * cols) return;
    const int64_t r = i / cols, h = i % cols;
    float* al = alpha + r * alpha_ld + h;
    float* be = beta + r * beta_ld + h;
    *al = gdn_log_decay(*al, a[h], dt_bias[h]);
    *be = sigmoid_value(*be);
}

constexpr int kWarpsPerBlock = 8;

// One warp per segment: sum of squares, then y = x * rsqrt(mean + eps) * w * silu(z). y may
// alias x: each lane writes only what it read.
__global__ void rmsnorm_gated_kernel(Segs x, Segs z, Segs y, int64_t count, int64_t width, const float* w,
                                     float eps) {
    const int64_t s = int64_t(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
    if (s >= count) return;
    const int lane = threadIdx.x & 31;
    const float* xs = x.at(s);
    const float* zs = z.at(s);
    float* ys = y.at(s);
    float ss = 0.0f;
    for (int64_t c = lane; c < width; c += 32) ss = fmaf(xs[c], xs[c], ss);
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) ss += __shfl_xor_sync(0xffffffffu, ss, o);
    const float inv = 1.0f / sqrtf(ss / float(width) + eps);
    for (int64_t c = lane; c < width; c += 32) {
        const float zc = zs[c];
        ys[c] = xs[c] * inv * (w != nullptr ? w[c] : 1.0f) * silu_value(zc);
    }
}

}  // namespace

void CudaOps::gdn_gates(const Tensor& alpha, const Tensor& beta, const float* a, const float* dt_bias) {
    require_f32(alpha, "gdn_gates", "alpha");
    require_f32(beta, "gdn_gates", "beta");
    require_same_shape(alpha, beta, "gdn_gates");
    const int64_t n = alpha.rows * alpha.cols;
    if (n == 0) return;
    gates_kernel<<<grid_for(n, 256), 256, 0, stream_>>>(alpha.as<float>(), alpha.ld, beta.as<float>(),
                                                        beta.ld, alpha.rows, alpha.cols, a, dt_bias);
    NIWA_CUDA_LAUNCHED("gdn_gates");
}

void CudaOps::rmsnorm_gated(const Tensor& x, const float* w, const Tensor& z, float eps, const Tensor& y) {
    const int64_t width = y.cols;
    const char* op = "rmsnorm_gated";
    const Segs xs = segments(x, width, op, "x"), zs = segments(z, width, op, "z"),
               ys = segments(y, width, op, "y");
    const int64_t count = y.rows * ys.per_row;
    require(x.rows * xs.per_row == count && z.rows * zs.per_row == count, "rmsnorm_gated",
            "x, z and y hold different numbers of rows");
    if (count == 0) return;
    rmsnorm_gated_kernel<<<grid_for(count, kWarpsPerBlock), kWarpsPerBlock * 32, 0, stream_>>>(
        xs, zs, ys, count, width, w, eps);
    NIWA_CUDA_LAUNCHED("rmsnorm_gated");
}

}  // namespace niwa::kernels::cuda
