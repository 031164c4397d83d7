// Prefill matmul through cuBLAS (Precision::Mixed, large n): the weight is dequantized
// (code times scale, any weight type) into an fp16 scratch matrix, x converted to fp16 beside
// it, and one fp16 GEMM with fp32 accumulation writes y in fp32. The operands are the same fp16
// values matmul_prefill.cu's tiles hold, so the two paths agree to accumulation order.
//
// Dequantizing costs ~2.3 bytes of traffic per weight (0.27 read, 2 written) against the
// GEMM's 2·n FLOPs per weight: under 5 % of the GEMM's time from n = 1024 on an H200. The
// scratch is bounded (CudaOps::gemm_scratch_limit): a larger matrix runs as slabs of rows, one
// GEMM each.
#include <cublas_v2.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "kernels/cuda/dequant.cuh"
#include "kernels/cuda/matmul.cuh"
#include "kernels/cuda/mma.cuh"

namespace niwa::kernels::cuda {

namespace {

constexpr int kThreads = 256;

// fp16 row stride of both scratch matrices: 16-byte rows, as cuBLAS's fast kernels want.
int64_t half_ld(int64_t in) {
    return (in + 7) / 8 * 8;
}

// Rows [r0, r0 + rows) of W to fp16, row-major with `ld` halves a row. A warp takes whole
// rows, 512 inputs a pass: a lane decodes 16 (dequant.cuh's weights_at: one ternary code word)
// and stores 32 bytes.
template <DType T>
__global__ void __launch_bounds__(kThreads)
    dequant_kernel(MatmulArgs a, int64_t r0, int64_t rows, __half* wh, int64_t ld) {
    const int lane = threadIdx.x & 31;
    const int64_t warps = int64_t(gridDim.x) * (kThreads / 32);
    for (int64_t r = int64_t(blockIdx.x) * (kThreads / 32) + (threadIdx.x >> 5); r < rows; r += warps) {
        const uint8_t* row = a.w + size_t(r0 + r) * a.stride;
        __half* dst_row = wh + r * ld;
#pragma unroll 2
        for (int64_t c = 0; c < a.in; c += 512) {
            const int64_t k = c + 16 * lane;
            if (k >= a.in) continue;
            float v[16];
            if constexpr (T == DType::PQ2_0T)
                tiled_weights16(a.w, a.in, r0 + r, k, v);
            else
                weights_at<T>(row, k, a.in, v);
            __half* dst = dst_row + k;
            if (k + 16 <= a.in) {
                store_f16x16(dst, v);  // ld and k are multiples of 8: 16-byte aligned
            } else {
                for (int i = 0; i < 16 && k + i < a.in; ++i) dst[i] = __float2half_rn(v[i]);
            }
        }
    }
}

// x (n x in fp32, ldx apart) to fp16 rows `ld` apart; a thread converts 4 inputs.
__global__ void __launch_bounds__(kThreads) convert_x_kernel(MatmulArgs a, __half* xh, int64_t ld, bool vec) {
    const int64_t groups = (a.in + 3) / 4;
    const int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x;
    if (i >= a.n * groups) return;
    const int64_t n = i / groups, k = (i % groups) * 4;
    const float* src = a.x + n * a.ldx + k;
    __half* dst = xh + n * ld + k;
    if (vec && k + 4 <= a.in) {
        const float4 f = *reinterpret_cast<const float4*>(src);
        *reinterpret_cast<uint2*>(dst) = make_uint2(f16x2_bits(f.x, f.y), f16x2_bits(f.z, f.w));
    } else {
        for (int j = 0; j < 4 && k + j < a.in; ++j) dst[j] = __float2half_rn(src[j]);
    }
}

template <DType T>
void launch_dequant(CudaOps& ops, const MatmulArgs& a, int64_t r0, int64_t rows, __half* wh, int64_t ld) {
    const int64_t max_blocks = int64_t(ops.props().multiProcessorCount) * 16;
    const int blocks = int(std::min<int64_t>(max_blocks, (rows + kThreads / 32 - 1) / (kThreads / 32)));
    dequant_kernel<T><<<blocks, kThreads, 0, ops.stream()>>>(a, r0, rows, wh, ld);
    NIWA_CUDA_LAUNCHED("matmul dequant_kernel");
}

void dequant(CudaOps& ops, const MatmulArgs& a, int64_t r0, int64_t rows, __half* wh, int64_t ld) {
    with_any_weight_type(a.type,
                         [&](auto tag) { launch_dequant<decltype(tag)::value>(ops, a, r0, rows, wh, ld); });
}

void check_blas(cublasStatus_t st, const char* what) {
    if (st != CUBLAS_STATUS_SUCCESS)
        throw std::runtime_error(std::string("cuBLAS ") + what + " failed with status " +
                                 std::to_string(int(st)));
}

// Rows of W dequantized at once: all of them when they fit the limit, else equal slabs (a
// multiple of 128 rows, at least 128) so no GEMM is a sliver.
int64_t slab_rows(int64_t out, int64_t in, size_t limit) {
    const int64_t fit =
        std::max<int64_t>(128, int64_t(limit / (size_t(half_ld(in)) * sizeof(__half))) / 128 * 128);
    if (fit >= out) return out;
    const int64_t slabs = (out + fit - 1) / fit;
    return ((out + slabs - 1) / slabs + 127) / 128 * 128;
}

}  // namespace

void launch_cublas_prefill(CudaOps& ops, const MatmulArgs& a) {
    const int64_t ld = half_ld(a.in);
    const int64_t slab = slab_rows(a.out, a.in, ops.gemm_scratch_limit());
    auto* xh = static_cast<__half*>(
        ops.workspace(CudaOps::Workspace::GemmInput, size_t(a.n) * size_t(ld) * sizeof(__half)));
    auto* wh = static_cast<__half*>(
        ops.workspace(CudaOps::Workspace::GemmWeights, size_t(slab) * size_t(ld) * sizeof(__half)));
    const bool vec = reinterpret_cast<uintptr_t>(a.x) % 16 == 0 && a.ldx % 4 == 0;
    const int64_t groups = a.n * ((a.in + 3) / 4);
    convert_x_kernel<<<unsigned((groups + kThreads - 1) / kThreads), kThreads, 0, ops.stream()>>>(a, xh, ld,
                                                                                                  vec);
    NIWA_CUDA_LAUNCHED("matmul convert_x_kernel");

    cublasHandle_t h = ops.blas();
    const float one = 1.0f, zero = 0.0f;
    for (int64_t r0 = 0; r0 < a.out; r0 += slab) {
        const int64_t rows = std::min(slab, a.out - r0);
        dequant(ops, a, r0, rows, wh, ld);
        // Column-major view: y[n][o] is C (rows x n, ld ldy) = Wᵀ-stored-as-(in x rows)ᵀ · xh (in x n).
        check_blas(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, int(rows), int(a.n), int(a.in), &one, wh,
                                CUDA_R_16F, int(ld), xh, CUDA_R_16F, int(ld), &zero, a.y + r0, CUDA_R_32F,
                                int(a.ldy), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                   "fp16 GEMM");
    }
}

}  // namespace niwa::kernels::cuda
