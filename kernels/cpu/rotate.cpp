// rotate: the Prism block Hadamard (MODEL.md "The Hadamard fold"), a fast Walsh–Hadamard
// transform per block of channels, scaled to be orthonormal, with the ±1 signs before or after.
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/cpu/cpu_ops.h"

namespace niwa::kernels::cpu {

namespace {

// In place: v <- H v with H[r][c] = (-1)^popcount(r & c), n a power of two.
void walsh_hadamard(float* v, int n) {
    for (int len = 1; len < n; len <<= 1)
        for (int i = 0; i < n; i += 2 * len)
            for (int j = i; j < i + len; ++j) {
                const float a = v[j];
                const float b = v[j + len];
                v[j] = a + b;
                v[j + len] = a - b;
            }
}

}  // namespace

void CpuOps::rotate(const Tensor& x, const Rotation& r, bool signs_first, const Tensor& y) {
    require_f32(x, "rotate", "x");
    require_f32(y, "rotate", "y");
    require_same_shape(x, y, "rotate");
    const int64_t cols = x.cols;
    if (r.block == 0) {
        for (int64_t i = 0; i < x.rows; ++i)
            if (row_f32(x, i) != row_f32(y, i)) std::copy(row_f32(x, i), row_f32(x, i) + cols, row_f32(y, i));
        return;
    }
    const int block = r.block;
    require(block > 0 && (block & (block - 1)) == 0, "rotate",
            "Hadamard block " + std::to_string(block) + " is not a power of two");
    require(cols % block == 0, "rotate",
            std::to_string(cols) + " channels are not a whole number of blocks of " + std::to_string(block));
    require(r.signs != nullptr, "rotate", "no sign vector");
    const float norm = 1.0f / std::sqrt(static_cast<float>(block));
    pool_.parallel_for(x.rows, [&](int64_t r0, int64_t r1) {
        thread_local std::vector<float> buf;
        buf.resize(static_cast<size_t>(cols));
        for (int64_t i = r0; i < r1; ++i) {
            const float* xr = row_f32(x, i);
            for (int64_t c = 0; c < cols; ++c) buf[c] = signs_first ? xr[c] * r.signs[c] : xr[c];
            for (int64_t b = 0; b < cols; b += block) walsh_hadamard(buf.data() + b, block);
            float* yr = row_f32(y, i);
            for (int64_t c = 0; c < cols; ++c)
                yr[c] = signs_first ? buf[c] * norm : buf[c] * norm * r.signs[c];
        }
    });
}

}  // namespace niwa::kernels::cpu
