// Element-wise ops over same-shaped tensors (each with its own ld): add, swiglu, sigmoid_mul.
// float4 loads and stores when every row of every operand is 16-byte aligned; y may alias an
// input (each element is read before it is written, by the same thread).
#include <algorithm>

#include "kernels/cuda/activations.cuh"
#include "kernels/cuda/cuda_ops.h"
#include "kernels/cuda/pdl.cuh"

namespace niwa::kernels::cuda {

namespace {

struct Add {
    __device__ float operator()(float a, float b) const { return a + b; }
};
struct Swiglu {
    __device__ float operator()(float g, float u) const { return swiglu_value(g, u); }
};
struct SigmoidMul {
    __device__ float operator()(float x, float g) const { return sigmoid_mul_value(x, g); }
};

template <typename F, typename V>
__global__ void binary_kernel(const V* a, int64_t lda, const V* b, int64_t ldb, V* y, int64_t ldy,
                              int64_t rows, int64_t cols, F f) {
    pdl_release();  // the matmul after this may start streaming its weights
    pdl_wait();     // launched to overlap the kernel before it: its launch is hidden
    const int64_t total = rows * cols;
    for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
         i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
        const int64_t r = i / cols, c = i - r * cols;
        const V p = a[r * lda + c], q = b[r * ldb + c];
        if constexpr (sizeof(V) == sizeof(float)) {
            y[r * ldy + c] = f(p, q);
        } else {
            y[r * ldy + c] = V{f(p.x, q.x), f(p.y, q.y), f(p.z, q.z), f(p.w, q.w)};
        }
    }
}

bool aligned16(const Tensor& t) {
    return reinterpret_cast<uintptr_t>(t.data) % 16 == 0 && t.ld % 4 == 0;
}

template <typename F>
void binary(const CudaOps& ops, const Tensor& a, const Tensor& b, const Tensor& y, const char* op, F f) {
    require_f32(a, op, "first input");
    require_f32(b, op, "second input");
    require_f32(y, op, "y");
    require_same_shape(a, y, op);
    require_same_shape(b, y, op);
    if (y.rows == 0 || y.cols == 0) return;
    const int threads = 256;
    const int max_blocks = ops.props().multiProcessorCount * 8;
    if (y.cols % 4 == 0 && aligned16(a) && aligned16(b) && aligned16(y)) {
        const int64_t cols = y.cols / 4;
        const auto blocks =
            static_cast<unsigned>(std::min<int64_t>(max_blocks, grid_for(y.rows * cols, threads)));
        NIWA_CUDA_CHECK(launch_overlapping(ops.overlap_launches(), binary_kernel<F, float4>, dim3(blocks),
                                           dim3(threads), 0, ops.stream(), a.as<const float4>(), a.ld / 4,
                                           b.as<const float4>(), b.ld / 4, y.as<float4>(), y.ld / 4, y.rows,
                                           cols, f));
    } else {
        const auto blocks =
            static_cast<unsigned>(std::min<int64_t>(max_blocks, grid_for(y.rows * y.cols, threads)));
        NIWA_CUDA_CHECK(launch_overlapping(
            ops.overlap_launches(), binary_kernel<F, float>, dim3(blocks), dim3(threads), 0, ops.stream(),
            a.as<const float>(), a.ld, b.as<const float>(), b.ld, y.as<float>(), y.ld, y.rows, y.cols, f));
    }
}

}  // namespace

void CudaOps::add(const Tensor& a, const Tensor& b, const Tensor& y) {
    binary(*this, a, b, y, "add", Add{});
}

void CudaOps::swiglu(const Tensor& gate, const Tensor& up, const Tensor& y) {
    binary(*this, gate, up, y, "swiglu", Swiglu{});
}

void CudaOps::sigmoid_mul(const Tensor& x, const Tensor& gate, const Tensor& y) {
    binary(*this, x, gate, y, "sigmoid_mul", SigmoidMul{});
}

}  // namespace niwa::kernels::cuda
