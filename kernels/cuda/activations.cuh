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

__device__ __forceinline__ float sigmoid_value(float x) {
    return 1.0f / (1.0f + expf(-x));
}

// x * sigmoid(g)
__device__ __forceinline__ float sigmoid_mul_value(float x, float g) {
    return x * sigmoid_value(g);
}

// GDN's log decay (gdn_gates): a * softplus(alpha + dt_bias), softplus linear above 20.
__device__ __forceinline__ float gdn_log_decay(float alpha, float a, float dt_bias) {
    const float x = alpha + dt_bias;
    return a * (x > 20.0f ? x : log1pf(expf(x)));
}

}  // namespace niwa::kernels::cuda
