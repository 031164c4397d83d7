// Block-wide reductions for .cu files (C++17).
#pragma once

namespace niwa::kernels::cuda {

// The sum of v over every thread of the CUDA block (up to 1024 threads), returned to each:
// a warp tree, then one across the warps' sums. Once per kernel (its shared slots are reused
// without a barrier at the start).
__device__ __forceinline__ float block_sum(float v) {
    __shared__ float partial[32];
    for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    if (lane == 0) partial[warp] = v;
    __syncthreads();
    const int warps = (blockDim.x + 31) >> 5;
    v = lane < warps ? partial[lane] : 0.0f;
    for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
    return v;
}

}  // namespace niwa::kernels::cuda
