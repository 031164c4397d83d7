// The activations the element-wise kernels and their fused forms share, so every kernel computes
// them the same way. Header for .cu files (C++17).
#pragma once

namespace niwa::kernels::cuda {

// x * sigmoid(x)
__device__ __forceinline__ float silu_value(float x) {
    return x / (1.0f + expf(-x));
}

// silu(g) * u
__device__ __forceinline__ float swiglu_value(float g, float u) {
    return silu_value(g) * u;
}

// x * sigmoid(g)
__device__ __forceinline__ float sigmoid_mul_value(float x, float g) {
    return x * (1.0f / (1.0f + expf(-g)));
}

}  // namespace niwa::kernels::cuda
