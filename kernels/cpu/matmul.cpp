// matmul and embed: weight rows are dequantized one at a time into a per-thread buffer, so a
// packed matrix is never expanded in memory.
#include <algorithm>
#include <string>
#include <vector>

#include "kernels/cpu/cpu_ops.h"

namespace niwa::kernels::cpu {

namespace {

const float* dequantized_row(const Weight& w, int64_t row, std::vector<float>& buf) {
    buf.resize(static_cast<size_t>(w.in));
    const auto* src = static_cast<const char*>(w.data) + static_cast<size_t>(row) * w.row_stride;
    dequantize_row(w.type, src, buf.data(), w.in);
    return buf.data();
}

void check_weight(const Weight& w, const char* op) {
    require(w.data != nullptr || w.out == 0, op, "weight has no data");
    require(w.in % dtype_block_elems(w.type) == 0, op,
            std::string(dtype_name(w.type)) + " weight with " + std::to_string(w.in) +
                " input columns, not a multiple of its block");
    require(w.row_stride >= dtype_row_bytes(w.type, w.in) || w.out <= 1, op,
            "row_stride " + std::to_string(w.row_stride) + " is shorter than a row");
}

}  // namespace

void CpuOps::matmul(const Weight& w, const Tensor& x, const Tensor& y) {
    check_weight(w, "matmul");
    require_f32(x, "matmul", "x");
    require_f32(y, "matmul", "y");
    require(x.cols == w.in && y.cols == w.out && x.rows == y.rows, "matmul",
            "x " + std::to_string(x.rows) + "x" + std::to_string(x.cols) + " · W(" + std::to_string(w.out) +
                "x" + std::to_string(w.in) + ")ᵀ → y " + std::to_string(y.rows) + "x" +
                std::to_string(y.cols));
    const int64_t grain = std::max<int64_t>(1, 4096 / std::max<int64_t>(1, w.in * x.rows));
    pool_.parallel_for(
        w.out,
        [&](int64_t o0, int64_t o1) {
            thread_local std::vector<float> buf;
            for (int64_t o = o0; o < o1; ++o) {
                const float* wr = dequantized_row(w, o, buf);
                for (int64_t r = 0; r < x.rows; ++r) {
                    row_f32(y, r)[o] = dot_f32(row_f32(x, r), wr, w.in);
                }
            }
        },
        grain);
}

void CpuOps::embed(const Weight& table, const int32_t* ids, int64_t row0, const Tensor& y) {
    check_weight(table, "embed");
    require_f32(y, "embed", "y");
    require(y.cols == table.in, "embed",
            "y has " + std::to_string(y.cols) + " columns, the table " + std::to_string(table.in));
    pool_.parallel_for(y.rows, [&](int64_t r0, int64_t r1) {
        thread_local std::vector<float> buf;
        for (int64_t r = r0; r < r1; ++r) {
            float* yr = row_f32(y, r);
            const int64_t row = static_cast<int64_t>(ids[r]) - row0;
            if (row < 0 || row >= table.out) {
                std::fill(yr, yr + y.cols, 0.0f);
                continue;
            }
            const float* src = dequantized_row(table, row, buf);
            std::copy(src, src + y.cols, yr);
        }
    });
}

}  // namespace niwa::kernels::cpu
