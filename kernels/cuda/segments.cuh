// Rows of a fixed width inside a tensor, as the norms take them (kernels/ops.h: "per row of
// width y.cols"): a [n, H*D] tensor and its [n*H, D] view hold the same n*H segments of width D.
// Header for .cu files (C++17).
#pragma once

#include <string>

#include "kernels/cuda/cuda_ops.h"

namespace niwa::kernels::cuda {

// Segment i of width `width` in a tensor whose rows hold `per_row` segments.
struct Segs {
    float* data;
    int64_t ld;
    int64_t per_row;
    int64_t width;
    __device__ float* at(int64_t i) const { return data + (i / per_row) * ld + (i % per_row) * width; }
};

inline Segs segments(const Tensor& t, int64_t width, const char* op, const char* name) {
    require_f32(t, op, name);
    require(width > 0 && t.cols % width == 0, op,
            std::string(name) + " has " + std::to_string(t.cols) +
                " columns, not a multiple of the row width " + std::to_string(width));
    return Segs{t.as<float>(), t.ld, t.cols / width, width};
}

}  // namespace niwa::kernels::cuda
