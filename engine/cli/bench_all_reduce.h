// `niwa-engine bench --all-reduce --tp N`: the tensor-parallel all-reduce alone, as a decode step
// makes it (rows of the model's hidden size, --batch rows, one call after another), by each way
// the GPUs here allow: NCCL, and the exchange (kernels/cuda/peer_exchange.h) through peer access
// where the GPUs have it and through mapped host memory. With fewer GPUs than ranks, every rank
// on GPU 0 and the host path alone (each row's "gpus": 1). The model is not loaded.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <vector>

namespace niwa::cli {

// Prints a table unless `json`; returns the same figures. Throws std::runtime_error in a build
// without CUDA or NCCL, or without a GPU.
nlohmann::ordered_json bench_all_reduce(int64_t hidden, int ranks, const std::vector<int64_t>& batches,
                                        bool json);

}  // namespace niwa::cli
