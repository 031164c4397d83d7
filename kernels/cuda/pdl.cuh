// Programmatic dependent launch (sm_90 and later). A kernel launched with
// launch_overlapping() may start while the kernel before it on the stream still runs: it
// does what reads no earlier kernel's output (a matmul streams its first weight tiles), then
// pdl_wait() blocks until every earlier kernel has finished and its writes are visible. A
// kernel calls pdl_release() when the next one may be scheduled (it still waits for our
// completion before reading anything). Both are no-ops where a kernel was not launched so.
// Header for .cu files (C++17).
#pragma once

#include <cuda_runtime.h>

namespace niwa::kernels::cuda {

__device__ __forceinline__ void pdl_release() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

__device__ __forceinline__ void pdl_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// Launches kernel<<<grid, block, smem, stream>>>(args...), allowed to overlap the kernel
// before it when `overlap` (the kernel must call pdl_wait() before reading earlier outputs).
template <typename... Params, typename... Args>
cudaError_t launch_overlapping(bool overlap, void (*kernel)(Params...), dim3 grid, dim3 block, size_t smem,
                               cudaStream_t stream, Args&&... args) {
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = grid;
    cfg.blockDim = block;
    cfg.dynamicSmemBytes = smem;
    cfg.stream = stream;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = attr;
    cfg.numAttrs = overlap ? 1 : 0;
    return cudaLaunchKernelEx(&cfg, kernel, std::forward<Args>(args)...);
}

}  // namespace niwa::kernels::cuda
