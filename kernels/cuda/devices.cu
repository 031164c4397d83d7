// list_gpus() through the CUDA runtime.
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "kernels/devices.h"

namespace niwa::kernels {

bool cuda_built() {
    return true;
}

std::vector<GpuInfo> list_gpus() {
    int n = 0;
    const cudaError_t err = cudaGetDeviceCount(&n);
    if (err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver) return {};
    if (err != cudaSuccess)
        throw std::runtime_error(std::string("CUDA cannot list the GPUs: ") + cudaGetErrorString(err));
    std::vector<GpuInfo> gpus;
    for (int i = 0; i < n; ++i) {
        cudaDeviceProp p{};
        if (cudaGetDeviceProperties(&p, i) != cudaSuccess) continue;
        GpuInfo g;
        g.index = i;
        g.name = p.name;
        g.cc_major = p.major;
        g.cc_minor = p.minor;
        g.sm_count = p.multiProcessorCount;
        g.total_bytes = p.totalGlobalMem;
        size_t free_b = 0, total_b = 0;
        if (cudaSetDevice(i) == cudaSuccess && cudaMemGetInfo(&free_b, &total_b) == cudaSuccess) {
            g.free_bytes = free_b;
            g.total_bytes = total_b;
        }
        gpus.push_back(g);
    }
    return gpus;
}

}  // namespace niwa::kernels
