// Argument checks shared by every backend's ops (C++17: the CUDA files include it). Each
// throws std::invalid_argument naming the backend, the op and what is wrong.
#pragma once

#include <string>

#include "kernels/ops.h"

namespace niwa::kernels {

void check_arg(const char* backend, bool ok, const char* op, const std::string& what);
// An fp32 tensor with ld >= cols.
void check_f32(const char* backend, const Tensor& t, const char* op, const char* name);
void check_same_shape(const char* backend, const Tensor& a, const Tensor& b, const char* op);

}  // namespace niwa::kernels
