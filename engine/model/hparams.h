// Hyper-parameters of a qwen35 model, read from GGUF metadata with strict types
// (MODEL.md "Geometry" and "Metadata keys").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace niwa::gguf {
class Reader;
class Writer;
}  // namespace niwa::gguf

namespace niwa::model {

struct HParams {
    std::string arch = "qwen35";
    int n_layer = 0;      // decoder layers (without MTP layers)
    int n_nextn = 0;      // MTP layers after the decoder layers (blk.n_layer ...)
    int n_ctx_train = 0;  // context_length
    int n_embd = 0;       // hidden
    int n_ff = 0;         // feed_forward_length
    int n_vocab = 0;      // rows of token_embd
    // Full attention
    int n_head = 0;
    int n_head_kv = 0;
    int head_dim = 0;  // key_length == value_length
    int n_rot = 0;     // rope.dimension_count
    float rope_theta = 0;
    std::vector<int32_t> rope_sections;
    float rms_eps = 1e-6f;
    int full_attn_interval = 4;  // layer i is full attention iff (i + 1) % interval == 0
    // Gated DeltaNet
    int ssm_conv_kernel = 0;
    int ssm_d_state = 0;    // head dim of k and v (128)
    int ssm_n_k_heads = 0;  // group_count
    int ssm_n_v_heads = 0;  // time_step_rank
    int ssm_d_inner = 0;    // n_v_heads * d_state

    bool is_attention(int layer) const { return (layer + 1) % full_attn_interval == 0; }
    int qkv_dim() const { return 2 * ssm_n_k_heads * ssm_d_state + ssm_d_inner; }

    // Reads qwen35.* keys; throws gguf::Error naming the key on a missing key or wrong type,
    // and std::runtime_error for values that are inconsistent with each other.
    static HParams from_gguf(const gguf::Reader& r);
    // Writes the same keys with the same types (used by mkmodel).
    void to_gguf(gguf::Writer& w) const;
    // Throws std::runtime_error if the geometry is inconsistent (zero sizes, heads that do
    // not divide, rope dims larger than the head, ...).
    void validate() const;
};

}  // namespace niwa::model
