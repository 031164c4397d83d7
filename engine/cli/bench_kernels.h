// `niwa-engine bench --kernels`: the decode-time kernels one at a time on the model's own shapes
// (every distinct ternary matmul at 1, 8 and 24 rows; paged attention and the recurrent delta
// rule at the bench's batch sizes and context), each against the copy bandwidth.
#pragma once

#include <nlohmann/json.hpp>

#include <vector>

#include "engine/model/model.h"

namespace niwa::cli {

// Prints a table unless `json`; returns the same figures. Throws std::runtime_error in a build
// without CUDA.
nlohmann::ordered_json bench_kernels(const model::Model& m, const std::vector<int64_t>& batches, int context,
                                     double bandwidth, bool json);

}  // namespace niwa::cli
