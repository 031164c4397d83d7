// `niwa-engine bench --chain`: a batch-1 decode step's ternary matmuls, in the forward's order and
// at the model file's shapes (stacked as the engine stacks them on a GPU), run as one persistent
// kernel (kernels/cuda/matmul_chain.h) and as one launch each, both against the copy bandwidth:
// what the step's matmuls cost without their launches, tails and slice sums in between.
#pragma once

#include <nlohmann/json.hpp>

#include "engine/gguf/reader.h"

namespace niwa::cli {

// Prints a line unless `json`; returns the same figures. Throws std::runtime_error in a build
// without CUDA or for a file whose matrices the chain cannot take (PQ2_0 of whole runs only).
nlohmann::ordered_json bench_chain(const gguf::Reader& file, double bandwidth, bool json);

}  // namespace niwa::cli
