// residual_norm: the residual add, the RMS norm and the input Hadamard of the next matmuls in
// one kernel (three launches and three trips through memory become one). One CUDA block per
// row keeps the row in shared memory: x + y is written back once, the sum of squares is a
// fp32 tree, xn is written, and each warp takes spans of 256 channels of the shared copy into its
// registers, blocks of more finishing in shared memory (hadamard.cuh; other block sizes:
// butterflies in shared memory), in the CPU oracle's order.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <string>

#include <type_traits>

#include <cooperative_groups.h>

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

// x += y in place over channels [0, n) (y null: x as it is), the sums copied to buf; returns
// this thread's sum of their squares. kPer channels a thread at a time, all loaded before any is
// stored (a store to x could alias y as far as the compiler knows: it would wait for each load
// in turn).
template <int kPer>
__device__ __forceinline__ float add_residual(float* x, const float* y, float* buf, int n) {
    float ss = 0.0f;
    for (int c0 = threadIdx.x; c0 < n; c0 += kPer * blockDim.x) {
        float v[kPer], u[kPer];
#pragma unroll
        for (int i = 0; i < kPer; ++i) {
            const int c = c0 + i * blockDim.x;
            v[i] = c < n ? x[c] : 0.0f;
            u[i] = y && c < n ? y[c] : 0.0f;
        }
#pragma unroll
        for (int i = 0; i < kPer; ++i) {
            const int c = c0 + i * blockDim.x;
            if (c >= n) break;
            if (y) {
                v[i] += u[i];
                x[c] = v[i];
            }
            buf[c] = v[i];
            ss += v[i] * v[i];
        }
    }
    return ss;
}

// xn = buf inv w and buf = that times the sign, over channels [0, n) (wsg: (w, sign) each; a
// thread reads back only the channels it wrote).
__device__ __forceinline__ void norm_channels(float* buf, const float2* wsg, float inv, float* xn, int n) {
    for (int c = threadIdx.x; c < n; c += blockDim.x) {
        const float2 ws = wsg[c];
        const float v = buf[c] * inv * ws.x;
        xn[c] = v;
        buf[c] = v * ws.y;
    }
}

// xr = the Hadamard blocks of buf[0, cols) (B warp-sized) times norm: each warp takes spans of
// the row (HadamardSplit) in registers; blocks of more than 256 channels then finish in shared
// memory, a thread per element of a span. Called by the whole CUDA block after buf is written
// and synchronised.
template <int B>
__device__ __forceinline__ void hadamard_row(float* buf, int cols, float* xr, float norm) {
    constexpr int kSpan = HadamardSplit<B>::kSpan, kTeam = HadamardSplit<B>::kTeam;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, warps = blockDim.x >> 5;
    for (int sp = warp; sp < cols / kSpan; sp += warps) {
        float v[kSpan / 32];
#pragma unroll
        for (int j = 0; j < kSpan / 32; ++j) v[j] = buf[sp * kSpan + 32 * j + lane];
        hadamard_warp<kSpan>(v, lane);
#pragma unroll
        for (int j = 0; j < kSpan / 32; ++j) {
            if constexpr (kTeam == 1)
                xr[sp * kSpan + 32 * j + lane] = v[j] * norm;
            else
                buf[sp * kSpan + 32 * j + lane] = v[j];
        }
    }
    if constexpr (kTeam > 1) {
        __syncthreads();
        for (int idx = threadIdx.x; idx < cols / kTeam; idx += blockDim.x) {
            const int hb = idx / kSpan, i = idx - hb * kSpan;
            float out[kTeam];
            hadamard_cross<kTeam>(buf + hb * B, i, out);
#pragma unroll
            for (int s = 0; s < kTeam; ++s) xr[hb * B + s * kSpan + i] = out[s] * norm;
        }
    }
}

// B: the Hadamard block when warps can take it (hadamard.cuh), 0 otherwise. The norm weight
// and signs read no earlier kernel's output: they are fetched before pdl_wait (the kernel may
// start while the matmul before it still runs), into wsg, where each thread reads back only the
// channels it wrote (no barrier). Then x and y cost the kernel one trip to memory.
template <int B>
__global__ void __launch_bounds__(kThreads) residual_norm_kernel(ResidualArgs a) {
    pdl_release();                  // the matmul after this may start streaming its weights
    extern __shared__ float buf[];  // [cols], then wsg: (w, sign) per channel
    float2* wsg = reinterpret_cast<float2*>(buf + ((a.cols + 1) & ~1));
    for (int c = threadIdx.x; c < a.cols; c += blockDim.x)
        wsg[c] = make_float2(a.w[c], a.signs ? a.signs[c] : 1.0f);
    pdl_wait();
    const int64_t row = blockIdx.x;
    float* x = a.x + row * a.ldx;
    const float* y = a.y ? a.y + row * a.ldy : nullptr;
    const float ss = block_sum(add_residual<8>(x, y, buf, a.cols));
    norm_channels(buf, wsg, 1.0f / sqrtf(ss / static_cast<float>(a.cols) + a.eps), a.xn + row * a.ldn,
                  a.cols);
    float* xr = a.xr + row * a.ldr;
    if (!a.signs) {
        for (int c = threadIdx.x; c < a.cols; c += blockDim.x) xr[c] = buf[c];
        return;
    }
    __syncthreads();
    if constexpr (B != 0) {
        hadamard_row<B>(buf, a.cols, xr, a.norm);
        return;
    }
    hadamard_shared(buf, a.cols, a.block);
    for (int c = threadIdx.x; c < a.cols; c += blockDim.x) xr[c] = buf[c] * a.norm;
}

// At a few rows (decode) one block a row leaves the row's loads, sums and stores to one SM. Here
// a cluster of K blocks splits the row into slices of whole Hadamard blocks (block rank r:
// channels [r width, (r + 1) width)); each adds, squares and writes its own slice (x in place:
// no block reads another's), the K sums of squares meet through distributed shared memory in
// rank order (every block gets the same total), and each norms and rotates its slice.
// Only up to kClusterMaxRows rows: whole 27B decode steps, clusters against one block a row,
// measured batch 1 +0.9 %, 2 the same, 4 -1.3 %, 24 -1.7 % (docs/BENCHMARKS.md, eighteenth pass).
constexpr int kClusterThreads = 256;
constexpr int kMaxCluster = 8;
constexpr int64_t kClusterMaxRows = 2;

template <int B>
__global__ void __launch_bounds__(kClusterThreads) residual_norm_cluster_kernel(ResidualArgs a, int width) {
    namespace cg = cooperative_groups;
    const cg::cluster_group cluster = cg::this_cluster();
    pdl_release();
    extern __shared__ float buf[];  // [width], then wsg: (w, sign) per channel of the slice
    __shared__ float part;          // this slice's sum of squares, read by the whole cluster
    float2* wsg = reinterpret_cast<float2*>(buf + ((width + 1) & ~1));
    const int c0 = static_cast<int>(cluster.block_rank()) * width;
    for (int c = threadIdx.x; c < width; c += blockDim.x) wsg[c] = make_float2(a.w[c0 + c], a.signs[c0 + c]);
    pdl_wait();
    const int64_t row = blockIdx.y;
    float* x = a.x + row * a.ldx + c0;
    const float* y = a.y ? a.y + row * a.ldy + c0 : nullptr;
    const float ss = block_sum(add_residual<4>(x, y, buf, width));
    if (threadIdx.x == 0) part = ss;
    cluster.sync();
    float total = 0.0f;
    for (unsigned r = 0; r < cluster.num_blocks(); ++r) total += *cluster.map_shared_rank(&part, r);
    norm_channels(buf, wsg, 1.0f / sqrtf(total / static_cast<float>(a.cols) + a.eps), a.xn + row * a.ldn + c0,
                  width);
    __syncthreads();
    hadamard_row<B>(buf, width, a.xr + row * a.ldr + c0, a.norm);
    cluster.sync();  // no block leaves while another may still read its `part`
}

// Blocks a cluster takes for rows of n_blocks Hadamard blocks: the most, up to kMaxCluster,
// that divides them; 1: no cluster.
int cluster_size(int64_t n_blocks) {
    for (int64_t k = std::min<int64_t>(n_blocks, kMaxCluster); k > 1; --k)
        if (n_blocks % k == 0) return static_cast<int>(k);
    return 1;
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
    const int threads =
        static_cast<int>(std::min<int64_t>(kThreads, std::max<int64_t>(32, (x.cols + 31) / 32 * 32)));
    // A kernel's `bytes` of dynamic shared memory and its static shared memory (block_sum's, the
    // cluster's part) within what a block may have; past the 48 KiB a block has by default, the
    // kernel allowed all of that (allow_max_smem: once per device, `configured` the kernel's own).
    const auto fit = [&](auto kernel, size_t bytes, std::atomic<uint64_t>& configured) {
        const size_t total = bytes + static_smem(kernel);
        require(total <= props_.sharedMemPerBlockOptin, op,
                std::to_string(x.cols) + " channels do not fit in shared memory");
        if (total > props_.sharedMemPerBlock) allow_max_smem(*this, kernel, configured);
    };
    static const bool clusters = !env_switched_off("NIWA_RESNORM_CLUSTER");
    const int k = r.block != 0 && warp_hadamard_block(r.block) ? cluster_size(x.cols / r.block) : 1;
    if (k > 1 && clusters && x.rows <= kClusterMaxRows && props_.major >= 9) {
        const int width = static_cast<int>(x.cols / k);
        const size_t slice_smem = static_cast<size_t>((width + 1) & ~1) * 3 * sizeof(float);
        with_hadamard_block(r.block, [&](auto b) {
            auto* kernel = residual_norm_cluster_kernel<decltype(b)::value>;
            static std::atomic<uint64_t> configured{0};
            fit(kernel, slice_smem, configured);
            NIWA_CUDA_CHECK(launch_clustered(overlap_launches(), static_cast<unsigned>(k), kernel,
                                             dim3(static_cast<unsigned>(k), static_cast<unsigned>(x.rows)),
                                             dim3(kClusterThreads), slice_smem, stream_, a, width));
        });
        NIWA_CUDA_LAUNCHED("residual_norm_cluster_kernel");
        return;
    }
    const size_t smem = static_cast<size_t>((x.cols + 1) & ~int64_t(1)) * 3 * sizeof(float);
    const auto launch = [&](auto kernel, std::atomic<uint64_t>& configured) {
        fit(kernel, smem, configured);
        NIWA_CUDA_CHECK(launch_overlapping(overlap_launches(), kernel, dim3(static_cast<unsigned>(x.rows)),
                                           dim3(static_cast<unsigned>(threads)), smem, stream_, a));
    };
    if (r.block != 0 && warp_hadamard_block(r.block)) {
        with_hadamard_block(r.block, [&](auto b) {
            static std::atomic<uint64_t> configured{0};
            launch(residual_norm_kernel<decltype(b)::value>, configured);
        });
    } else {
        static std::atomic<uint64_t> configured{0};
        launch(residual_norm_kernel<0>, configured);
    }
    NIWA_CUDA_LAUNCHED("residual_norm_kernel");
}

}  // namespace niwa::kernels::cuda
