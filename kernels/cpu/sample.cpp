// sample: each row through sample_row (kernels/sample_draw.h): greedy (the first argmax, NaN
// lowest), or the row's candidates through draw_token (temperature softmax filtered by top_k,
// top_p and min_p, one draw by inverse CDF over the kept tokens in descending probability, ties
// lower id first).
#include "kernels/cpu/cpu_ops.h"
#include "kernels/sample_draw.h"

namespace niwa::kernels::cpu {

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
            out_ids[r] =
                sample_row(row_f32(logits, r), logits.cols, params[r], split_rows ? for_ranges : ForRanges{});
        }
    };
    if (split_rows)
        sample_rows(0, logits.rows);
    else
        pool_.parallel_for(logits.rows, sample_rows);
}

}  // namespace niwa::kernels::cpu
