// What a rotation reads (rotate.cu's warp kernel, and the decode matmuls' x staging where
// they take a rotated input, matmul_decode.cuh): x's channels, swiglu(gate, up), GDN's gated
// rmsnorm per head, attention's sigmoid-gated output, or the residual stream's RMS norm. Header
// for .cu files (C++17).
#pragma once

#include <cstdint>

#include "kernels/cuda/activations.cuh"

namespace niwa::kernels::cuda {

// fetch() loads a channel's inputs; values() turns a lane's fetched channels (lane + 32 j of a
// span that starts a head) into the values to rotate, with the whole warp (the gated norm sums
// each head over it). Callers fetch all of a lane's channels before they use any, so their loads
// are in flight together.
struct ReadX {
    const float* x;
    int64_t ldx;
    using Raw = float;
    __device__ Raw fetch(int64_t row, int64_t c) const { return x[row * ldx + c]; }
    template <int N>
    __device__ void values(const Raw (&raw)[N], float (&v)[N]) const {
#pragma unroll
        for (int j = 0; j < N; ++j) v[j] = raw[j];
    }
};
struct ReadSwiglu {
    const float *gate, *up;
    int64_t ldg, ldu;
    using Raw = float2;
    __device__ Raw fetch(int64_t row, int64_t c) const {
        return make_float2(gate[row * ldg + c], up[row * ldu + c]);
    }
    template <int N>
    __device__ void values(const Raw (&raw)[N], float (&v)[N]) const {
#pragma unroll
        for (int j = 0; j < N; ++j) v[j] = swiglu_value(raw[j].x, raw[j].y);
    }
};
// Heads of W channels (32 <= W, W dividing the block): head h of the block is j in
// [h W/32, (h+1) W/32) of every lane. y = x * rsqrt(mean(x²) + eps) * w * silu(z), as
// rmsnorm_gated (gdn_small.cu) computes it.
struct NormGatedRaw {
    float x, z, w;
};
template <int W>
struct ReadNormGated {
    const float *x, *z, *w;
    int64_t ldx, ldz;
    float eps;
    using Raw = NormGatedRaw;
    __device__ Raw fetch(int64_t row, int64_t c) const {
        return {x[row * ldx + c], z[row * ldz + c], w ? w[c % W] : 1.0f};
    }
    template <int N>
    __device__ void values(const Raw (&raw)[N], float (&v)[N]) const {
        constexpr int kPer = W / 32;
        if constexpr (N < kPer) {  // a block smaller than a head: never launched
#pragma unroll
            for (int j = 0; j < N; ++j) v[j] = 0.0f;
        } else {
#pragma unroll
            for (int h = 0; h < N / kPer; ++h) {
                float ss = 0.0f;
#pragma unroll
                for (int j = h * kPer; j < (h + 1) * kPer; ++j) ss = fmaf(raw[j].x, raw[j].x, ss);
#pragma unroll
                for (int o = 16; o > 0; o >>= 1) ss += __shfl_xor_sync(0xffffffffu, ss, o);
                const float inv = 1.0f / sqrtf(ss / float(W) + eps);
#pragma unroll
                for (int j = h * kPer; j < (h + 1) * kPer; ++j)
                    v[j] = raw[j].x * inv * raw[j].w * silu_value(raw[j].z);
            }
        }
    }
};

// x * sigmoid(gate) per head of `width` (a power of two, 1 << log_width) channels: the gate of
// row r's head h is row r * heads + h of gate (attention's gate halves), as sigmoid_mul computes
// it.
struct ReadSigmoidGate {
    const float *x, *gate;
    int64_t ldx, ldg;
    int heads, log_width;
    using Raw = float2;
    __device__ Raw fetch(int64_t row, int64_t c) const {
        const int cc = static_cast<int>(c), head = cc >> log_width, at = cc - (head << log_width);
        const float* g = gate + (row * heads + head) * ldg;
        return make_float2(x[row * ldx + c], g[at]);
    }
    template <int N>
    __device__ void values(const Raw (&raw)[N], float (&v)[N]) const {
#pragma unroll
        for (int j = 0; j < N; ++j) v[j] = sigmoid_mul_value(raw[j].x, raw[j].y);
    }
};

// A row of the residual stream times its norm weight (ResidualNorm, ops.h): values() gives x w;
// the row's 1 / rms comes from the sums of squares a rotated_matmul_add left in `parts` parts
// (inverse_rms), and the decode matmul's staging multiplies by it (stage_rotated). `normed`,
// when set, receives the plain normed rows (written by the blocks of row group 0).
struct ReadResidualNorm {
    static constexpr int kMaxRows = 4;
    const float *x, *w, *squares;
    int64_t ldx, lds;
    int parts;
    float cols, eps;
    float* normed;
    int64_t ldn;
    using Raw = float2;
    __device__ Raw fetch(int64_t row, int64_t c) const { return make_float2(x[row * ldx + c], w[c]); }
    template <int N>
    __device__ void values(const Raw (&raw)[N], float (&v)[N]) const {
#pragma unroll
        for (int j = 0; j < N; ++j) v[j] = raw[j].x * raw[j].y;
    }
    // 1 / sqrt(mean(x²) + eps) of rows [0, rows), to every lane of the calling warp: each lane sums
    // parts lane, lane + 32, ..., then the warp's tree; the same order in every warp and block. A
    // lane's first kAtOnce parts a row are loaded together (one trip to the L2 up to 128 parts).
    __device__ void inverse_rms(int rows, int lane, float (&inv)[kMaxRows]) const {
        constexpr int kAtOnce = 4;
        float s[kMaxRows] = {};
        for (int p0 = lane; p0 < parts; p0 += 32 * kAtOnce) {
            float v[kAtOnce][kMaxRows];
#pragma unroll
            for (int j = 0; j < kAtOnce; ++j)
#pragma unroll
                for (int r = 0; r < kMaxRows; ++r)
                    v[j][r] = r < rows && p0 + 32 * j < parts ? squares[r * lds + p0 + 32 * j] : 0.0f;
#pragma unroll
            for (int j = 0; j < kAtOnce; ++j)
#pragma unroll
                for (int r = 0; r < kMaxRows; ++r) s[r] += v[j][r];
        }
#pragma unroll
        for (int r = 0; r < kMaxRows; ++r) {
#pragma unroll
            for (int o = 16; o > 0; o >>= 1) s[r] += __shfl_xor_sync(0xffffffffu, s[r], o);
            inv[r] = 1.0f / sqrtf(s[r] / cols + eps);
        }
    }
};

}  // namespace niwa::kernels::cuda
