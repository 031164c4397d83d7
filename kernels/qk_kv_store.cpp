// Ops::qk_norm_rope_store and Ops::qk_attention: the attention layer's queries and keys normed
// and rotated, its keys and values stored (and attended), as the ops they are made of, what
// every backend does where it does not fuse them.
#include "kernels/op_checks.h"

namespace niwa::kernels {

void Ops::qk_norm_rope_store(const Tensor& q, const float* q_w, const Tensor& q_out, const Tensor& k,
                             const float* k_w, const Tensor& k_out, const Tensor& v, float eps, int n_rot,
                             float theta, const KvLayer& kv, const StepInfo& step) {
    const char* op = "qk_norm_rope_store";
    const int64_t heads = kv.n_kv_heads;
    check_arg(name(),
              heads > 0 && k_out.cols == kv.head_dim && k_out.ld == k_out.cols && k_out.rows % heads == 0, op,
              "k_out must be the keys as whole head rows [n_tokens * n_kv_heads, head_dim]");
    qk_norm_rope(q, q_w, q_out, k, k_w, k_out, eps, n_rot, theta, step);
    const Tensor keys{k_out.data, k_out.type, k_out.rows / heads, heads * k_out.cols, heads * k_out.cols};
    kv_store(kv, keys, v, step);
}

void Ops::qk_attention(const Tensor& q, const float* q_w, const Tensor& q_out, const Tensor& k,
                       const float* k_w, const Tensor& k_out, const Tensor& v, float eps, int n_rot,
                       float theta, const KvLayer& kv, const int32_t* kv_of_q, float scale,
                       const StepInfo& step, const Tensor& out) {
    const int64_t tokens = step.n_tokens;
    check_arg(name(), q_out.ld == q_out.cols && (tokens == 0 || q_out.rows % tokens == 0), "qk_attention",
              "q_out must be the queries as whole head rows [n_tokens * n_q_heads, head_dim]");
    qk_norm_rope_store(q, q_w, q_out, k, k_w, k_out, v, eps, n_rot, theta, kv, step);
    if (tokens == 0) return;
    const int64_t width = q_out.rows / tokens * q_out.cols;
    attention(Tensor{q_out.data, q_out.type, tokens, width, width}, kv, kv_of_q, scale, step, out);
}

}  // namespace niwa::kernels
