// The GPUs this build can use and their memory, as the CUDA runtime sees them (an empty
// list in a build without CUDA or on a machine without a GPU).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace niwa::kernels {

struct GpuInfo {
    int index = 0;
    std::string name;
    int cc_major = 0, cc_minor = 0;  // compute capability
    int sm_count = 0;
    uint64_t total_bytes = 0;
    uint64_t free_bytes = 0;
};

// Throws std::runtime_error when the driver is present but broken (e.g. a version
// mismatch), with the driver's own message; no GPU at all is an empty list.
std::vector<GpuInfo> list_gpus();
// Whether this build has the CUDA backend.
bool cuda_built();

}  // namespace niwa::kernels
