#include "engine/model/layout.h"

#include "engine/gguf/reader.h"

namespace niwa::model {

std::vector<TensorSpec> tensor_layout(const HParams& hp) {
    using K = TensorKind;
    const int64_t d = hp.n_embd;
    std::vector<TensorSpec> t;
    t.push_back({"token_embd.weight", {d, hp.n_vocab}, K::Ternary, false});
    for (int il = 0; il < hp.n_layer; ++il) {
        const std::string p = "blk." + std::to_string(il) + ".";
        t.push_back({p + "attn_norm.weight", {d}, K::Norm, false});
        if (hp.is_attention(il)) {
            const int64_t q = int64_t(hp.n_head) * hp.head_dim;
            const int64_t kv = int64_t(hp.n_head_kv) * hp.head_dim;
            t.push_back({p + "attn_q.weight", {d, 2 * q}, K::Ternary, true});  // query and gate per head
            t.push_back({p + "attn_k.weight", {d, kv}, K::Ternary, true});
            t.push_back({p + "attn_v.weight", {d, kv}, K::Ternary, true});
            t.push_back({p + "attn_q_norm.weight", {hp.head_dim}, K::Norm, false});
            t.push_back({p + "attn_k_norm.weight", {hp.head_dim}, K::Norm, false});
            t.push_back({p + "attn_output.weight", {q, d}, K::Ternary, true});
        } else {
            const int64_t nv = hp.ssm_n_v_heads;
            t.push_back({p + "attn_qkv.weight", {d, hp.qkv_dim()}, K::Ternary, true});
            t.push_back({p + "attn_gate.weight", {d, hp.ssm_d_inner}, K::Ternary, true});
            t.push_back({p + "ssm_conv1d.weight", {hp.ssm_conv_kernel, hp.qkv_dim()}, K::F32, false});
            t.push_back({p + "ssm_dt.bias", {nv}, K::F32, false});
            t.push_back({p + "ssm_a", {nv}, K::F32, false});
            t.push_back({p + "ssm_alpha.weight", {d, nv}, K::Dense, false});
            t.push_back({p + "ssm_beta.weight", {d, nv}, K::Dense, false});
            t.push_back({p + "ssm_norm.weight", {hp.ssm_d_state}, K::Norm, false});
            t.push_back({p + "ssm_out.weight", {hp.ssm_d_inner, d}, K::Ternary, true});
        }
        t.push_back({p + "post_attention_norm.weight", {d}, K::Norm, false});
        t.push_back({p + "ffn_gate.weight", {d, hp.n_ff}, K::Ternary, true});
        t.push_back({p + "ffn_up.weight", {d, hp.n_ff}, K::Ternary, true});
        t.push_back({p + "ffn_down.weight", {hp.n_ff, d}, K::Ternary, true});
    }
    t.push_back({"output_norm.weight", {d}, K::Norm, false});
    t.push_back({"output.weight", {d, hp.n_vocab}, K::Ternary, true});
    return t;
}

bool type_allowed(TensorKind kind, gguf::TensorType t) {
    using T = gguf::TensorType;
    switch (kind) {
        case TensorKind::Ternary:
            return t == T::PQ2_0 || t == T::PTQ1_0 || t == T::Q8_0 || t == T::BF16 || t == T::F16 ||
                   t == T::F32;
        case TensorKind::Norm:
        case TensorKind::F32:
            return t == T::F32;
        case TensorKind::Dense:
            return t == T::BF16 || t == T::F16 || t == T::F32;
    }
    return false;
}

}  // namespace niwa::model

namespace niwa::model {

namespace {

std::string shape_str(const int64_t* ne, size_t n) {
    std::string s = "[";
    for (size_t i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(ne[i]);
    return s + "]";
}

}  // namespace

void check_layout(const gguf::Reader& r, const HParams& hp) {
    std::vector<std::string> problems;
    for (const TensorSpec& spec : tensor_layout(hp)) {
        const gguf::TensorInfo* t = r.tensor(spec.name);
        if (!t) {
            problems.push_back("missing tensor '" + spec.name + "'");
            continue;
        }
        bool same = size_t(t->n_dims) == spec.ne.size();
        for (size_t i = 0; same && i < spec.ne.size(); ++i) same = t->ne[i] == spec.ne[i];
        if (!same)
            problems.push_back("tensor '" + spec.name + "' has shape " + shape_str(t->ne, size_t(t->n_dims)) +
                               ", expected " + shape_str(spec.ne.data(), spec.ne.size()));
        if (!type_allowed(spec.kind, t->type))
            problems.push_back("tensor '" + spec.name + "' has type " +
                               std::string(gguf::to_string(t->type)) +
                               ", which this engine cannot use there");
    }
    if (problems.empty()) return;
    std::string msg = "the model file does not have the qwen35 layout (" + std::to_string(problems.size()) +
                      " problem" + (problems.size() > 1 ? "s" : "") + "):";
    for (const std::string& p : problems) msg += "\n  " + p;
    throw std::runtime_error(msg);
}

}  // namespace niwa::model
