// The GPU entry points in a build without CUDA: no GPUs, no CUDA backend.
#include <stdexcept>

#include "kernels/devices.h"
#include "kernels/ops.h"

namespace niwa::kernels {

bool cuda_built() {
    return false;
}
std::vector<GpuInfo> list_gpus() {
    return {};
}
double measure_copy_bandwidth(int) {
    throw std::runtime_error("this niwa-engine was built without CUDA: no GPU to measure");
}
double measure_bf16_gemm_rate(int) {
    throw std::runtime_error("this niwa-engine was built without CUDA: no GPU to measure");
}
bool join_device_group(const std::vector<Ops*>&, std::string* why, std::string*) {
    if (why) *why = "this niwa-engine was built without CUDA";
    return false;
}
std::unique_ptr<Ops> make_cuda_ops(int, Precision) {
    throw std::runtime_error(
        "this niwa-engine was built without CUDA; rebuild on a machine with the CUDA toolkit (nvcc) "
        "or use --backend cpu");
}

}  // namespace niwa::kernels
