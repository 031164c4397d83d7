// residual_norm: the residual add, the RMS norm and the input Hadamard of the next matmuls in
// one kernel (three launches and three trips through memory become one). One CUDA block per
// row keeps the row in shared memory: x + y is written back once, the sum of squares is a
// fp32 tree, xn is written, and each warp takes Hadamard blocks of the shared copy into its
// registers (hadamard.cuh; other block sizes: butterflies in shared memory), in the CPU
// oracle's order.
#include <algorithm>
#include <cmath>
#include <string>

#include <type_traits>

#include "kernels/cuda/cuda_ops.h"
#include "kernels/cuda/hadamard.cuh"
#include "kernels/cuda/pdl.cuh"
#include "kernels/cuda/reduce.cuh"

namespace niwa::kernels::cuda {

namespace {

constexpr int kThreads = 1024;

struct ResidualArgs {
    float* x;
    int64_t ldx;
    const float* y;  // null: no residual add
    int64_t ldy;
    const float* w;
    float eps;
    float* xn;
    int64_t ldn;
    float* xr;
    int64_t ldr;
    const float* signs;  // null: xr is a copy of xn
    int block;           // Hadamard block
    float norm;          // 1 / sqrt(block)
    int cols;
};

// B: the Hadamard block when warps can take it (hadamard.cuh), 0 otherwise.
template <int B>
__global__ void __launch_bounds__(kThreads) residual_norm_kernel(ResidualArgs a) {
    pdl_release();                  // the matmul after this may start streaming its weights
    extern __shared__ float buf[];  // [cols]
    const int64_t row = blockIdx.x;
    float* x = a.x + row * a.ldx;
    const float* y = a.y ? a.y + row * a.ldy : nullptr;
    float ss = 0.0f;
    for (int c = threadIdx.x; c < a.cols; c += blockDim.x) {
        float v = x[c];
        if (y) {
            v += y[c];
            x[c] = v;
        }
        buf[c] = v;
        ss += v * v;
    }
    ss = block_sum(ss);
    const float inv = 1.0f / sqrtf(ss / static_cast<float>(a.cols) + a.eps);
    float* xn = a.xn + row * a.ldn;
    for (int c = threadIdx.x; c < a.cols; c += blockDim.x) {
        const float v = buf[c] * inv * a.w[c];
        xn[c] = v;
        buf[c] = a.signs ? v * a.signs[c] : v;
    }
    float* xr = a.xr + row * a.ldr;
    if (!a.signs) {
        for (int c = threadIdx.x; c < a.cols; c += blockDim.x) xr[c] = buf[c];
        return;
    }
    __syncthreads();
    if constexpr (B != 0) {
        const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, warps = blockDim.x >> 5;
        for (int hb = warp; hb < a.cols / B; hb += warps) {
            float v[B / 32];
#pragma unroll
            for (int j = 0; j < B / 32; ++j) v[j] = buf[hb * B + 32 * j + lane];
            hadamard_warp<B>(v, lane);
#pragma unroll
            for (int j = 0; j < B / 32; ++j) xr[hb * B + 32 * j + lane] = v[j] * a.norm;
        }
        return;
    }
    hadamard_shared(buf, a.cols, a.block);
    for (int c = threadIdx.x; c < a.cols; c += blockDim.x) xr[c] = buf[c] * a.norm;
}

}  // namespace

void CudaOps::residual_norm(const Tensor& x, const Tensor& y, const float* w, float eps, const Tensor& xn,
                            const Rotation& r, const Tensor& xr) {
    const char* op = "residual_norm";
    require_f32(x, op, "x");
    require_f32(xn, op, "xn");
    require_f32(xr, op, "xr");
    require_same_shape(x, xn, op);
    require_same_shape(x, xr, op);
    if (y.data) {
        require_f32(y, op, "y");
        require_same_shape(x, y, op);
    }
    require(w != nullptr, op, "no norm weight");
    if (x.rows == 0 || x.cols == 0) return;
    require(static_cast<size_t>(x.cols) * sizeof(float) <= props_.sharedMemPerBlockOptin, op,
            std::to_string(x.cols) + " channels do not fit in shared memory");
    if (r.block != 0) {
        require(r.block > 1 && (r.block & (r.block - 1)) == 0, op,
                "Hadamard block " + std::to_string(r.block) + " is not a power of two");
        require(x.cols % r.block == 0, op,
                std::to_string(x.cols) + " channels are not a whole number of blocks of " +
                    std::to_string(r.block));
        require(r.signs != nullptr, op, "no sign vector");
    }
    ResidualArgs a{x.as<float>(),
                   x.ld,
                   y.data ? y.as<const float>() : nullptr,
                   y.ld,
                   w,
                   eps,
                   xn.as<float>(),
                   xn.ld,
                   xr.as<float>(),
                   xr.ld,
                   r.block != 0 ? r.signs : nullptr,
                   std::max(r.block, 2),
                   r.block != 0 ? 1.0f / std::sqrt(static_cast<float>(r.block)) : 1.0f,
                   static_cast<int>(x.cols)};
    const size_t smem = static_cast<size_t>(x.cols) * sizeof(float);
    const int threads =
        static_cast<int>(std::min<int64_t>(kThreads, std::max<int64_t>(32, (x.cols + 31) / 32 * 32)));
    const auto launch = [&](auto kernel) {
        if (smem > 48 * 1024)
            NIWA_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                 static_cast<int>(smem)));
        kernel<<<static_cast<unsigned>(x.rows), threads, smem, stream_>>>(a);
    };
    if (r.block != 0 && warp_hadamard_block(r.block))
        with_hadamard_block(r.block, [&](auto b) { launch(residual_norm_kernel<decltype(b)::value>); });
    else
        launch(residual_norm_kernel<0>);
    NIWA_CUDA_LAUNCHED("residual_norm_kernel");
}

}  // namespace niwa::kernels::cuda
