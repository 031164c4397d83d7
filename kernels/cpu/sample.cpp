// sample: greedy, or temperature softmax filtered by top_k, top_p and min_p, then one draw by
// inverse CDF over the kept tokens in descending probability (ties: lower id first).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "kernels/cpu/cpu_ops.h"

namespace niwa::kernels::cpu {

namespace {

int32_t argmax(const float* x, int64_t n) {
    int64_t best = 0;
    for (int64_t i = 1; i < n; ++i)
        if (x[i] > x[best]) best = i;
    return static_cast<int32_t>(best);
}

// Keeps the first `kept` tokens of `order` (descending probability); `p` is renormalised over them.
int32_t draw(const float* logits, int64_t vocab, const SampleParams& sp, std::vector<int32_t>& order,
             std::vector<double>& p) {
    const double max_logit = logits[argmax(logits, vocab)];
    p.resize(static_cast<size_t>(vocab));
    double total = 0.0;
    for (int64_t i = 0; i < vocab; ++i) total += p[i] = std::exp((logits[i] - max_logit) / sp.temperature);
    for (double& x : p) x /= total;

    order.resize(static_cast<size_t>(vocab));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return p[a] > p[b]; });

    int64_t kept = vocab;
    if (sp.top_k > 0) kept = std::min<int64_t>(kept, sp.top_k);
    if (sp.top_p < 1.0f) {
        // top_p is taken over the probabilities renormalised after top_k.
        double mass = 0.0;
        for (int64_t i = 0; i < kept; ++i) mass += p[order[i]];
        double cum = 0.0;
        int64_t n = 0;
        while (n < kept) {
            cum += p[order[n++]] / mass;
            if (cum >= sp.top_p) break;
        }
        kept = n;
    }
    if (sp.min_p > 0.0f) {
        const double floor = sp.min_p * p[order[0]];
        int64_t n = 1;  // the most likely token always stays
        while (n < kept && p[order[n]] >= floor) ++n;
        kept = n;
    }
    double mass = 0.0;
    for (int64_t i = 0; i < kept; ++i) mass += p[order[i]];
    const double target = static_cast<double>(sp.uniform) * mass;
    double cum = 0.0;
    for (int64_t i = 0; i < kept; ++i) {
        cum += p[order[i]];
        if (target < cum) return order[i];
    }
    return order[kept - 1];  // rounding put the target at the very top
}

}  // namespace

void CpuOps::sample(const Tensor& logits, const SampleParams* params, int32_t* out_ids) {
    require_f32(logits, "sample", "logits");
    require(logits.cols > 0, "sample", "empty vocabulary");
    pool_.parallel_for(logits.rows, [&](int64_t r0, int64_t r1) {
        thread_local std::vector<int32_t> order;
        thread_local std::vector<double> p;
        for (int64_t r = r0; r < r1; ++r) {
            const float* row = row_f32(logits, r);
            const SampleParams& sp = params[r];
            const bool greedy = sp.temperature <= 0.0f || sp.top_k == 1;
            out_ids[r] = greedy ? argmax(row, logits.cols) : draw(row, logits.cols, sp, order, p);
        }
    });
}

}  // namespace niwa::kernels::cpu
