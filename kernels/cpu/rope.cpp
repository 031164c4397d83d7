// rope: NeoX rotate-half on the first n_rot dims of each head, angles in double so the oracle
// stays exact at long positions.
#include <cmath>
#include <string>

#include "kernels/cpu/cpu_ops.h"

namespace niwa::kernels::cpu {

void CpuOps::rope(const Tensor& x, int head_dim, int n_rot, float theta, const StepInfo& step) {
    require_f32(x, "rope", "x");
    require(head_dim > 0 && x.cols % head_dim == 0, "rope",
            std::to_string(x.cols) + " columns are not whole heads of " + std::to_string(head_dim));
    require(
        n_rot >= 0 && n_rot <= head_dim && n_rot % 2 == 0, "rope",
        "n_rot " + std::to_string(n_rot) + " must be even and at most head_dim " + std::to_string(head_dim));
    if (x.rows == 0) return;
    // x is [n_tokens, heads * head_dim], or a per-head view [n_tokens * k, ...] of it.
    require(step.n_tokens > 0 && x.rows % step.n_tokens == 0, "rope",
            std::to_string(x.rows) + " rows for " + std::to_string(step.n_tokens) + " tokens");
    const int64_t rows_per_token = x.rows / step.n_tokens;
    const int64_t heads = x.cols / head_dim;
    const int half = n_rot / 2;
    pool_.parallel_for(x.rows, [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
            const double pos = step.positions[r / rows_per_token];
            for (int i = 0; i < half; ++i) {
                const double angle = pos * std::pow(static_cast<double>(theta), -2.0 * i / n_rot);
                const auto c = static_cast<float>(std::cos(angle));
                const auto s = static_cast<float>(std::sin(angle));
                for (int64_t h = 0; h < heads; ++h) {
                    float* v = row_f32(x, r) + h * head_dim;
                    const float a = v[i];
                    const float b = v[i + half];
                    v[i] = a * c - b * s;
                    v[i + half] = a * s + b * c;
                }
            }
        }
    });
}

}  // namespace niwa::kernels::cpu
