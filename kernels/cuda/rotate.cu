// rotate: the Prism block Hadamard (MODEL.md "The Hadamard fold"), fp32. Blocks of 32..1024
// channels: a warp per (Hadamard block, row) in registers, or above 256 channels a team of
// warps, one per 256, meeting in shared memory (hadamard.cuh). Other sizes: one
// CUDA block per (Hadamard block, row) in shared memory. Both run the CPU oracle's butterflies
// in its order, so they agree bit for bit; y may alias x (a block's channels are all read
// before any is written, by the warp or block that owns them). swiglu_rotate computes the
// FFN's swiglu, rmsnorm_gated_rotate GDN's gated norm, as the warp kernel reads its channels.
#include <algorithm>
#include <cmath>
#include <string>

#include <type_traits>

#include "kernels/cuda/activations.cuh"
#include "kernels/cuda/cuda_ops.h"
#include "kernels/cuda/hadamard.cuh"
#include "kernels/cuda/pdl.cuh"
#include "kernels/cuda/rotate_sources.cuh"

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

// A warp per span of a Hadamard block (HadamardSplit: the whole block up to 256 channels, a
// team of warps in one CUDA block for more), per row.
template <int B, bool SignsFirst, typename Read>
__global__ void __launch_bounds__(kWarpsPerBlock * 32)
    rotate_warp_kernel(Read read, float* y, int64_t ldy, const float* signs, int n_blocks, float norm) {
    constexpr int kSpan = HadamardSplit<B>::kSpan, kTeam = HadamardSplit<B>::kTeam;
    static_assert(kWarpsPerBlock % kTeam == 0, "a team in one CUDA block");
    pdl_release();  // the matmul after this may start streaming its weights
    pdl_wait();     // launched to overlap the kernel before it: its launch is hidden
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, q = warp % kTeam;
    const int hb = (blockIdx.x * kWarpsPerBlock + warp) / kTeam;
    const bool live = hb < n_blocks;
    if (kTeam == 1 && !live) return;
    const int64_t row = blockIdx.y;
    const int64_t c0 = static_cast<int64_t>(hb) * B + q * kSpan + lane;
    float v[kSpan / 32], sg[kSpan / 32];
    if (live) {
        typename Read::Raw raw[kSpan / 32];
#pragma unroll
        for (int j = 0; j < kSpan / 32; ++j) {
            raw[j] = read.fetch(row, c0 + 32 * j);
            sg[j] = signs[c0 + 32 * j];
        }
        asm volatile(
            "" ::
                : "memory");  // keep the loads together: the compiler would interleave them with value()
        read.values(raw, v);
#pragma unroll
        for (int j = 0; j < kSpan / 32; ++j)
            if (SignsFirst) v[j] *= sg[j];
        hadamard_warp<kSpan>(v, lane);
    }
    if constexpr (kTeam == 1) {
        float* yr = y + row * ldy + c0;
#pragma unroll
        for (int j = 0; j < kSpan / 32; ++j) yr[32 * j] = SignsFirst ? v[j] * norm : v[j] * norm * sg[j];
    } else {
        // The team's spans meet in shared memory; its threads then finish the block's elements.
        __shared__ float team[kWarpsPerBlock * kSpan];
        float* blk = team + (warp - q) * kSpan;
        if (live)
#pragma unroll
            for (int j = 0; j < kSpan / 32; ++j) blk[q * kSpan + 32 * j + lane] = v[j];
        __syncthreads();
        if (!live) return;
        const int64_t b0 = static_cast<int64_t>(hb) * B;
        float* yr = y + row * ldy + b0;
#pragma unroll
        for (int i = q * 32 + lane; i < kSpan; i += 32 * kTeam) {
            float out[kTeam];
            hadamard_cross<kTeam>(blk, i, out);
#pragma unroll
            for (int s = 0; s < kTeam; ++s) {
                const int c = s * kSpan + i;
                yr[c] = SignsFirst ? out[s] * norm : out[s] * norm * signs[b0 + c];
            }
        }
    }
}

// Whether the warp kernel can rotate rows of `cols` channels by r with its signs (the fused ops
// fall back to their parts otherwise).
bool warp_rotation(const Rotation& r, int64_t cols) {
    return warp_hadamard_block(r.block) && r.signs && cols % r.block == 0;
}

// A warp per (span of a Hadamard block, row) of `rows` rows of `cols` channels (block
// warp-sized).
template <bool SignsFirst, typename Read>
void launch_rotate_warps(const CudaOps& ops, const Read& read, int64_t rows, int64_t cols, const Tensor& y,
                         const Rotation& r) {
    const int n_blocks = static_cast<int>(cols / r.block);
    const float norm = 1.0f / std::sqrt(static_cast<float>(r.block));
    with_hadamard_block(r.block, [&](auto b) {
        constexpr int B = decltype(b)::value;
        const dim3 grid(grid_for(int64_t(n_blocks) * HadamardSplit<B>::kTeam, kWarpsPerBlock),
                        static_cast<unsigned>(rows));
        NIWA_CUDA_CHECK(launch_overlapping(ops.overlap_launches(), rotate_warp_kernel<B, SignsFirst, Read>,
                                           grid, dim3(kWarpsPerBlock * 32), 0, ops.stream(), read,
                                           y.as<float>(), y.ld, r.signs, n_blocks, norm));
    });
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
        const ReadX read{x.as<const float>(), x.ld};
        if (signs_first)
            launch_rotate_warps<true>(*this, read, x.rows, x.cols, y, r);
        else
            launch_rotate_warps<false>(*this, read, x.rows, x.cols, y, r);
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

// Fused where the warp kernel takes the block (the FFN's 1024), else swiglu then rotate.
void CudaOps::swiglu_rotate(const Tensor& gate, const Tensor& up, const Rotation& r, const Tensor& y) {
    require_f32(gate, "swiglu_rotate", "gate");
    require_f32(up, "swiglu_rotate", "up");
    require_f32(y, "swiglu_rotate", "y");
    require_same_shape(gate, y, "swiglu_rotate");
    require_same_shape(up, y, "swiglu_rotate");
    if (!warp_rotation(r, y.cols)) return Ops::swiglu_rotate(gate, up, r, y);
    if (y.rows == 0 || y.cols == 0) return;
    launch_rotate_warps<true>(*this, ReadSwiglu{gate.as<const float>(), up.as<const float>(), gate.ld, up.ld},
                              y.rows, y.cols, y, r);
}

// Fused where the warp kernel takes the block and a head is 64, 128 or 256 channels dividing it
// (27B: heads of 128 in blocks of 1024), else rmsnorm_gated then rotate.
void CudaOps::rmsnorm_gated_rotate(const Tensor& x, const float* w, const Tensor& z, float eps, int64_t width,
                                   const Rotation& r, const Tensor& y) {
    const char* op = "rmsnorm_gated_rotate";
    require_f32(x, op, "x");
    require_f32(z, op, "z");
    require_f32(y, op, "y");
    require_same_shape(x, y, op);
    require_same_shape(z, y, op);
    const bool fused =
        warp_rotation(r, y.cols) && (width == 64 || width == 128 || width == 256) && r.block % width == 0;
    if (!fused) return Ops::rmsnorm_gated_rotate(x, w, z, eps, width, r, y);
    if (y.rows == 0 || y.cols == 0) return;
    const auto launch = [&](auto head) {
        constexpr int W = decltype(head)::value;
        launch_rotate_warps<true>(
            *this, ReadNormGated<W>{x.as<const float>(), z.as<const float>(), w, x.ld, z.ld, eps}, y.rows,
            y.cols, y, r);
    };
    if (width == 64) return launch(std::integral_constant<int, 64>{});
    if (width == 128) return launch(std::integral_constant<int, 128>{});
    launch(std::integral_constant<int, 256>{});
}

}  // namespace niwa::kernels::cuda
