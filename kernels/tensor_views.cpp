// Tensor::cols_view / rows_view (declared in kernels/ops.h): pointer arithmetic over plain
// element types, shared by every backend since it never touches the data.
#include <stdexcept>
#include <string>

#include "kernels/ops.h"

namespace niwa::kernels {

namespace {
int64_t element_bytes(DType t) {
    if (dtype_block_elems(t) != 1)
        throw std::invalid_argument(std::string("a Tensor view of packed type ") + dtype_name(t));
    return dtype_block_bytes(t);
}
}  // namespace

Tensor Tensor::cols_view(int64_t c0, int64_t n) const {
    if (c0 < 0 || n < 0 || c0 + n > cols)
        throw std::out_of_range("cols_view [" + std::to_string(c0) + ", " + std::to_string(c0 + n) +
                                ") of a tensor with " + std::to_string(cols) + " columns");
    Tensor t = *this;
    t.data = static_cast<char*>(data) + c0 * element_bytes(type);
    t.cols = n;
    return t;
}

Tensor Tensor::rows_view(int64_t r0, int64_t n) const {
    if (r0 < 0 || n < 0 || r0 + n > rows)
        throw std::out_of_range("rows_view [" + std::to_string(r0) + ", " + std::to_string(r0 + n) +
                                ") of a tensor with " + std::to_string(rows) + " rows");
    Tensor t = *this;
    t.data = static_cast<char*>(data) + r0 * ld * element_bytes(type);
    t.rows = n;
    return t;
}

}  // namespace niwa::kernels
