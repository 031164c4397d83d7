#include "engine/sched/sampler.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <unordered_map>

#include "engine/runtime/splitmix64.h"

namespace niwa::sched {

namespace {

void apply_penalties(const Request& r, float* row) {
    const SamplingParams& p = r.sampling;
    if (p.presence_penalty == 0.0f && p.frequency_penalty == 0.0f) return;
    std::unordered_map<int32_t, int> counts;
    for (size_t i = size_t(r.prompt_len); i < r.tokens.size(); ++i) ++counts[r.tokens[i]];
    for (auto [token, n] : counts) row[token] -= p.presence_penalty + p.frequency_penalty * float(n);
}

// log-softmax of the row: the chosen token's logprob and the `top` best alternatives.
void fill_logprobs(const float* row, int64_t vocab, int top, TokenEvent& e) {
    const float mx = *std::max_element(row, row + vocab);
    double sum = 0.0;
    for (int64_t i = 0; i < vocab; ++i) sum += std::exp(double(row[i] - mx));
    const float log_z = mx + float(std::log(sum));
    e.logprob = row[e.token] - log_z;
    if (top <= 0) return;
    std::vector<int32_t> ids(static_cast<size_t>(vocab));
    std::iota(ids.begin(), ids.end(), 0);
    const auto n = std::min<int64_t>(top, vocab);
    std::partial_sort(ids.begin(), ids.begin() + n, ids.end(),
                      [&](int32_t a, int32_t b) { return row[a] != row[b] ? row[a] > row[b] : a < b; });
    for (int64_t i = 0; i < n; ++i) e.top.emplace_back(ids[size_t(i)], row[ids[size_t(i)]] - log_z);
}

}  // namespace

uint64_t initial_rng(const SamplingParams& p, uint64_t request_id) {
    return p.seed ? *p.seed : request_id * 0xD1B54A32D192ED03ull;
}

Sampler::Sampler() : ops_(kernels::make_cpu_ops(1)) {}

std::vector<TokenEvent> Sampler::sample(const std::vector<Request*>& reqs, float* logits, int64_t vocab) {
    const size_t n = reqs.size();
    std::vector<kernels::SampleParams> params(n);
    for (size_t i = 0; i < n; ++i) {
        const Request& r = *reqs[i];
        apply_penalties(r, logits + int64_t(i) * vocab);
        kernels::SampleParams& p = params[i];
        p.temperature = r.sampling.temperature;
        p.top_k = r.sampling.top_k;
        p.top_p = r.sampling.top_p;
        p.min_p = r.sampling.min_p;
        p.uniform = runtime::SplitMix64::uniform24(runtime::SplitMix64::step(reqs[i]->rng));
    }
    kernels::Tensor t;
    t.data = logits;
    t.type = kernels::DType::F32;
    t.rows = int64_t(n);
    t.cols = vocab;
    t.ld = vocab;
    std::vector<int32_t> ids(n);
    ops_->sample(t, params.data(), ids.data());
    std::vector<TokenEvent> out(n);
    for (size_t i = 0; i < n; ++i) {
        out[i].token = ids[i];
        if (reqs[i]->sampling.top_logprobs >= 0)
            fill_logprobs(logits + int64_t(i) * vocab, vocab, reqs[i]->sampling.top_logprobs, out[i]);
    }
    return out;
}

}  // namespace niwa::sched
