#include "engine/model/weights.h"

#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <map>
#include <stdexcept>
#include <string>

#include "engine/gguf/reader.h"

namespace niwa::model {

namespace {

kernels::DType dtype_of(gguf::TensorType t) {
    return static_cast<kernels::DType>(static_cast<uint32_t>(t));
}

}  // namespace

// Reads tensors of one layer (or the globals) and places the rank's shard in backend memory.
class RankWeights::Loader {
public:
    Loader(RankWeights& w, const gguf::Reader& file, const PrismRotation& prism)
        : w_(w), file_(file), prism_(prism) {}

    const gguf::TensorInfo& info(const std::string& name) const {
        const gguf::TensorInfo* t = file_.tensor(name);
        if (!t) throw std::runtime_error("tensor '" + name + "' is missing");
        return *t;
    }

    // Rows `rows` (ranges, in order) and input columns `cols` of a matrix, in the layout the
    // backend multiplies by (`lookup`: the one it reads rows of, for an embedding table). A single
    // row range on a host backend is a view into the file; anything else is a compact copy.
    kernels::Weight matrix(const std::string& name, const std::vector<Range>& rows, Range cols,
                           bool lookup = false) {
        const gguf::TensorInfo& t = info(name);
        const kernels::DType type = dtype_of(t.type);
        const size_t row_bytes = kernels::dtype_row_bytes(type, t.ne[0]);
        const size_t col_off = kernels::dtype_row_bytes(type, cols.begin);
        const size_t col_bytes = kernels::dtype_row_bytes(type, cols.size());
        const uint8_t* base = file_.data(t).data();
        kernels::Weight wt{nullptr, type, cols.size(), 0, 0};
        for (const Range& r : rows) wt.out += r.size();
        if (rows.size() == 1 && w_.ops_.host_memory()) {
            wt.data = base + size_t(rows[0].begin) * row_bytes + col_off;
            wt.row_stride = row_bytes;
            return wt;
        }
        std::vector<uint8_t> host(size_t(wt.out) * col_bytes);
        uint8_t* dst = host.data();
        for (const Range& r : rows)
            for (int64_t i = r.begin; i < r.end; ++i, dst += col_bytes)
                std::memcpy(dst, base + size_t(i) * row_bytes + col_off, col_bytes);
        const kernels::DType layout =
            lookup ? w_.ops_.weight_layout(type) : w_.ops_.matmul_layout(type, wt.in, wt.out);
        if (layout != type) {
            host = kernels::convert_rows(type, layout, host.data(), col_bytes, wt.out, wt.in);
            wt.type = layout;
        }
        wt.data = upload(host.data(), host.size());
        wt.row_stride = kernels::dtype_row_bytes(wt.type, wt.in);
        return wt;
    }

    kernels::Weight matrix(const std::string& name, Range rows, bool lookup = false) {
        return matrix(name, std::vector<Range>{rows}, {0, info(name).ne[0]}, lookup);
    }

    // An F32 tensor's elements, all of them, as host floats.
    std::vector<float> floats(const std::string& name) const {
        const gguf::TensorInfo& t = info(name);
        if (t.type != gguf::TensorType::F32) throw std::runtime_error("tensor '" + name + "' must be F32");
        std::vector<float> v(size_t(t.n_elements()));
        std::memcpy(v.data(), file_.data(t).data(), v.size() * sizeof(float));
        return v;
    }

    // Elements [i * stride, (i + 1) * stride) of an F32 tensor for each i in `index`.
    const float* gather(const std::string& name, const std::vector<int32_t>& index, int64_t stride = 1) {
        const std::vector<float> all = floats(name);
        std::vector<float> out;
        out.reserve(index.size() * size_t(stride));
        for (int32_t i : index)
            out.insert(out.end(), all.begin() + i * stride, all.begin() + (i + 1) * stride);
        return static_cast<const float*>(upload(out.data(), out.size() * sizeof(float)));
    }

    const float* vec(const std::string& name) {
        const std::vector<float> v = floats(name);
        return static_cast<const float*>(upload(v.data(), v.size() * sizeof(float)));
    }

    const float* upload_floats(const std::vector<float>& v) {
        return static_cast<const float*>(upload(v.data(), v.size() * sizeof(float)));
    }

    bool folded(const std::string& name) const { return prism_.enabled && prism_.folded.count(name); }

    // The input rotation shared by weights reading the same input: they must agree.
    kernels::Rotation rotation(const std::vector<std::string>& names, int64_t width, int64_t offset,
                               const float* signs) const {
        const bool first = folded(names.front());
        for (const std::string& n : names)
            if (folded(n) != first)
                throw std::runtime_error("tensors " + names.front() + " and " + n +
                                         " read the same input but only one is Hadamard-folded");
        if (!first) return {};
        (void)width;
        return {prism_.block, signs + offset};
    }

    // Matrices that read the same input, stacked into one allocation (their rows in order) so
    // one matmul replaces several: only where the parts are copies already (not views into a
    // mapped file) and agree in type and input width. Each part becomes a view of `out`;
    // otherwise out stays empty and the parts stay as they are.
    void stack(std::initializer_list<kernels::Weight*> parts, kernels::Weight& out) {
        const kernels::Weight& first = **parts.begin();
        if (w_.ops_.host_memory()) return;
        size_t bytes = 0;
        for (const kernels::Weight* p : parts) {
            if (p->type != first.type || p->in != first.in || p->row_stride != first.row_stride) return;
            bytes += size_t(p->out) * p->row_stride;
        }
        auto* base = static_cast<uint8_t*>(w_.ops_.alloc(bytes));
        w_.owned_.push_back(base);
        out = kernels::Weight{base, first.type, first.in, 0, first.row_stride};
        std::vector<const void*> old;
        for (kernels::Weight* p : parts) {
            const size_t n = size_t(p->out) * p->row_stride;
            uint8_t* dst = base + size_t(out.out) * out.row_stride;
            w_.ops_.copy(dst, p->data, n);
            old.push_back(p->data);
            p->data = dst;
            out.out += p->out;
        }
        w_.ops_.synchronize();  // the copies out of the separate uploads have run: free them
        for (const void* p : old) {
            const auto it = std::find(w_.owned_.begin(), w_.owned_.end(), p);
            if (it == w_.owned_.end()) continue;
            w_.ops_.free(*it);
            w_.owned_.erase(it);
        }
    }

    void* upload(const void* src, size_t bytes) {
        void* p = w_.ops_.alloc(bytes);
        w_.owned_.push_back(p);
        w_.ops_.upload(p, src, bytes);
        w_.bytes_copied += bytes;
        return p;
    }

private:
    RankWeights& w_;
    const gguf::Reader& file_;
    const PrismRotation& prism_;
};

RankWeights::RankWeights(const gguf::Reader& file, const HParams& hp, const PrismRotation& prism,
                         const ShardPlan& plan, kernels::Ops& ops)
    : ops_(ops) {
    Loader ld(*this, file, prism);
    // Sign vectors per input width, uploaded once and sliced per shard.
    std::map<int64_t, const float*> signs;
    for (const auto& [width, s] : prism.signs) signs[width] = ld.upload_floats(s);
    auto signs_for = [&](int64_t width) -> const float* {
        if (!prism.enabled) return nullptr;
        auto it = signs.find(width);
        if (it == signs.end())
            throw std::runtime_error("prism.hadamard has no signs for width " + std::to_string(width));
        return it->second;
    };
    const int64_t d = hp.n_embd;

    embd = ld.matrix("token_embd.weight", plan.vocab, /*lookup=*/true);
    embd_inverse = prism.enabled && prism.inverse.count("token_embd.weight");
    if (embd_inverse) embd_rot = {prism.block, signs_for(d)};
    output_norm = ld.vec("output_norm.weight");
    output = ld.matrix("output.weight", plan.vocab);
    output_rot = ld.rotation({"output.weight"}, d, 0, signs_for(d));

    const int64_t D = hp.head_dim, dk = hp.ssm_d_state, dv = hp.ssm_d_state, nk = hp.ssm_n_k_heads;
    for (int il = 0; il < hp.n_layer; ++il) {
        const std::string p = "blk." + std::to_string(il) + ".";
        LayerWeights L;
        L.attention = hp.is_attention(il);
        L.attn_norm = ld.vec(p + "attn_norm.weight");
        L.post_norm = ld.vec(p + "post_attention_norm.weight");
        if (L.attention) {
            AttentionWeights& a = L.attn;
            a.q = ld.matrix(p + "attn_q.weight", {plan.q_heads.begin * 2 * D, plan.q_heads.end * 2 * D});
            a.k = ld.matrix(p + "attn_k.weight", {plan.kv_heads.begin * D, plan.kv_heads.end * D});
            a.v = ld.matrix(p + "attn_v.weight", {plan.kv_heads.begin * D, plan.kv_heads.end * D});
            a.out =
                ld.matrix(p + "attn_output.weight", {{0, d}}, {plan.q_heads.begin * D, plan.q_heads.end * D});
            a.q_norm = ld.vec(p + "attn_q_norm.weight");
            a.k_norm = ld.vec(p + "attn_k_norm.weight");
            a.in_rot = ld.rotation({p + "attn_q.weight", p + "attn_k.weight", p + "attn_v.weight"}, d, 0,
                                   signs_for(d));
            // One matmul for all three at one token (RankForward::attention_layer); k and v
            // stacked still serve the steps of more tokens, whose q rows go elsewhere.
            ld.stack({&a.q, &a.k, &a.v}, a.qkv);
            if (a.qkv.data)
                a.kv = kernels::Weight{a.k.data, a.k.type, a.k.in, a.k.out + a.v.out, a.k.row_stride};
            else
                ld.stack({&a.k, &a.v}, a.kv);
            a.out_rot = ld.rotation({p + "attn_output.weight"}, hp.n_head * D, plan.q_heads.begin * D,
                                    signs_for(hp.n_head * D));
        } else {
            GdnWeights& g = L.gdn;
            // qkv rows and conv channels: q of the local key heads, k of them, v of the local
            // value heads (in the file's tiled order).
            std::vector<Range> rows;
            std::vector<int32_t> channels;
            auto add_heads = [&](int64_t base, const std::vector<int32_t>& heads, int64_t dim) {
                for (int32_t h : heads) {
                    rows.push_back({base + h * dim, base + (h + 1) * dim});
                    for (int64_t c = 0; c < dim; ++c) channels.push_back(int32_t(base + h * dim + c));
                }
            };
            add_heads(0, plan.k_heads, dk);
            add_heads(nk * dk, plan.k_heads, dk);
            add_heads(2 * nk * dk, plan.v_tiled, dv);
            g.qkv = ld.matrix(p + "attn_qkv.weight", rows, {0, d});
            g.conv = ld.gather(p + "ssm_conv1d.weight", channels, hp.ssm_conv_kernel);
            std::vector<Range> gate_rows, head_rows;
            for (int32_t t : plan.v_tiled) {
                gate_rows.push_back({t * dv, (t + 1) * dv});
                head_rows.push_back({t, t + 1});
            }
            g.gate = ld.matrix(p + "attn_gate.weight", gate_rows, {0, d});
            g.alpha = ld.matrix(p + "ssm_alpha.weight", head_rows, {0, d});
            g.beta = ld.matrix(p + "ssm_beta.weight", head_rows, {0, d});
            g.a = ld.gather(p + "ssm_a", plan.v_tiled);
            g.dt_bias = ld.gather(p + "ssm_dt.bias", plan.v_tiled);
            g.norm = ld.vec(p + "ssm_norm.weight");
            g.out = ld.matrix(p + "ssm_out.weight", {{0, d}}, {plan.v_in.begin * dv, plan.v_in.end * dv});
            g.in_rot = ld.rotation({p + "attn_qkv.weight", p + "attn_gate.weight"}, d, 0, signs_for(d));
            ld.stack({&g.qkv, &g.gate}, g.qkvz);
            ld.stack({&g.alpha, &g.beta}, g.ab);
            g.out_rot = ld.rotation({p + "ssm_out.weight"}, hp.ssm_d_inner, plan.v_in.begin * dv,
                                    signs_for(hp.ssm_d_inner));
        }
        L.ffn_gate = ld.matrix(p + "ffn_gate.weight", {plan.ffn});
        L.ffn_up = ld.matrix(p + "ffn_up.weight", {plan.ffn});
        L.ffn_down = ld.matrix(p + "ffn_down.weight", {{0, d}}, plan.ffn);
        L.ffn_in_rot = ld.rotation({p + "ffn_gate.weight", p + "ffn_up.weight"}, d, 0, signs_for(d));
        ld.stack({&L.ffn_gate, &L.ffn_up}, L.ffn_gate_up);
        L.ffn_down_rot = ld.rotation({p + "ffn_down.weight"}, hp.n_ff, plan.ffn.begin, signs_for(hp.n_ff));
        layers.push_back(L);
    }
}

RankWeights::~RankWeights() {
    for (void* p : owned_) ops_.free(p);
}

}  // namespace niwa::model
