// Per-head rows: a norm of width W reads a tensor as rows * (cols / W) segments of W, so a
// [n, H*D] tensor and its [n*H, D] view normalise the same way.
#pragma once

#include <string>

#include "kernels/cpu/cpu_ops.h"

namespace niwa::kernels::cpu {

struct Segments {
    const Tensor* t = nullptr;
    int64_t per_row = 1;  // segments of width W in one row of t

    Segments(const Tensor& tensor, int64_t width, const char* op, const char* name) : t(&tensor) {
        require_f32(tensor, op, name);
        require(width > 0 && tensor.cols % width == 0, op,
                std::string(name) + " has " + std::to_string(tensor.cols) +
                    " columns, not a multiple of the row width " + std::to_string(width));
        per_row = tensor.cols / width;
    }
    int64_t count() const { return t->rows * per_row; }
    float* at(int64_t i) const { return row_f32(*t, i / per_row) + (i % per_row) * (t->cols / per_row); }
};

}  // namespace niwa::kernels::cpu
