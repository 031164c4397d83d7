// list_gpus() in a build without CUDA: no GPUs.
#include "kernels/devices.h"

namespace niwa::kernels {

bool cuda_built() {
    return false;
}
std::vector<GpuInfo> list_gpus() {
    return {};
}

}  // namespace niwa::kernels
