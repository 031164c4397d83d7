// sample: greedy (the first argmax, NaN lowest), or the row's candidates through draw_token
// (kernels/sample_draw.h: temperature softmax filtered by top_k, top_p and min_p, one draw by
// inverse CDF over the kept tokens in descending probability, ties lower id first).
#include <cmath>
#include <string>
#include <vector>

#include "kernels/cpu/cpu_ops.h"
#include "kernels/sample_draw.h"

namespace niwa::kernels::cpu {

namespace {

// The first index of the maximum; a NaN ranks below every number (0 when every logit is NaN).
int32_t argmax(const float* x, int64_t n) {
    int64_t best = 0;
    while (best + 1 < n && std::isnan(x[best])) ++best;
    for (int64_t i = best + 1; i < n; ++i)
        if (x[i] > x[best]) best = i;
    return std::isnan(x[best]) ? 0 : static_cast<int32_t>(best);
}

// A row through draw_token with only the tokens it needs: a top_k's candidates by logit (the
// probabilities' order: exp is monotonic; top_k_candidates reads the row in place), or with only
// min_p the tokens within T ln(min_p) of the maximum (a little more, for rounding: draw_token
// applies the exact rule), else the whole row, read in place. Only then are exponentials taken,
// and only of those.
int32_t draw_row(const float* row, int64_t vocab, const SampleParams& sp, const ForRanges& for_ranges) {
    thread_local std::vector<float> logits;
    thread_local std::vector<int32_t> ids;
    if (sp.top_k > 0 && sp.top_k < vocab) {
        top_k_candidates(row, vocab, sp.top_k, logits, ids);
        return draw_token(Candidates{logits.data(), ids.data(), static_cast<int64_t>(logits.size())}, sp,
                          for_ranges);
    }
    if (sp.top_p >= 1.0f && sp.min_p > 0.0f) {
        logits.clear();
        ids.clear();
        const float max_logit = row[argmax(row, vocab)];
        if (std::isnan(max_logit)) return 0;  // every logit NaN, as greedy answers
        const double floor = max_logit + sp.temperature * std::log(static_cast<double>(sp.min_p)) - 1e-3;
        for (int64_t i = 0; i < vocab; ++i)
            if (row[i] >= floor) {
                logits.push_back(row[i]);
                ids.push_back(static_cast<int32_t>(i));
            }
        return draw_token(Candidates{logits.data(), ids.data(), static_cast<int64_t>(logits.size())}, sp,
                          for_ranges);
    }
    return draw_token(Candidates{row, nullptr, vocab}, sp, for_ranges);
}

}  // namespace

void CpuOps::sample(const Tensor& logits, const SampleParams* params, int32_t* out_ids) {
    require_f32(logits, "sample", "logits");
    require(logits.cols > 0, "sample", "empty vocabulary");
    // Fewer rows than threads: one row at a time, each row's pass over its candidates split over
    // the threads (a single stream's draw is on its latency path). Otherwise a row a thread.
    const bool split_rows = logits.rows < pool_.size();
    const ForRanges for_ranges = [&](int64_t n, const std::function<void(int64_t, int64_t)>& fn) {
        pool_.parallel_for(n, fn);
    };
    auto sample_rows = [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
            const float* row = row_f32(logits, r);
            const SampleParams& sp = params[r];
            if (sp.temperature <= 0.0f || sp.top_k == 1) {
                out_ids[r] = argmax(row, logits.cols);
                continue;
            }
            out_ids[r] = draw_row(row, logits.cols, sp, split_rows ? for_ranges : ForRanges{});
        }
    };
    if (split_rows)
        sample_rows(0, logits.rows);
    else
        pool_.parallel_for(logits.rows, sample_rows);
}

}  // namespace niwa::kernels::cpu
