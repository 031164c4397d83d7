// Programmatic dependent launch (sm_90 and later). A kernel launched with
// launch_overlapping() may start while the kernel before it on the stream still runs: it
// does what reads no earlier kernel's output (a matmul streams its first weight tiles), then
// pdl_wait() blocks until every earlier kernel has finished and its writes are visible. A
// kernel calls pdl_release() when the next one may be scheduled (it still waits for our
// completion before reading anything). Both are no-ops where a kernel was not launched so.
//
// The rule that keeps this safe: code before pdl_wait() reads only what no kernel writes
// (weights, signs, norm weights), since a kernel that releases before its own wait lets its
// dependent start while the kernel before it still runs; or, in a settled step
// (StepInfo::settled), what the step's sequences bring from earlier steps and no kernel of the
// step writes before the reader: a model step's first kernel (the embedding lookup) is not
// launched to overlap, so it starts after all earlier work has finished, and every later
// kernel of the step after it. Where a kernel releases is then only
// a question of speed: at its start when its grid is one wave, after its main loop when it is
// several (early dependents would hold SMs its later waves need). Every kernel of a decode step
// but the embedding lookup and the final norm is launched so.
// Header for .cu files (C++17).
#pragma once

#include <cuda_runtime.h>

#include <utility>

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

// Launches kernel<<<grid, block, smem, stream>>>(args...) in clusters of `cluster` blocks along
// x (1: no clusters; sm_90 and later), allowed to overlap the kernel before it when `overlap`
// (the kernel must call pdl_wait() before reading earlier outputs).
template <typename... Params, typename... Args>
cudaError_t launch_clustered(bool overlap, unsigned cluster, void (*kernel)(Params...), dim3 grid, dim3 block,
                             size_t smem, cudaStream_t stream, Args&&... args) {
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = grid;
    cfg.blockDim = block;
    cfg.dynamicSmemBytes = smem;
    cfg.stream = stream;
    cudaLaunchAttribute attr[2];
    unsigned n = 0;
    if (cluster > 1) {
        attr[n].id = cudaLaunchAttributeClusterDimension;
        attr[n].val.clusterDim.x = cluster;
        attr[n].val.clusterDim.y = 1;
        attr[n].val.clusterDim.z = 1;
        ++n;
    }
    if (overlap) {
        attr[n].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        attr[n].val.programmaticStreamSerializationAllowed = 1;
        ++n;
    }
    cfg.attrs = attr;
    cfg.numAttrs = n;
    return cudaLaunchKernelEx(&cfg, kernel, std::forward<Args>(args)...);
}

// The same without clusters.
template <typename... Params, typename... Args>
cudaError_t launch_overlapping(bool overlap, void (*kernel)(Params...), dim3 grid, dim3 block, size_t smem,
                               cudaStream_t stream, Args&&... args) {
    return launch_clustered(overlap, 1, kernel, grid, block, smem, stream, std::forward<Args>(args)...);
}

}  // namespace niwa::kernels::cuda
