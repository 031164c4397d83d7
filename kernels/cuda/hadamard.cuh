// The Hadamard butterflies of one block of B channels (B a power of two, 32..1024) in one
// warp's registers: channel e = 32 j + lane lives in v[j] of lane `lane`. Stages run in the CPU
// oracle's order (pair distance 1, 2, 4, ...) and each pair becomes (a + b, a - b) exactly as
// there, so the result is bit for bit the CPU's. Distances below 32 pair lanes (shuffles),
// the others pair registers of one lane. hadamard_shared runs the same butterflies with a whole
// CUDA block over shared memory, for any power-of-two block. Header for .cu files (C++17).
#pragma once

namespace niwa::kernels::cuda {

constexpr bool warp_hadamard_block(int b) {
    return b >= 32 && b <= 1024 && (b & (b - 1)) == 0;
}

// The stages of pair distance 1, 2, 4, 8, 16 across a warp's lanes, on each of v's values.
template <int N>
__device__ __forceinline__ void lane_butterflies(float (&v)[N], int lane) {
#pragma unroll
    for (int len = 1; len < 32; len <<= 1) {
        const bool upper = (lane & len) != 0;
#pragma unroll
        for (int j = 0; j < N; ++j) {
            const float other = __shfl_xor_sync(0xffffffffu, v[j], len);
            v[j] = upper ? other - v[j] : v[j] + other;
        }
    }
}

// The stages of pair distance d = 1, 2, 4, ... between values v[j] and v[j + d] while
// unit * d < block (v[j] holds channel unit * j + a fixed offset: a lane's registers, or one
// channel of each span).
template <int N>
__device__ __forceinline__ void register_butterflies(float (&v)[N], int unit, int block) {
#pragma unroll
    for (int d = 1; d < N; d <<= 1) {
        if (unit * d >= block) break;
#pragma unroll
        for (int j = 0; j < N; ++j) {
            if (j & d) continue;
            const float a = v[j], b = v[j + d];
            v[j] = a + b;
            v[j + d] = a - b;
        }
    }
}

template <int B>
__device__ __forceinline__ void hadamard_warp(float (&v)[B / 32], int lane) {
    lane_butterflies(v, lane);
    register_butterflies(v, 32, B);
}

// A block of more than 256 channels is shared by a team of B / 256 warps: each warp runs the
// stages up to pair distance 128 on its span of 256 channels in registers (hadamard_warp<256>),
// then the team meets in shared memory for the stages of distance 256 and up (hadamard_cross).
// One warp alone held 32 channels a lane and ran all ten stages: a long chain with few warps.
template <int B>
struct HadamardSplit {
    static constexpr int kSpan = B < 256 ? B : 256;  // channels a warp holds
    static constexpr int kTeam = B / kSpan;          // warps a Hadamard block
};

// The stages of pair distance 256, 512, ... for element i (0..255) of each of a block's S spans
// (blk: the block in shared memory, its spans through hadamard_warp<256>), in the oracle's order;
// out[s] becomes channel 256 s + i of the result.
template <int S>
__device__ __forceinline__ void hadamard_cross(const float* blk, int i, float (&out)[S]) {
#pragma unroll
    for (int s = 0; s < S; ++s) out[s] = blk[256 * s + i];
    register_butterflies(out, 256, 256 * S);
}

// In shared memory: every Hadamard block of `block` channels of buf[0, cols) at once, pair t
// of the row being pair t % (block / 2) of block t / (block / 2). Called by every thread of the
// CUDA block after buf is written and synchronised; returns synchronised.
__device__ __forceinline__ void hadamard_shared(float* buf, int cols, int block) {
    const int half = block / 2;
    for (int len = 1; len < block; len <<= 1) {
        for (int t = threadIdx.x; t < cols / 2; t += blockDim.x) {
            const int b = t / half, u = t - b * half;
            const int i = b * block + (u / len) * 2 * len + u % len;
            const float p = buf[i], q = buf[i + len];
            buf[i] = p + q;
            buf[i + len] = p - q;
        }
        __syncthreads();
    }
}

// Calls f(std::integral_constant<int, B>{}) for a block size that warp_hadamard_block accepts.
template <typename F>
void with_hadamard_block(int b, F&& f) {
    switch (b) {
        case 32:
            return f(std::integral_constant<int, 32>{});
        case 64:
            return f(std::integral_constant<int, 64>{});
        case 128:
            return f(std::integral_constant<int, 128>{});
        case 256:
            return f(std::integral_constant<int, 256>{});
        case 512:
            return f(std::integral_constant<int, 512>{});
        default:
            return f(std::integral_constant<int, 1024>{});
    }
}

}  // namespace niwa::kernels::cuda
