#include "kernels/op_checks.h"

#include <stdexcept>
#include <utility>

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

void check_download_rows(const char* backend, size_t dst_pitch, size_t src_pitch, size_t row_bytes) {
    check_arg(backend, dst_pitch >= row_bytes && src_pitch >= row_bytes, "download_rows",
              "rows of " + std::to_string(row_bytes) + " bytes overlap: the destination pitch is " +
                  std::to_string(dst_pitch) + " bytes, the source pitch " + std::to_string(src_pitch));
}

void check_weight(const char* backend, const Weight& w, const char* op) {
    check_arg(backend, w.data != nullptr || w.out == 0, op, "weight has no data");
    check_arg(backend, w.in % dtype_block_elems(w.type) == 0, op,
              std::string(dtype_name(w.type)) + " weight with " + std::to_string(w.in) +
                  " input columns, not a multiple of its block");
    check_arg(backend, w.row_stride >= dtype_row_bytes(w.type, w.in) || w.out <= 1, op,
              "row_stride " + std::to_string(w.row_stride) + " is shorter than a row");
}

void check_matmul(const char* backend, const Weight& w, const Tensor& x, const Tensor& y) {
    check_weight(backend, w, "matmul");
    check_f32(backend, x, "matmul", "x");
    check_f32(backend, y, "matmul", "y");
    check_arg(backend, x.cols == w.in && y.cols == w.out && x.rows == y.rows, "matmul",
              "x " + std::to_string(x.rows) + "x" + std::to_string(x.cols) + " · W(" + std::to_string(w.out) +
                  "x" + std::to_string(w.in) + ")ᵀ → y " + std::to_string(y.rows) + "x" +
                  std::to_string(y.cols));
}

void check_attention(const char* backend, const Tensor& q, const KvLayer& kv, const int32_t* kv_of_q,
                     const Tensor& out) {
    check_f32(backend, q, "attention", "q");
    check_f32(backend, out, "attention", "out");
    check_same_shape(backend, q, out, "attention");
    check_arg(backend, kv.head_dim > 0 && q.cols % kv.head_dim == 0, "attention",
              "q columns are not whole heads");
    for (int64_t h = 0; h < q.cols / kv.head_dim; ++h)
        check_arg(backend, kv_of_q[h] >= 0 && kv_of_q[h] < kv.n_kv_heads, "attention",
                  "query head " + std::to_string(h) + " reads KV head " + std::to_string(kv_of_q[h]));
}

void check_gated_delta_rule(const char* backend, const Tensor& q, const Tensor& k, const Tensor& v,
                            const Tensor& g, const Tensor& beta, const int32_t* key_of_v, int dk, int dv,
                            const Tensor& o) {
    const char* op = "gated_delta_rule";
    using Named = std::pair<const Tensor*, const char*>;
    for (const auto& [t, name] : {Named{&q, "q"}, Named{&k, "k"}, Named{&v, "v"}, Named{&g, "g"},
                                  Named{&beta, "beta"}, Named{&o, "o"}})
        check_f32(backend, *t, op, name);
    check_arg(backend, dk > 0 && dv > 0 && q.cols % dk == 0 && k.cols == q.cols && v.cols % dv == 0, op,
              "q/k must be whole key heads of " + std::to_string(dk) + ", v whole value heads of " +
                  std::to_string(dv));
    check_same_shape(backend, v, o, op);
    check_same_shape(backend, g, beta, op);
    const int64_t n_v = v.cols / dv, n_k = q.cols / dk;
    check_arg(backend, g.cols == n_v, op,
              "g has " + std::to_string(g.cols) + " columns for " + std::to_string(n_v) + " value heads");
    for (int64_t h = 0; h < n_v; ++h)
        check_arg(backend, key_of_v[h] >= 0 && key_of_v[h] < n_k, op,
                  "value head " + std::to_string(h) + " reads key head " + std::to_string(key_of_v[h]));
}

}  // namespace niwa::kernels
