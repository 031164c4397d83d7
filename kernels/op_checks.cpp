#include "kernels/op_checks.h"

#include <stdexcept>

namespace niwa::kernels {

void check_arg(const char* backend, bool ok, const char* op, const std::string& what) {
    if (!ok) throw std::invalid_argument(std::string(backend) + " " + op + ": " + what);
}

void check_f32(const char* backend, const Tensor& t, const char* op, const char* name) {
    check_arg(backend, t.type == DType::F32, op,
              std::string(name) + " is " + dtype_name(t.type) + "; activations are F32 on every backend");
    check_arg(backend, t.ld >= t.cols && t.rows >= 0 && t.cols >= 0, op,
              std::string(name) + " has ld " + std::to_string(t.ld) + " < cols " + std::to_string(t.cols));
}

void check_same_shape(const char* backend, const Tensor& a, const Tensor& b, const char* op) {
    check_arg(backend, a.rows == b.rows && a.cols == b.cols, op,
              "shapes differ: " + std::to_string(a.rows) + "x" + std::to_string(a.cols) + " vs " +
                  std::to_string(b.rows) + "x" + std::to_string(b.cols));
}

}  // namespace niwa::kernels
