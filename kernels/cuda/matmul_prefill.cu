// Tensor-core matmul for batches (n > 32 rows of x, Precision::Mixed), any weight type, when
// asked for (CudaOps::PrefillGemm::Tiles; cuBLAS on dequantized weights is ~4x faster at a
// 2048-row chunk and is the default, matmul_cublas.cu): 128 x 128 output tiles, 32 inputs a stage. Each
// stage's weight tile is dequantized (code times scale) into shared memory as fp16 and x's tile converted to
// fp16 beside it; 8 warps (2 x 4) run mma.sync m16n8k16 on ldmatrix fragments with fp32 accumulation. The
// next stage's global loads are issued before the current stage's math (register prefetch into a second
// shared buffer), so one barrier a stage suffices.
#include <string>
#include <type_traits>

#include "kernels/cuda/dequant.cuh"
#include "kernels/cuda/matmul.cuh"
#include "kernels/cuda/mma.cuh"

namespace niwa::kernels::cuda {

namespace {

constexpr int kBM = 128;      // weight rows per block
constexpr int kBN = 128;      // x rows per block
constexpr int kBK = 32;       // inputs per stage
constexpr int kLd = kBK + 8;  // fp16 per shared row: 80 bytes, so ldmatrix rows hit distinct banks
constexpr int kThreads = 256;

// 16 weights of row o from input k (k a multiple of 16), zero outside the matrix.
template <DType T>
__device__ __forceinline__ void load_weights(const MatmulArgs& a, int64_t o, int64_t k, float (&v)[16]) {
    if (o >= a.out) {
#pragma unroll
        for (int i = 0; i < 16; ++i) v[i] = 0.0f;
        return;
    }
    if constexpr (T == DType::PQ2_0T) {
        if (k < a.in) return tiled_weights16(a.w, a.in, o, k, v);
#pragma unroll
        for (int i = 0; i < 16; ++i) v[i] = 0.0f;
    } else {
        weights_at<T>(a.w + static_cast<size_t>(o) * a.stride, k, a.in, v);
    }
}

// 16 inputs of x row n from input k, zero outside.
__device__ __forceinline__ void load_x(const MatmulArgs& a, int64_t n, int64_t k, bool vec, float (&v)[16]) {
    const float* xr = a.x + n * a.ldx + k;
    if (n < a.n && vec && k + 16 <= a.in) {
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const float4 f = reinterpret_cast<const float4*>(xr)[i];
            v[4 * i] = f.x, v[4 * i + 1] = f.y, v[4 * i + 2] = f.z, v[4 * i + 3] = f.w;
        }
        return;
    }
#pragma unroll
    for (int i = 0; i < 16; ++i) v[i] = (n < a.n && k + i < a.in) ? xr[i] : 0.0f;
}

template <DType T>
__global__ void __launch_bounds__(kThreads) matmul_mma_prefill_kernel(MatmulArgs a, bool x_vec) {
    __shared__ __align__(16) __half ws[2][kBM][kLd];
    __shared__ __align__(16) __half xs[2][kBN][kLd];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm = warp & 1, wn = warp >> 1;  // warp tile: 64 weight rows x 32 x rows
    const int g = lane >> 2, tig = lane & 3;
    const int64_t o0 = static_cast<int64_t>(blockIdx.x) * kBM, n0 = static_cast<int64_t>(blockIdx.y) * kBN;
    const int lr = tid >> 1, lk = (tid & 1) * 16;  // loader: row lr, inputs lk .. lk + 16

    float acc[4][4][4] = {};
    float wv[16], xv[16];
    load_weights<T>(a, o0 + lr, lk, wv);
    load_x(a, n0 + lr, lk, x_vec, xv);
    store_f16x16(&ws[0][lr][lk], wv);
    store_f16x16(&xs[0][lr][lk], xv);
    __syncthreads();

    const int stages = static_cast<int>((a.in + kBK - 1) / kBK);
    for (int st = 0; st < stages; ++st) {
        const int buf = st & 1;
        const bool more = st + 1 < stages;
        if (more) {
            const int64_t k = static_cast<int64_t>(st + 1) * kBK + lk;
            load_weights<T>(a, o0 + lr, k, wv);
            load_x(a, n0 + lr, k, x_vec, xv);
        }
#pragma unroll
        for (int ks = 0; ks < kBK; ks += 16) {
            uint32_t af[4][4], bfr[4][2];
#pragma unroll
            for (int mt = 0; mt < 4; ++mt)
                ldmatrix_x4(af[mt], &ws[buf][64 * wm + 16 * mt + (lane & 15)][ks + (lane >> 4) * 8]);
#pragma unroll
            for (int p = 0; p < 2; ++p) {
                uint32_t r[4];
                ldmatrix_x4(
                    r, &xs[buf][32 * wn + 16 * p + (lane >> 4) * 8 + (lane & 7)][ks + ((lane >> 3) & 1) * 8]);
                bfr[2 * p][0] = r[0], bfr[2 * p][1] = r[1], bfr[2 * p + 1][0] = r[2],
                        bfr[2 * p + 1][1] = r[3];
            }
#pragma unroll
            for (int mt = 0; mt < 4; ++mt)
#pragma unroll
                for (int nt = 0; nt < 4; ++nt)
                    mma_f16(acc[mt][nt], af[mt][0], af[mt][1], af[mt][2], af[mt][3], bfr[nt][0], bfr[nt][1]);
        }
        if (more) {
            store_f16x16(&ws[buf ^ 1][lr][lk], wv);
            store_f16x16(&xs[buf ^ 1][lr][lk], xv);
        }
        __syncthreads();
    }

#pragma unroll
    for (int mt = 0; mt < 4; ++mt)
#pragma unroll
        for (int nt = 0; nt < 4; ++nt)
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                const int64_t o = o0 + 64 * wm + 16 * mt + g + (i >> 1) * 8;
                const int64_t n = n0 + 32 * wn + 8 * nt + 2 * tig + (i & 1);
                if (o < a.out && n < a.n) a.y[n * a.ldy + o] = acc[mt][nt][i];
            }
}

template <DType T>
void launch(cudaStream_t stream, const MatmulArgs& a) {
    const bool x_vec = reinterpret_cast<uintptr_t>(a.x) % 16 == 0 && a.ldx % 4 == 0;
    const dim3 grid(grid_for(a.out, kBM), grid_for(a.n, kBN));
    matmul_mma_prefill_kernel<T><<<grid, kThreads, 0, stream>>>(a, x_vec);
    NIWA_CUDA_LAUNCHED("matmul_mma_prefill_kernel");
}

}  // namespace

void launch_mma_prefill(CudaOps& ops, const MatmulArgs& a) {
    with_any_weight_type(a.type, [&](auto tag) { launch<decltype(tag)::value>(ops.stream(), a); });
}

}  // namespace niwa::kernels::cuda
