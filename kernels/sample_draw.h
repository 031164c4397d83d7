// The sample op's rule for one row, on the host, for every backend: a temperature softmax over
// candidate tokens, filtered by top_k, then top_p (over the probabilities renormalised after
// top_k), then min_p, then one draw by inverse CDF over the kept tokens in descending probability
// (ties: lower id first). The candidates are the whole row or any superset of the tokens the
// filters can keep (a GPU hands over its top_k); every filter depends only on ratios of their
// probabilities. Only as much of the descending order is sorted as the filters and the draw
// reach, so a 248K-token row with a short nucleus costs a few linear passes, not a sort.
#pragma once

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "kernels/ops.h"

namespace niwa::kernels {

// Runs fn(begin, end) over disjoint ranges covering [0, n), possibly on several threads.
using ForRanges = std::function<void(int64_t n, const std::function<void(int64_t, int64_t)>& fn)>;

// A row's candidate tokens: logits[i] is token ids[i]'s, or with no ids token i's (a whole row,
// read in place).
struct Candidates {
    const float* logits;
    const int32_t* ids;
    int64_t size;
};

// The rule's unnormalised probability of each of n logits, none above max_logit: exp((logit -
// max_logit) / T) as sample_draw.cpp computes it (relative error under 2e-7; 0 below 2^-125.5).
// A reference that mirrors the rule takes its probabilities from here.
void sample_weights(const float* logits, int64_t n, float max_logit, float temperature, float* w);

// top_k's candidates, 0 < k <= n: the k tokens of a whole row first in descending logit, ties
// lower id first, as (logits[i], ids[i]) in ascending id. A NaN logit ranks below every number,
// -inf included. One pass over the row, then passes over only the blocks that can hold them.
void top_k_candidates(const float* row, int64_t n, int64_t k, std::vector<float>& logits,
                      std::vector<int32_t>& ids);

// sp.temperature > 0. With `for_ranges`, the pass over every candidate (the exponentials, the
// total mass) is split over its threads; the result does not depend on how many there are.
int32_t draw_token(const Candidates& cand, const SampleParams& sp, const ForRanges& for_ranges = {});

// The same for candidates as (logit, token id) pairs.
int32_t draw_token(const std::vector<std::pair<float, int32_t>>& cand, const SampleParams& sp,
                   const ForRanges& for_ranges = {});

}  // namespace niwa::kernels
