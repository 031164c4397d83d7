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
// download_rows: both pitches hold a whole row.
void check_download_rows(const char* backend, size_t dst_pitch, size_t src_pitch, size_t row_bytes);

// What every backend requires of an op's arguments, whatever its kernels add:
// a weight's data and geometry (its input a whole number of blocks, rows not overlapping);
void check_weight(const char* backend, const Weight& w, const char* op);
// matmul: the weight, and fp32 x [n, w.in] and y [n, w.out];
void check_matmul(const char* backend, const Weight& w, const Tensor& x, const Tensor& y);
// rotated_matmul: fp32 x and staged of one shape (staged whole rows) and what the kind reads:
// swiglu's up and the gated norm's z of x's shape, whole heads, the sigmoid gate a row per head;
void check_rotated_input(const char* backend, const RotatedInput& in, const Tensor& staged);
// attention: fp32 q and out of one shape, whole heads of kv.head_dim, each mapped to a KV head;
void check_attention(const char* backend, const Tensor& q, const KvLayer& kv, const int32_t* kv_of_q,
                     const Tensor& out);
// gated_delta_rule: fp32 tensors, whole key and value heads, one g and beta per value head,
// each value head mapped to a key head.
void check_gated_delta_rule(const char* backend, const Tensor& q, const Tensor& k, const Tensor& v,
                            const Tensor& g, const Tensor& beta, const int32_t* key_of_v, int dk, int dv,
                            const Tensor& o);

}  // namespace niwa::kernels
