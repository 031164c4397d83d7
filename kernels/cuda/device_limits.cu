// The physical limits benchmarks are reported against, measured on the spot: device-to-device
// copy bandwidth, and a large bf16 GEMM through cuBLAS (the best a tensor-core GEMM does here).
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "kernels/cuda/cuda_ops.h"
#include "kernels/devices.h"

namespace niwa::kernels {

namespace {

// Seconds of `iters` calls of fn on stream s, after two warm-up calls.
template <typename Fn>
double time_on(cudaStream_t s, int iters, Fn fn) {
    fn();
    fn();
    cudaEvent_t a, b;
    NIWA_CUDA_CHECK(cudaEventCreate(&a));
    NIWA_CUDA_CHECK(cudaEventCreate(&b));
    NIWA_CUDA_CHECK(cudaEventRecord(a, s));
    for (int i = 0; i < iters; ++i) fn();
    NIWA_CUDA_CHECK(cudaEventRecord(b, s));
    NIWA_CUDA_CHECK(cudaEventSynchronize(b));
    float ms = 0;
    NIWA_CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return double(ms) / 1000.0;
}

__global__ void fill_bf16(__nv_bfloat16* p, size_t n, unsigned seed) {
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
         i += size_t(gridDim.x) * blockDim.x) {
        unsigned h = unsigned(i) * 2654435761u ^ seed;
        h ^= h >> 13;
        p[i] = __float2bfloat16(float(h & 0xffff) / 65536.0f - 0.5f);
    }
}

struct Cublas {
    cublasHandle_t h = nullptr;
    Cublas() {
        if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) throw std::runtime_error("cuBLAS could not start");
    }
    ~Cublas() { cublasDestroy(h); }
};

}  // namespace

double measure_copy_bandwidth(int device) {
    cuda::CudaOps ops(device, Precision::Mixed);
    const size_t bytes = size_t(1) << 30;
    void* a = ops.alloc(bytes);
    void* b = ops.alloc(bytes);
    ops.zero(a, bytes);
    const int iters = 10;
    const double s = time_on(ops.stream(), iters, [&] { ops.copy(b, a, bytes); });
    ops.free(a);
    ops.free(b);
    return 2.0 * double(bytes) * iters / s;  // each copy reads and writes `bytes`
}

double measure_bf16_gemm_rate(int device) {
    cuda::CudaOps ops(device, Precision::Mixed);
    const int n = 8192;
    const size_t elems = size_t(n) * n;
    auto* a = static_cast<__nv_bfloat16*>(ops.alloc(elems * 2));
    auto* b = static_cast<__nv_bfloat16*>(ops.alloc(elems * 2));
    auto* c = static_cast<__nv_bfloat16*>(ops.alloc(elems * 2));
    fill_bf16<<<1024, 256, 0, ops.stream()>>>(a, elems, 1u);
    fill_bf16<<<1024, 256, 0, ops.stream()>>>(b, elems, 2u);
    NIWA_CUDA_LAUNCHED("fill_bf16");
    Cublas blas;
    cublasSetStream(blas.h, ops.stream());
    const float one = 1.0f, zero = 0.0f;
    cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
    const int iters = 10;
    const double s = time_on(ops.stream(), iters, [&] {
        const cublasStatus_t r =
            cublasGemmEx(blas.h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, CUDA_R_16BF, n, b, CUDA_R_16BF,
                         n, &zero, c, CUDA_R_16BF, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
        if (r != CUBLAS_STATUS_SUCCESS) st = r;
    });
    ops.free(a);
    ops.free(b);
    ops.free(c);
    if (st != CUBLAS_STATUS_SUCCESS)
        throw std::runtime_error("cuBLAS bf16 GEMM failed with status " + std::to_string(int(st)));
    return 2.0 * double(n) * n * n * iters / s;
}

}  // namespace niwa::kernels
