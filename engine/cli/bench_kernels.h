// `niwa-engine bench --kernels`: the kernels one at a time on the model's own shapes. Decode:
// every distinct ternary matmul, paged attention and the recurrent delta rule at the bench's
// batch sizes (rows of x) and context, each against the copy bandwidth. Prefill: each
// matmul at 48, 128 and --step-tokens rows through both prefill paths (cuBLAS, tiles), attention
// over 2048 and 8192 new tokens, the chunked delta rule over 2048, in FLOP/s.
#pragma once

#include <nlohmann/json.hpp>

#include <vector>

#include "engine/model/model.h"
#include "kernels/ops.h"

namespace niwa::cli {

// A random ternary matrix of `type` (mkmodel's generator) in the backend's memory: in the layout
// the backend loads such a matrix in (CUDA: PQ2_0 as PQ2_0T or PQ2_0S), or as the file has it.
kernels::Weight bench_random_weight(kernels::Ops& ops, kernels::DType type, int64_t in, int64_t out,
                                    bool as_loaded = true);

// Prints a table unless `json`; returns the same figures. Throws std::runtime_error in a build
// without CUDA.
nlohmann::ordered_json bench_kernels(const model::Model& m, const std::vector<int64_t>& batches, int context,
                                     double bandwidth, bool json);

}  // namespace niwa::cli
