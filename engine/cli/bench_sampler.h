// `niwa-engine bench --sampler`: the sampler alone, as the server runs it (the sample op of the
// CPU backend with sched::sampler_threads() threads on the host logits of a step), on batches
// of rows of the model's vocabulary and the usual parameter sets. Decode and prefill are not run.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <vector>

namespace niwa::cli {

// Prints a table unless `json`; returns the same figures.
nlohmann::ordered_json bench_sampler(int64_t vocab, const std::vector<int64_t>& batches, bool json);

}  // namespace niwa::cli
