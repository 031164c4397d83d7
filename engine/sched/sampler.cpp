#include "engine/sched/sampler.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <thread>
#include <unordered_map>

#include "engine/runtime/splitmix64.h"
#include "engine/sched/json_constraint.h"
#include "kernels/row_runs.h"
#include "kernels/sample_draw.h"

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

// A constrained request's candidates tried in sampling order before the scan over the whole
// vocabulary: a step ends in bounded time whatever the logits.
constexpr int kConstrainedTries = 64;

bool allowed(const Request& r, int32_t id) {
    if (std::find(r.stop_ids.begin(), r.stop_ids.end(), id) != r.stop_ids.end())
        return r.constraint->complete();
    return r.constraint->allows(id);
}

// The first allowed token of `order` from `from` on, skipping `tried`; -1 when none is.
int32_t first_allowed(const Request& r, const std::vector<int32_t>& order, size_t from,
                      const std::vector<int32_t>& tried) {
    for (size_t i = from; i < order.size(); ++i) {
        const int32_t id = order[i];
        if (std::find(tried.begin(), tried.end(), id) == tried.end() && allowed(r, id)) return id;
    }
    return -1;
}

// Greedy under a constraint: the best allowed token by logit (ties: lower id first).
int32_t constrained_greedy(const Request& r, const float* row, int64_t vocab) {
    const auto better = [&](int32_t a, int32_t b) { return row[a] != row[b] ? row[a] > row[b] : a < b; };
    std::vector<int32_t> order(static_cast<size_t>(vocab));
    std::iota(order.begin(), order.end(), 0);
    const auto head = std::min<int64_t>(kConstrainedTries, vocab);
    std::partial_sort(order.begin(), order.begin() + head, order.end(), better);
    for (int64_t i = 0; i < head; ++i)
        if (allowed(r, order[size_t(i)])) return order[size_t(i)];
    std::sort(order.begin() + head, order.end(), better);
    return first_allowed(r, order, size_t(head), {});
}

// Sampling under a constraint: the kept set and its probabilities as the sample op makes them
// (temperature, top_k, top_p, min_p); a rejected draw is masked and the next draw is taken from
// the rest, so an accepted token follows the distribution renormalised over allowed tokens.
// After kConstrainedTries rejections (or an exhausted kept set) the best allowed token by logit.
int32_t constrained_draw(Request& r, const float* row, int64_t vocab, float uniform) {
    const SamplingParams& sp = r.sampling;
    const float mx = *std::max_element(row, row + vocab);
    std::vector<double> p(static_cast<size_t>(vocab));  // unnormalised: only ratios matter
    for (int64_t i = 0; i < vocab; ++i) p[size_t(i)] = std::exp((row[i] - mx) / sp.temperature);
    std::vector<int32_t> order(static_cast<size_t>(vocab));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](int32_t a, int32_t b) { return p[size_t(a)] > p[size_t(b)]; });
    size_t kept = order.size();
    if (sp.top_k > 0) kept = std::min(kept, size_t(sp.top_k));
    if (sp.top_p < 1.0f) {
        double mass = 0.0;
        for (size_t i = 0; i < kept; ++i) mass += p[size_t(order[i])];
        double cum = 0.0;
        size_t n = 0;
        while (n < kept) {
            cum += p[size_t(order[n++])] / mass;
            if (cum >= sp.top_p) break;
        }
        kept = n;
    }
    if (sp.min_p > 0.0f) {
        const double floor = sp.min_p * p[size_t(order[0])];
        size_t n = 1;
        while (n < kept && p[size_t(order[n])] >= floor) ++n;
        kept = n;
    }
    std::vector<double> w(kept);
    for (size_t i = 0; i < kept; ++i) w[i] = p[size_t(order[i])];
    std::vector<int32_t> tried;
    for (int attempt = 0; attempt < kConstrainedTries; ++attempt) {
        double mass = 0.0;
        size_t last = kept;
        for (size_t i = 0; i < kept; ++i) {
            mass += w[i];
            if (w[i] > 0) last = i;
        }
        if (last == kept) break;
        const double target = double(uniform) * mass;
        double cum = 0.0;
        size_t pick = last;  // rounding put the target at the very top
        for (size_t i = 0; i < kept; ++i) {
            cum += w[i];
            if (w[i] > 0 && target < cum) {
                pick = i;
                break;
            }
        }
        if (allowed(r, order[pick])) return order[pick];
        tried.push_back(order[pick]);
        w[pick] = 0;
        uniform = runtime::SplitMix64::uniform24(runtime::SplitMix64::step(r.rng));
    }
    return first_allowed(r, order, 0, tried);
}

int32_t constrained_sample(Request& r, const float* row, int64_t vocab, float uniform) {
    const bool greedy = r.sampling.temperature <= 0.0f || r.sampling.top_k == 1;
    return greedy ? constrained_greedy(r, row, vocab) : constrained_draw(r, row, vocab, uniform);
}

}  // namespace

void sample_listed_rows(kernels::Ops& ops, const kernels::Tensor& logits, const std::vector<size_t>& rows,
                        const kernels::SampleParams* params, int32_t* ids) {
    kernels::for_each_run(rows.data(), rows.size(), [&](size_t first, size_t count) {
        ops.sample(logits.rows_view(int64_t(first), int64_t(count)), params + first, ids + first);
    });
}

uint64_t initial_rng(const SamplingParams& p, uint64_t request_id) {
    return p.seed ? *p.seed : request_id * 0xD1B54A32D192ED03ull;
}

int sampler_threads() {
    return int(std::clamp(std::thread::hardware_concurrency(), 1u, 8u));
}

Sampler::Sampler() : ops_(kernels::make_cpu_ops(sampler_threads())) {}

namespace {

kernels::SampleParams sample_params(const Request& r) {
    kernels::SampleParams p;
    p.temperature = r.sampling.temperature;
    p.top_k = r.sampling.top_k;
    p.top_p = r.sampling.top_p;
    p.min_p = r.sampling.min_p;
    return p;
}

}  // namespace

kernels::TopAsk Sampler::top_ask(const Request& r) {
    const SamplingParams& p = r.sampling;
    if (r.constraint || p.presence_penalty != 0.0f || p.frequency_penalty != 0.0f || p.top_logprobs >= 0)
        return {0, 0.0f};
    return kernels::top_ask(sample_params(r));
}

std::vector<TokenEvent> Sampler::sample(const std::vector<Request*>& reqs, float* logits, int64_t vocab,
                                        const Reduced& reduced) {
    const size_t n = reqs.size();
    std::vector<kernels::SampleParams> params(n);
    std::vector<int32_t> ids(n, -1);
    std::vector<size_t> whole;   // the rows drawn from on the host
    std::vector<int64_t> fetch;  // reduced rows whose draws reached below their candidates
    for (size_t i = 0; i < n; ++i) {
        kernels::SampleParams& p = params[i];
        p = sample_params(*reqs[i]);
        p.uniform = runtime::SplitMix64::uniform24(runtime::SplitMix64::step(reqs[i]->rng));
        if (const kernels::TopLogits* top = reduced.top ? reduced.top(i) : nullptr) {
            ids[i] = kernels::draw_from_top(*top, p);
            if (ids[i] >= 0) continue;
            fetch.push_back(int64_t(i));
        }
        whole.push_back(i);
    }
    // Those rows whole, in one fetch, before any row is penalised.
    if (!fetch.empty()) reduced.fetch(fetch);
    for (size_t i : whole) {
        apply_penalties(*reqs[i], logits + int64_t(i) * vocab);
        // A constrained request is sampled below; the op's argmax of its row is not used.
        if (reqs[i]->constraint) params[i].temperature = 0.0f;
    }
    kernels::Tensor t;
    t.data = logits;
    t.type = kernels::DType::F32;
    t.rows = int64_t(n);
    t.cols = vocab;
    t.ld = vocab;
    sample_listed_rows(*ops_, t, whole, params.data(), ids.data());
    std::vector<TokenEvent> out(n);
    for (size_t i = 0; i < n; ++i) {
        out[i].token = ids[i];
        if (reqs[i]->constraint)
            out[i].token =
                constrained_sample(*reqs[i], logits + int64_t(i) * vocab, vocab, params[i].uniform);
        if (out[i].token < 0) continue;
        if (reqs[i]->sampling.top_logprobs >= 0)
            fill_logprobs(logits + int64_t(i) * vocab, vocab, reqs[i]->sampling.top_logprobs, out[i]);
    }
    return out;
}

}  // namespace niwa::sched
