#include "engine/model/hparams.h"

#include <stdexcept>

#include "engine/gguf/reader.h"
#include "engine/gguf/writer.h"

namespace niwa::model {

namespace {

std::string key(const std::string& arch, const char* suffix) {
    return arch + "." + suffix;
}

int as_int(const std::string& k, uint32_t v) {
    if (v > uint32_t(INT32_MAX))
        throw std::runtime_error("metadata '" + k + "' is too large: " + std::to_string(v));
    return int(v);
}

}  // namespace

HParams HParams::from_gguf(const gguf::Reader& r) {
    HParams hp;
    hp.arch = r.get_string("general.architecture");
    if (hp.arch != "qwen35")
        throw std::runtime_error("general.architecture is '" + hp.arch +
                                 "'; niwa-engine runs qwen35 models (Ternary-Bonsai-2 / Qwen3.5)");
    const std::string& a = hp.arch;
    auto u32 = [&](const char* s) { return as_int(key(a, s), r.get_u32(key(a, s))); };
    const int n_blocks = u32("block_count");
    hp.n_nextn = r.has(key(a, "nextn_predict_layers")) ? u32("nextn_predict_layers") : 0;
    hp.n_layer = n_blocks - hp.n_nextn;
    hp.n_ctx_train = u32("context_length");
    hp.n_embd = u32("embedding_length");
    hp.n_ff = u32("feed_forward_length");
    hp.n_head = u32("attention.head_count");
    hp.n_head_kv = u32("attention.head_count_kv");
    hp.head_dim = u32("attention.key_length");
    const int value_length = u32("attention.value_length");
    if (value_length != hp.head_dim)
        throw std::runtime_error("attention.key_length (" + std::to_string(hp.head_dim) +
                                 ") differs from attention.value_length (" + std::to_string(value_length) +
                                 "); qwen35 uses one head size");
    hp.rms_eps = r.get_f32(key(a, "attention.layer_norm_rms_epsilon"));
    hp.rope_theta = r.get_f32(key(a, "rope.freq_base"));
    hp.n_rot = u32("rope.dimension_count");
    if (r.has(key(a, "rope.dimension_sections")))
        hp.rope_sections = r.get_i32_array(key(a, "rope.dimension_sections"));
    hp.ssm_conv_kernel = u32("ssm.conv_kernel");
    hp.ssm_d_state = u32("ssm.state_size");
    hp.ssm_n_k_heads = u32("ssm.group_count");
    hp.ssm_n_v_heads = u32("ssm.time_step_rank");
    hp.ssm_d_inner = u32("ssm.inner_size");
    hp.full_attn_interval = u32("full_attention_interval");
    const gguf::TensorInfo* embd = r.tensor("token_embd.weight");
    if (!embd) throw std::runtime_error("tensor 'token_embd.weight' is missing");
    if (embd->n_dims != 2) throw std::runtime_error("tensor 'token_embd.weight' must have 2 dimensions");
    hp.n_vocab = int(embd->ne[1]);
    hp.validate();
    return hp;
}

void HParams::to_gguf(gguf::Writer& w) const {
    const std::string& a = arch;
    w.add_u32(key(a, "block_count"), uint32_t(n_layer + n_nextn));
    w.add_u32(key(a, "context_length"), uint32_t(n_ctx_train));
    w.add_u32(key(a, "embedding_length"), uint32_t(n_embd));
    w.add_u32(key(a, "feed_forward_length"), uint32_t(n_ff));
    w.add_u32(key(a, "attention.head_count"), uint32_t(n_head));
    w.add_u32(key(a, "attention.head_count_kv"), uint32_t(n_head_kv));
    w.add_u32(key(a, "attention.key_length"), uint32_t(head_dim));
    w.add_u32(key(a, "attention.value_length"), uint32_t(head_dim));
    w.add_f32(key(a, "attention.layer_norm_rms_epsilon"), rms_eps);
    w.add_f32(key(a, "rope.freq_base"), rope_theta);
    w.add_u32(key(a, "rope.dimension_count"), uint32_t(n_rot));
    w.add_i32_array(key(a, "rope.dimension_sections"), rope_sections);
    w.add_u32(key(a, "ssm.conv_kernel"), uint32_t(ssm_conv_kernel));
    w.add_u32(key(a, "ssm.state_size"), uint32_t(ssm_d_state));
    w.add_u32(key(a, "ssm.group_count"), uint32_t(ssm_n_k_heads));
    w.add_u32(key(a, "ssm.time_step_rank"), uint32_t(ssm_n_v_heads));
    w.add_u32(key(a, "ssm.inner_size"), uint32_t(ssm_d_inner));
    w.add_u32(key(a, "full_attention_interval"), uint32_t(full_attn_interval));
    if (n_nextn > 0) w.add_u32(key(a, "nextn_predict_layers"), uint32_t(n_nextn));
}

void HParams::validate() const {
    auto fail = [](const std::string& m) { throw std::runtime_error("inconsistent model geometry: " + m); };
    if (n_layer <= 0 || n_embd <= 0 || n_ff <= 0 || n_vocab <= 0)
        fail("layers, hidden, FFN and vocabulary must be positive");
    if (n_head <= 0 || n_head_kv <= 0 || n_head % n_head_kv)
        fail("attention heads must be a positive multiple of KV heads");
    if (head_dim <= 0 || n_rot <= 0 || n_rot > head_dim || n_rot % 2)
        fail("rope dims must be even and at most the head size");
    if (full_attn_interval <= 0) fail("full_attention_interval must be positive");
    if (ssm_conv_kernel < 2 || ssm_d_state <= 0) fail("ssm conv kernel must be >= 2 and state size positive");
    if (ssm_n_k_heads <= 0 || ssm_n_v_heads <= 0 || ssm_n_v_heads % ssm_n_k_heads)
        fail("GDN value heads must be a positive multiple of key heads");
    if (ssm_d_inner != ssm_n_v_heads * ssm_d_state)
        fail("ssm.inner_size (" + std::to_string(ssm_d_inner) + ") must be time_step_rank x state_size (" +
             std::to_string(ssm_n_v_heads * ssm_d_state) + ")");
    if (!(rms_eps > 0) || !(rope_theta > 0)) fail("rms epsilon and rope base must be positive");
}

}  // namespace niwa::model
