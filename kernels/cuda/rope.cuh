// What the rope kernels share (rope.cu, qk_norm_rope.cu): the rotation frequencies theta^(-2i /
// n_rot), computed on the host in double as the CPU oracle does (a double pow per thread was
// most of a kernel's time), an angle's cos and sin, and the rotation of one pair. Header for .cu
// files (C++17).
#pragma once

#include <cmath>
#include <string>

#include "kernels/cuda/cuda_ops.h"

namespace niwa::kernels::cuda {

constexpr int kMaxRopeHalf = 256;
struct Frequencies {
    double f[kMaxRopeHalf];
};

inline Frequencies rope_frequencies(float theta, int n_rot, const char* op) {
    require(n_rot / 2 <= kMaxRopeHalf, op,
            "n_rot " + std::to_string(n_rot) + " is above " + std::to_string(2 * kMaxRopeHalf));
    Frequencies freq;
    for (int i = 0; i < n_rot / 2; ++i) freq.f[i] = std::pow(static_cast<double>(theta), -2.0 * i / n_rot);
    return freq;
}

// cos and sin of position x frequency, the angle in double as the CPU oracle computes it (exact
// at long positions).
__device__ __forceinline__ float2 rope_cos_sin(double position, double frequency) {
    double sd, cd;
    sincos(position * frequency, &sd, &cd);
    return make_float2(static_cast<float>(cd), static_cast<float>(sd));
}

// NeoX rotate-half: the pair (a, b) = (v[i], v[i + n_rot / 2]) turned by the angle of cs.
__device__ __forceinline__ void rope_rotate(float& a, float& b, float2 cs) {
    const float x = a, y = b;
    a = x * cs.x - y * cs.y;
    b = x * cs.y + y * cs.x;
}

}  // namespace niwa::kernels::cuda
