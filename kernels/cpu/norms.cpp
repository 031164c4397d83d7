// rmsnorm, l2norm and the GDN output's gated rmsnorm, per row (or per head) of width y.cols.
// Sums of squares in double: the oracle should not carry fp32 summation error.
#include <cmath>

#include "kernels/cpu/segments.h"

namespace niwa::kernels::cpu {

namespace {

double sum_squares(const float* x, int64_t n) {
    double s = 0.0;
    for (int64_t i = 0; i < n; ++i) s += static_cast<double>(x[i]) * x[i];
    return s;
}

}  // namespace

void CpuOps::rmsnorm(const Tensor& x, const float* w, float eps, const Tensor& y) {
    const int64_t width = y.cols;
    const Segments xs(x, width, "rmsnorm", "x"), ys(y, width, "rmsnorm", "y");
    require(xs.count() == ys.count(), "rmsnorm", "x and y hold different numbers of rows");
    pool_.parallel_for(ys.count(), [&](int64_t s0, int64_t s1) {
        for (int64_t s = s0; s < s1; ++s) {
            const float* xi = xs.at(s);
            float* yi = ys.at(s);
            const auto inv = static_cast<float>(1.0 / std::sqrt(sum_squares(xi, width) / width + eps));
            for (int64_t c = 0; c < width; ++c) yi[c] = xi[c] * inv * (w != nullptr ? w[c] : 1.0f);
        }
    });
}

void CpuOps::l2norm(const Tensor& x, float eps, const Tensor& y) {
    const int64_t width = y.cols;
    const Segments xs(x, width, "l2norm", "x"), ys(y, width, "l2norm", "y");
    require(xs.count() == ys.count(), "l2norm", "x and y hold different numbers of rows");
    pool_.parallel_for(ys.count(), [&](int64_t s0, int64_t s1) {
        for (int64_t s = s0; s < s1; ++s) {
            const float* xi = xs.at(s);
            float* yi = ys.at(s);
            const auto inv = static_cast<float>(1.0 / std::sqrt(sum_squares(xi, width) + eps));
            for (int64_t c = 0; c < width; ++c) yi[c] = xi[c] * inv;
        }
    });
}

void CpuOps::rmsnorm_gated(const Tensor& x, const float* w, const Tensor& z, float eps, const Tensor& y) {
    const int64_t width = y.cols;
    const Segments xs(x, width, "rmsnorm_gated", "x"), zs(z, width, "rmsnorm_gated", "z"),
        ys(y, width, "rmsnorm_gated", "y");
    require(xs.count() == ys.count() && zs.count() == ys.count(), "rmsnorm_gated",
            "x, z and y hold different numbers of rows");
    pool_.parallel_for(ys.count(), [&](int64_t s0, int64_t s1) {
        for (int64_t s = s0; s < s1; ++s) {
            const float* xi = xs.at(s);
            const float* zi = zs.at(s);
            float* yi = ys.at(s);
            const auto inv = static_cast<float>(1.0 / std::sqrt(sum_squares(xi, width) / width + eps));
            for (int64_t c = 0; c < width; ++c)
                yi[c] = xi[c] * inv * (w != nullptr ? w[c] : 1.0f) * silu(zi[c]);
        }
    });
}

}  // namespace niwa::kernels::cpu
