// rmsnorm and l2norm per segment of width y.cols (a row, or one head of a row: a [n, H*D]
// tensor and its [n*H, D] view normalise the same way). One CUDA block per segment; the sum of
// squares is a fp32 tree, then one correctly rounded sqrt and division.
#include <string>

#include "kernels/cuda/cuda_ops.h"
#include "kernels/cuda/reduce.cuh"
#include "kernels/cuda/segments.cuh"

namespace niwa::kernels::cuda {

namespace {

// RMS: y = x / sqrt(mean(x²) + eps) * w; otherwise (L2) y = x / sqrt(sum(x²) + eps).
template <bool RMS>
__global__ void norm_kernel(Segs x, Segs y, const float* w, float eps) {
    const float* xi = x.at(blockIdx.x);
    float* yi = y.at(blockIdx.x);
    const int64_t width = y.width;
    float ss = 0.0f;
    for (int64_t c = threadIdx.x; c < width; c += blockDim.x) ss += xi[c] * xi[c];
    ss = block_sum(ss);
    const float inv = 1.0f / sqrtf(RMS ? ss / static_cast<float>(width) + eps : ss + eps);
    for (int64_t c = threadIdx.x; c < width; c += blockDim.x) {
        const float v = xi[c] * inv;
        yi[c] = (RMS && w != nullptr) ? v * w[c] : v;
    }
}

template <bool RMS>
void run(cudaStream_t stream, const Tensor& x, const float* w, float eps, const Tensor& y, const char* op) {
    const int64_t width = y.cols;
    const Segs xs = segments(x, width, op, "x"), ys = segments(y, width, op, "y");
    const int64_t count = y.rows * ys.per_row;
    require(x.rows * xs.per_row == count, op, "x and y hold different numbers of rows");
    if (count == 0) return;
    const int threads = width >= 2048 ? 512 : width >= 512 ? 256 : 128;
    norm_kernel<RMS><<<static_cast<unsigned>(count), threads, 0, stream>>>(xs, ys, w, eps);
    NIWA_CUDA_LAUNCHED("norm_kernel");
}

}  // namespace

void CudaOps::rmsnorm(const Tensor& x, const float* w, float eps, const Tensor& y) {
    run<true>(stream_, x, w, eps, y, "rmsnorm");
}

void CudaOps::l2norm(const Tensor& x, float eps, const Tensor& y) {
    run<false>(stream_, x, nullptr, eps, y, "l2norm");
}

}  // namespace niwa::kernels::cuda
