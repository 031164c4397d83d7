// rotate: the Prism block Hadamard (MODEL.md "The Hadamard fold"), fp32. Blocks of 32..1024
// channels: one warp per (Hadamard block, row), in registers (hadamard.cuh). Other sizes: one
// CUDA block per (Hadamard block, row) in shared memory. Both run the CPU oracle's butterflies
// in its order, so they agree bit for bit; y may alias x (a block's channels are all read
// before any is written, by the warp or block that owns them).
#include <algorithm>
#include <cmath>
#include <string>

#include <type_traits>

#include "kernels/cuda/cuda_ops.h"
#include "kernels/cuda/hadamard.cuh"
#include "kernels/cuda/pdl.cuh"

namespace niwa::kernels::cuda {

namespace {

constexpr int kMaxThreads = 512;

template <bool SignsFirst>
__global__ void __launch_bounds__(kMaxThreads)
    rotate_kernel(const float* x, int64_t ldx, float* y, int64_t ldy, const float* signs, int block,
                  float norm) {
    pdl_release();  // the matmul after this may start streaming its weights
    extern __shared__ float buf[];
    const int64_t row = blockIdx.y;
    const int64_t c0 = static_cast<int64_t>(blockIdx.x) * block;
    const float* xr = x + row * ldx + c0;
    const float* s = signs + c0;
    for (int i = threadIdx.x; i < block; i += blockDim.x) buf[i] = SignsFirst ? xr[i] * s[i] : xr[i];
    __syncthreads();
    hadamard_shared(buf, block, block);
    float* yr = y + row * ldy + c0;
    for (int i = threadIdx.x; i < block; i += blockDim.x)
        yr[i] = SignsFirst ? buf[i] * norm : buf[i] * norm * s[i];
}

constexpr int kWarpsPerBlock = 4;

template <int B, bool SignsFirst>
__global__ void __launch_bounds__(kWarpsPerBlock * 32)
    rotate_warp_kernel(const float* x, int64_t ldx, float* y, int64_t ldy, const float* signs, int n_blocks,
                       float norm) {
    pdl_release();  // the matmul after this may start streaming its weights
    const int lane = threadIdx.x & 31;
    const int hb = blockIdx.x * kWarpsPerBlock + (threadIdx.x >> 5);
    if (hb >= n_blocks) return;
    const int64_t row = blockIdx.y;
    const int64_t c0 = static_cast<int64_t>(hb) * B + lane;
    const float* xr = x + row * ldx + c0;
    const float* s = signs + c0;
    float v[B / 32];
#pragma unroll
    for (int j = 0; j < B / 32; ++j) v[j] = SignsFirst ? xr[32 * j] * s[32 * j] : xr[32 * j];
    hadamard_warp<B>(v, lane);
    float* yr = y + row * ldy + c0;
#pragma unroll
    for (int j = 0; j < B / 32; ++j) yr[32 * j] = SignsFirst ? v[j] * norm : v[j] * norm * s[32 * j];
}

}  // namespace

void CudaOps::rotate(const Tensor& x, const Rotation& r, bool signs_first, const Tensor& y) {
    require_f32(x, "rotate", "x");
    require_f32(y, "rotate", "y");
    require_same_shape(x, y, "rotate");
    if (x.rows == 0 || x.cols == 0) return;
    if (r.block == 0) {
        if (x.data == y.data && x.ld == y.ld) return;
        NIWA_CUDA_CHECK(cudaMemcpy2DAsync(y.data, static_cast<size_t>(y.ld) * sizeof(float), x.data,
                                          static_cast<size_t>(x.ld) * sizeof(float),
                                          static_cast<size_t>(x.cols) * sizeof(float),
                                          static_cast<size_t>(x.rows), cudaMemcpyDeviceToDevice, stream_));
        return;
    }
    const int block = r.block;
    require(block > 0 && (block & (block - 1)) == 0, "rotate",
            "Hadamard block " + std::to_string(block) + " is not a power of two");
    require(
        x.cols % block == 0, "rotate",
        std::to_string(x.cols) + " channels are not a whole number of blocks of " + std::to_string(block));
    require(static_cast<size_t>(block) * sizeof(float) <= props_.sharedMemPerBlock, "rotate",
            "Hadamard block " + std::to_string(block) + " does not fit in shared memory");
    require(r.signs != nullptr, "rotate", "no sign vector");
    const float norm = 1.0f / std::sqrt(static_cast<float>(block));
    if (warp_hadamard_block(block)) {
        const int n_blocks = static_cast<int>(x.cols / block);
        const dim3 grid(grid_for(n_blocks, kWarpsPerBlock), static_cast<unsigned>(x.rows));
        with_hadamard_block(block, [&](auto b) {
            constexpr int B = decltype(b)::value;
            if (signs_first)
                rotate_warp_kernel<B, true><<<grid, kWarpsPerBlock * 32, 0, stream_>>>(
                    x.as<const float>(), x.ld, y.as<float>(), y.ld, r.signs, n_blocks, norm);
            else
                rotate_warp_kernel<B, false><<<grid, kWarpsPerBlock * 32, 0, stream_>>>(
                    x.as<const float>(), x.ld, y.as<float>(), y.ld, r.signs, n_blocks, norm);
        });
        NIWA_CUDA_LAUNCHED("rotate_warp_kernel");
        return;
    }
    const dim3 grid(static_cast<unsigned>(x.cols / block), static_cast<unsigned>(x.rows));
    const int threads = std::max(1, std::min(kMaxThreads, block / 2));
    const size_t smem = static_cast<size_t>(block) * sizeof(float);
    if (signs_first)
        rotate_kernel<true><<<grid, threads, smem, stream_>>>(x.as<const float>(), x.ld, y.as<float>(), y.ld,
                                                              r.signs, block, norm);
    else
        rotate_kernel<false><<<grid, threads, smem, stream_>>>(x.as<const float>(), x.ld, y.as<float>(), y.ld,
                                                               r.signs, block, norm);
    NIWA_CUDA_LAUNCHED("rotate_kernel");
}

}  // namespace niwa::kernels::cuda
