// Element-wise ops over same-shaped tensors (each with its own ld): add, swiglu, sigmoid_mul.
#include "kernels/cpu/cpu_ops.h"

namespace niwa::kernels::cpu {

namespace {

// y = f(a, b) element by element, rows in parallel; y may alias a or b.
template <typename F>
void binary(ThreadPool& pool, const Tensor& a, const Tensor& b, const Tensor& y, const char* op, F f) {
    require_f32(a, op, "first input");
    require_f32(b, op, "second input");
    require_f32(y, op, "y");
    require_same_shape(a, y, op);
    require_same_shape(b, y, op);
    pool.parallel_for(y.rows, [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
            const float* ar = row_f32(a, r);
            const float* br = row_f32(b, r);
            float* yr = row_f32(y, r);
            for (int64_t c = 0; c < y.cols; ++c) yr[c] = f(ar[c], br[c]);
        }
    });
}

}  // namespace

void CpuOps::add(const Tensor& a, const Tensor& b, const Tensor& y) {
    binary(pool_, a, b, y, "add", [](float p, float q) { return p + q; });
}

void CpuOps::swiglu(const Tensor& gate, const Tensor& up, const Tensor& y) {
    binary(pool_, gate, up, y, "swiglu", [](float g, float u) { return silu(g) * u; });
}

void CpuOps::sigmoid_mul(const Tensor& x, const Tensor& gate, const Tensor& y) {
    binary(pool_, x, gate, y, "sigmoid_mul", [](float v, float g) { return v * sigmoid(g); });
}

}  // namespace niwa::kernels::cpu
