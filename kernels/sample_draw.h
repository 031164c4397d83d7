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

// The sample op's rule on one whole row in host memory: greedy (temperature <= 0 or top_k 1) the
// first index of its largest logit (a NaN below every number; 0 when all are NaN), otherwise
// draw_token over only the tokens the filters can keep (a top_k's candidates, min_p's band).
int32_t sample_row(const float* row, int64_t n, const SampleParams& sp, const ForRanges& for_ranges = {});

// What a row sampled with sp asks its reduction for: greedy its largest logit; a top_k its k
// largest (at most kMaxTopAsk: a larger top_k reaches below them, and the row comes back whole);
// otherwise kDrawCandidates and the total mass, which a peaked row's nucleus or draw stays within.
constexpr int kMaxTopAsk = 1024;
constexpr int kDrawCandidates = 128;
TopAsk top_ask(const SampleParams& sp);

// A row reduced by top_logits_row (or a backend's Ops::top_logits) to what the rule needs:
// ask.k > 0 of its largest logits and every logit tied with the k-th, its largest logit, and
// with ask.temperature > 0 the rule's total mass at that temperature.
void top_logits_row(const float* row, int64_t n, const TopAsk& ask, TopLogits& out);

// Parts of one row (a vocabulary slice each, whose ids are offset by `offsets[i]`) as one row:
// the candidates every part's floor lets the whole row trust, the mass rescaled to the row's
// largest logit (within rounding of the whole row's own sum).
TopLogits merge_top_logits(const std::vector<TopLogits>& parts, const std::vector<int32_t>& offsets,
                           float temperature);

// The rule (greedy as the sample op takes it, or draw_token's) on a reduced row: the token, or -1
// when it reaches below the candidates' floor, so the whole row is needed. The draw is draw_token's
// on the whole row, but for its total mass, summed in another order (a draw within rounding of a
// boundary between two tokens may take the other).
int32_t draw_from_top(const TopLogits& top, const SampleParams& sp);

}  // namespace niwa::kernels
