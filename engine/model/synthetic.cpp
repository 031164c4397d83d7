#include "engine/model/synthetic.h"

#include <stdexcept>

#include "engine/gguf/writer.h"
#include "engine/model/layout.h"
#include "engine/model/prism.h"
#include "engine/model/synthetic_vocab.h"
#include "engine/model/synthetic_weights.h"

namespace niwa::model {

namespace {

// Geometry shared by every preset (Qwen3.5's, MODEL.md "Geometry").
HParams qwen35_common() {
    HParams hp;
    hp.head_dim = 256;
    hp.n_rot = 64;
    hp.rope_theta = 1e7f;
    hp.rope_sections = {11, 11, 10, 0};
    hp.rms_eps = 1e-6f;
    hp.full_attn_interval = 4;
    hp.ssm_conv_kernel = 4;
    hp.ssm_d_state = 128;
    return hp;
}

// general.file_type: llama.cpp's llama_ftype numbering. Prism's fork is reported to call
// PQ2_0 files 141 (LLAMA_FTYPE_MOSTLY_PQ2_0); the number for PTQ1_0 is not public, so 142
// is our guess. Niwa never reads file_type: it goes by each tensor's type.
uint32_t file_type(gguf::TensorType quant) {
    return quant == gguf::TensorType::PTQ1_0 ? 142 : 141;
}

PrismRotation synthetic_rotation(const SyntheticPreset& p, const std::vector<TensorSpec>& layout,
                                 uint64_t seed) {
    PrismRotation rot;
    rot.enabled = true;
    rot.block = p.hadamard_block;
    rot.gdn_v_grouped = true;
    for (const TensorSpec& t : layout) {
        if (t.hadamard_folded) {
            rot.folded.insert(t.name);
            if (!rot.signs.count(t.ne[0])) rot.signs[t.ne[0]] = synthetic_signs(seed, t.ne[0]);
        } else if (t.kind == TensorKind::Ternary) {
            rot.inverse.insert(t.name);  // the embedding
        }
    }
    return rot;
}

}  // namespace

SyntheticPreset synthetic_preset(const std::string& name) {
    SyntheticPreset p;
    p.name = name;
    p.hp = qwen35_common();
    HParams& hp = p.hp;
    if (name == "tiny") {
        hp.n_layer = 4;
        hp.n_embd = 256;
        hp.n_ff = 1024;
        hp.n_head = 4;
        hp.n_head_kv = 2;
        hp.ssm_n_k_heads = 2;
        hp.ssm_n_v_heads = 6;
        hp.n_ctx_train = 32768;
        p.hadamard_block = 256;
    } else if (name == "small") {
        hp.n_layer = 8;
        hp.n_embd = 1024;
        hp.n_ff = 3584;
        hp.n_head = 8;
        hp.n_head_kv = 2;
        hp.ssm_n_k_heads = 4;
        hp.ssm_n_v_heads = 8;
        hp.n_ctx_train = 65536;
        p.hadamard_block = 512;
    } else if (name == "27b") {
        hp.n_layer = 64;
        hp.n_embd = 5120;
        hp.n_ff = 17408;
        hp.n_head = 24;
        hp.n_head_kv = 4;
        hp.ssm_n_k_heads = 16;
        hp.ssm_n_v_heads = 48;
        hp.n_ctx_train = 262144;
        hp.n_vocab = 248320;
        p.hadamard_block = 1024;
        p.first_special = 248044;
    } else {
        throw std::invalid_argument("unknown preset '" + name + "' (known: tiny, small, 27b)");
    }
    hp.ssm_d_inner = hp.ssm_n_v_heads * hp.ssm_d_state;
    return p;
}

void write_synthetic_model(const SyntheticOptions& o, const std::string& path) {
    if (o.quant != gguf::TensorType::PQ2_0 && o.quant != gguf::TensorType::PTQ1_0)
        throw std::invalid_argument("mkmodel writes ternary weights as PQ2_0 or PTQ1_0, not " +
                                    std::string(gguf::to_string(o.quant)));
    SyntheticPreset p = synthetic_preset(o.preset);
    const SyntheticVocab vocab = synthetic_vocab(p.first_special, p.hp.n_vocab);
    p.hp.n_vocab = int(vocab.tokens.size());
    p.hp.validate();
    const std::vector<TensorSpec> layout = tensor_layout(p.hp);

    gguf::Writer w;
    w.add_string("general.architecture", "qwen35");
    w.add_string("general.name", "Niwa synthetic " + p.name);
    w.add_u32("general.file_type", file_type(o.quant));
    w.add_u32("general.quantization_version", 2);
    w.add_i32("general.sampling.top_k", 20);
    w.add_f32("general.sampling.top_p", 0.95f);
    w.add_f32("general.sampling.temp", 1.0f);
    w.add_u64("niwa.synthetic.seed", o.seed);
    w.add_string("niwa.synthetic.preset", p.name);
    p.hp.to_gguf(w);
    // Weights are random, so the trits are stored as they are: there is nothing to fold.
    if (o.rotated) synthetic_rotation(p, layout, o.seed).to_gguf(w);
    vocab.to_gguf(w);

    uint64_t total = 0;
    std::vector<gguf::TensorType> types;
    for (const TensorSpec& t : layout) {
        types.push_back(t.kind == TensorKind::Ternary ? o.quant
                        : t.kind == TensorKind::Dense ? gguf::TensorType::BF16
                                                      : gguf::TensorType::F32);
        uint64_t bytes = gguf::row_bytes(types.back(), t.ne[0]);
        for (size_t d = 1; d < t.ne.size(); ++d) bytes *= uint64_t(t.ne[d]);
        total += bytes;
    }
    uint64_t done = 0;  // write() calls the fills in order, on this thread
    for (size_t i = 0; i < layout.size(); ++i) {
        const TensorSpec& t = layout[i];
        const gguf::TensorType type = types[i];
        w.add_tensor(t.name, type, t.ne, [&o, &done, t, type, i, total](std::span<uint8_t> out) {
            fill_synthetic_tensor(t, type, o.seed, i, out, o.threads);
            done += out.size();
            if (o.progress) o.progress(done, total);
        });
    }
    w.write(path);
}

}  // namespace niwa::model
