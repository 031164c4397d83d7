// The GPUs this build can use and their memory, as the CUDA runtime sees them (an empty
// list in a build without CUDA or on a machine without a GPU).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace niwa::kernels {

class Ops;

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

// The physical limits a benchmark is measured against, measured on the spot on GPU `device`:
// device-to-device copy bandwidth in bytes moved (read + written) per second, and the rate of
// a large bf16 GEMM with fp32 accumulation (cuBLAS) in FLOP/s. Throw without CUDA or a GPU.
double measure_copy_bandwidth(int device);
double measure_bf16_gemm_rate(int device);

// Joins the ranks' Ops (one per tensor-parallel rank, in rank order, each then driven by its own
// thread) in a group whose all_reduce_sum runs on the devices: NCCL between GPUs, connected and
// tried once here so a step never waits on setting it up. Returns false, changing nothing, with
// the reason in *why, when this build or these ranks can't (a host backend, two ranks on one
// GPU, a build without NCCL): the ranks then meet in host memory. Joined, *how (when given) says
// how small all-reduces go: NCCL's, or the group's exchange (kernels/cuda/peer_exchange.h) and
// why not where it could not be set up.
bool join_device_group(const std::vector<Ops*>& ranks, std::string* why, std::string* how = nullptr);

}  // namespace niwa::kernels
