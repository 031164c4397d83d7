#include "engine/model/forward.h"

#include <algorithm>
#include <cmath>

#include "kernels/sample_draw.h"

namespace niwa::model {

namespace {
constexpr int64_t kLogitRows = 256;
}

using kernels::Tensor;

int StepPlan::n_logit_rows() const {
    int n = 0;
    for (const Range& r : logit_rows) n += int(r.size());
    return n;
}

RankForward::RankForward(const HParams& hp, const ShardPlan& plan, const RankWeights& w,
                         cache::RankCache& cache, kernels::Ops& ops, runtime::Communicator& comm,
                         int max_tokens, bool record_steps)
    : hp_(hp),
      plan_(plan),
      w_(w),
      cache_(cache),
      ops_(ops),
      comm_(comm),
      max_tokens_(max_tokens),
      record_steps_(record_steps && (comm.world() == 1 || ops.in_device_group())) {
    const int64_t d = hp.n_embd, D = hp.head_dim, ds = hp.ssm_d_state;
    const int64_t nh = plan.q_heads.size(), nkv = plan.kv_heads.size();
    const int64_t nk = int64_t(plan.k_heads.size()), nv = int64_t(plan.v_tiled.size());
    x_ = buf(d), xn_ = buf(d), xr_ = buf(d), y_ = buf(d);
    // Outputs of matrices that may be stacked (weights.h) share one buffer, each a column range.
    qg_ = buf(2 * nh * D), q_ = buf(nh * D), kv_ = buf(2 * nkv * D), k_ = buf(nkv * D), o_ = buf(nh * D),
    or_ = buf(nh * D), qgkv_ = buf(2 * (nh + nkv) * D, 1);
    qkvz_ = buf(2 * nk * ds + 2 * nv * ds), conv_ = buf(2 * nk * ds + nv * ds), ab_ = buf(2 * nv),
    qkn_ = buf(2 * nk * ds), go_ = buf(nv * ds), gr_ = buf(nv * ds);
    fgu_ = buf(2 * plan.ffn.size()), fh_ = buf(plan.ffn.size());
    // Logits come out in chunks of at most kLogitRows rows: a long prefill that wants every
    // row's logits does not need a [max_tokens, vocab] buffer.
    logits_ = buf(plan.vocab.size(), std::min<int64_t>(max_tokens, kLogitRows));
    auto ints = [&](size_t n) {
        void* p = ops_.alloc(n * sizeof(int32_t));
        owned_.push_back(p);
        return static_cast<int32_t*>(p);
    };
    d_tokens_ = ints(size_t(max_tokens));
    d_positions_ = ints(size_t(max_tokens));
    d_slots_ = ints(size_t(max_tokens));
}

RankForward::~RankForward() {
    for (void* p : owned_) ops_.free(p);
}

Tensor RankForward::buf(int64_t cols, int64_t rows) {
    if (rows == 0) rows = max_tokens_;
    const size_t bytes = size_t(std::max<int64_t>(1, rows * cols)) * sizeof(float);
    void* p = ops_.alloc(bytes);
    owned_.push_back(p);
    return Tensor{p, kernels::DType::F32, rows, cols, cols};
}

void RankForward::upload_step(const StepPlan& s) {
    n_tokens_ = s.n_tokens();
    const size_t n = size_t(n_tokens_);
    ops_.upload(d_tokens_, s.tokens.data(), n * sizeof(int32_t));
    ops_.upload(d_positions_, s.positions.data(), n * sizeof(int32_t));
    ops_.upload(d_slots_, s.kv_slots.data(), n * sizeof(int32_t));
    if (s.block_tables.size() > tables_cap_) {
        if (d_tables_) ops_.free(d_tables_);
        recordings_.clear();  // they point at the old table
        tables_cap_ = s.block_tables.size() * 2;
        d_tables_ = static_cast<int32_t*>(ops_.alloc(tables_cap_ * sizeof(int32_t)));
    }
    if (!s.block_tables.empty())
        ops_.upload(d_tables_, s.block_tables.data(), s.block_tables.size() * sizeof(int32_t));
    if (s.seqs.size() > seqs_cap_) {
        if (d_seqs_) ops_.free(d_seqs_);
        recordings_.clear();
        seqs_cap_ = s.seqs.size() * 2;
        d_seqs_ = static_cast<kernels::SeqInfo*>(ops_.alloc(seqs_cap_ * sizeof(kernels::SeqInfo)));
    }
    ops_.upload(d_seqs_, s.seqs.data(), s.seqs.size() * sizeof(kernels::SeqInfo));
    host_seqs_ = s.seqs;
    info_ = kernels::StepInfo{d_seqs_,  int(s.seqs.size()), n_tokens_,        d_positions_,
                              d_slots_, d_tables_,          host_seqs_.data()};
    info_.settled = true;  // issue() begins with the embedding lookup, after everything before
}

void RankForward::all_reduce(const Tensor& t) {
    if (comm_.world() == 1) return;
    if (ops_.all_reduce_sum(t)) return;  // on the devices (NCCL), queued like any op
    const size_t n = size_t(t.rows * t.ld);
    ops_.synchronize();
    if (ops_.host_memory()) {
        comm_.all_reduce_sum(t.as<float>(), n);
        return;
    }
    // GPU ranks without a device group (devices.h) meet in host memory: correct, not fast.
    staging_.resize(n);
    ops_.download(staging_.data(), t.data, n * sizeof(float));
    comm_.all_reduce_sum(staging_.data(), n);
    ops_.upload(t.data, staging_.data(), n * sizeof(float));
}

void RankForward::run(const StepPlan& step, float* logits, int64_t ld, kernels::TopLogits* tops) {
    ops_.bind();  // ranks run on their own threads (Model::step)
    upload_step(step);
    const int64_t out = step.n_logit_rows();  // Model::step checks top_asks against it
    const int64_t first_chunk = std::min(logits_.rows, out);
    logits_held_ = 0;
    if (!run_recorded(step, first_chunk)) issue(step, first_chunk);
    if (out == 0) return;
    if (first_chunk == out) {  // one chunk: the asked rows reduced where they are, and kept there
        reduce_logits(step, first(logits_, first_chunk), logits, ld, tops);
        logits_held_ = first_chunk;
        return;
    }
    // A long prefill that wants every row's logits, in chunks: each chunk's rows whole, since the
    // next chunk overwrites them; the asked ones are reduced on the host.
    const Tensor xr = first(xr_, out);
    for (int64_t r0 = 0; r0 < out; r0 += logits_.rows) {
        const int64_t n = std::min(logits_.rows, out - r0);
        const Tensor lg = first(logits_, n);
        if (r0 > 0) ops_.matmul(w_.output, xr.rows_view(r0, n), lg);
        download_logits(lg, logits + r0 * ld, ld);
    }
    for (size_t r = 0; r < step.top_asks.size(); ++r)
        if (step.top_asks[r].k > 0)
            kernels::top_logits_row(logits + int64_t(r) * ld, logits_.cols, step.top_asks[r], tops[r]);
}

void RankForward::reduce_logits(const StepPlan& step, const Tensor& lg, float* dst, int64_t ld,
                                kernels::TopLogits* tops) {
    if (step.top_asks.empty()) return download_logits(lg, dst, ld);
    const kernels::TopAsk* asks = step.top_asks.data();
    std::vector<int64_t> whole;  // the rows wanted whole
    for (int64_t i = 0; i < lg.rows; ++i)
        if (asks[i].k <= 0) whole.push_back(i);
    // Rows asking k 0 reduce to their maximum only.
    if (int64_t(whole.size()) < lg.rows) ops_.top_logits(lg, asks, tops);
    download_rows_at(lg, whole, dst, ld);
}

void RankForward::fetch_rows(const std::vector<int64_t>& rows, float* dst, int64_t ld) {
    if (logits_held_ == 0) return;  // the step brought every row back whole
    ops_.bind();
    download_rows_at(logits_, rows, dst, ld);
}

void RankForward::download_logits(const Tensor& lg, float* dst, int64_t ld) {
    ops_.download_rows(dst, size_t(ld) * sizeof(float), lg.data, size_t(lg.ld) * sizeof(float),
                       size_t(lg.cols) * sizeof(float), size_t(lg.rows));
}

void RankForward::download_rows_at(const Tensor& lg, const std::vector<int64_t>& rows, float* dst,
                                   int64_t ld) {
    ops_.download_rows_at(dst, size_t(ld) * sizeof(float), lg.data, size_t(lg.ld) * sizeof(float),
                          size_t(lg.cols) * sizeof(float), rows.data(), rows.size());
}

bool RankForward::run_recorded(const StepPlan& step, int64_t first_chunk) {
    if (!record_steps_ || ops_.host_memory() || step.n_tokens() == 0 || step.n_tokens() > kMaxRecordedTokens)
        return false;
    // The layout: everything the launches depend on besides the uploaded data.
    std::vector<int64_t> key{step.n_tokens(), first_chunk, int64_t(ops_.launch_key(info_))};
    for (const kernels::SeqInfo& si : step.seqs) {
        key.push_back(si.q_start);
        key.push_back(si.n_q);
    }
    for (const Range& r : step.logit_rows) {
        key.push_back(r.begin);
        key.push_back(r.end);
    }
    auto it = recordings_.find(key);
    if (it != recordings_.end() && it->second.epoch != ops_.recording_epoch()) {
        recordings_.erase(it);
        it = recordings_.end();
    }
    if (it == recordings_.end()) {
        if (seen_.size() >= 4096) seen_.clear();
        if (seen_.insert(key).second) return false;  // first sight: run it directly
        if (recordings_.size() >= 256) recordings_.clear();
        Recorded r;
        r.epoch = ops_.recording_epoch();
        try {
            r.rec = ops_.record([&] { issue(step, first_chunk); });
        } catch (const std::exception&) {
            r.rec = nullptr;  // not recordable (the direct run reports a real error)
        }
        if (ops_.recording_epoch() != r.epoch) r.rec = nullptr;  // a workspace moved while recording
        it = recordings_.emplace(std::move(key), std::move(r)).first;
    }
    if (!it->second.rec) return false;
    it->second.rec->replay();
    ++replayed_;
    return true;
}

void RankForward::issue(const StepPlan& step, int64_t first_chunk) {
    const int64_t T = n_tokens_;
    const Tensor x = first(x_, T), xn = first(xn_, T), y = first(y_, T);

    ops_.embed(w_.embd, d_tokens_, plan_.vocab.begin, x);
    all_reduce(x);
    if (w_.embd_inverse) ops_.rotate(x, w_.embd_rot, /*signs_first=*/false, x);

    // Between sublayers one residual_norm adds the sublayer's output, norms, and rotates into
    // xr for the next matmuls (xn keeps the plain normed rows for GDN's alpha and beta); or, where
    // the backend builds both inside its matmuls, the output projection adds and the next
    // sublayer's matmuls norm (next_input).
    norms_in_matmuls_ = comm_.world() == 1 && ops_.norms_in_matmuls(T);
    const Tensor none{};
    SublayerInput in;
    for (int il = 0; il < hp_.n_layer; ++il) {
        const LayerWeights& L = w_.layers[size_t(il)];
        if (il == 0) {
            in = SublayerInput{first(xr_, T), xn};
            ops_.residual_norm(x, none, L.attn_norm, hp_.rms_eps, xn, input_rotation(L), in.xr);
        }
        Tensor squares = L.attention ? attention_layer(il, in, y) : gdn_layer(il, in, y);
        in = next_input(y, squares, L.post_norm, L.ffn_in_rot);
        squares = ffn(il, in, y);
        if (il + 1 < hp_.n_layer) {
            const LayerWeights& next = w_.layers[size_t(il) + 1];
            in = next_input(y, squares, next.attn_norm, input_rotation(next));
        } else if (!norms_in_matmuls_) {
            all_reduce(y);
            ops_.add(x, y, x);
        }
    }

    // Final norm on the rows that need logits, gathered to the front of xn; adjacent runs
    // (a decode batch's one row per sequence) in one call.
    int64_t out = 0;
    for (size_t i = 0; i < step.logit_rows.size();) {
        const int64_t begin = step.logit_rows[i].begin;
        int64_t end = step.logit_rows[i].end;
        for (++i; i < step.logit_rows.size() && step.logit_rows[i].begin == end; ++i)
            end = step.logit_rows[i].end;
        ops_.rmsnorm(x.rows_view(begin, end - begin), w_.output_norm, hp_.rms_eps,
                     xn_.rows_view(out, end - begin));
        out += end - begin;
    }
    if (out == 0) return;
    const Tensor xo = first(xn_, out), xro = first(xr_, out);
    ops_.rotate(xo, w_.output_rot, /*signs_first=*/true, xro);
    ops_.matmul(w_.output, xro.rows_view(0, first_chunk), first(logits_, first_chunk));
}

RankForward::SublayerInput RankForward::next_input(const Tensor& y, const Tensor& squares, const float* w,
                                                   const kernels::Rotation& r) {
    const int64_t T = n_tokens_;
    SublayerInput in{first(xr_, T), first(xn_, T)};
    if (!norms_in_matmuls_) {
        all_reduce(y);
        ops_.residual_norm(first(x_, T), y, w, hp_.rms_eps, in.xn, r, in.xr);
        return in;
    }
    in.fused = true;
    in.norm.kind = kernels::RotatedInput::Kind::ResidualNorm;
    in.norm.x = first(x_, T);
    in.norm.w = w;
    in.norm.eps = hp_.rms_eps;
    in.norm.r = r;
    in.norm.squares = squares;
    return in;
}

void RankForward::input_matmul(const kernels::Weight& w, const SublayerInput& in, const Tensor& y) {
    if (in.fused)
        ops_.rotated_matmul(w, in.norm, in.xr, y);
    else
        ops_.matmul(w, in.xr, y);
}

void RankForward::stacked_matmul(const kernels::Weight& stacked,
                                 std::initializer_list<const kernels::Weight*> parts, const SublayerInput& in,
                                 const Tensor& y) {
    if (stacked.data) return input_matmul(stacked, in, y);
    int64_t c0 = 0;
    for (const kernels::Weight* w : parts) {
        input_matmul(*w, in, y.cols_view(c0, w->out));
        c0 += w->out;
    }
}

Tensor RankForward::project(const kernels::Weight& w, const kernels::RotatedInput& in, const Tensor& staged,
                            const Tensor& y) {
    if (norms_in_matmuls_) return ops_.rotated_matmul_add(w, in, staged, y, first(x_, n_tokens_));
    ops_.rotated_matmul(w, in, staged, y);
    return {};
}

const kernels::Rotation& RankForward::input_rotation(const LayerWeights& L) {
    return L.attention ? L.attn.in_rot : L.gdn.in_rot;
}

Tensor RankForward::attention_layer(int il, const SublayerInput& in, const Tensor& y) {
    const AttentionWeights& A = w_.layers[size_t(il)].attn;
    const int64_t T = n_tokens_, D = hp_.head_dim;
    const int64_t nh = plan_.q_heads.size(), nkv = plan_.kv_heads.size();
    // One token: q, k and v in one matmul where they are stacked, its row viewed as qg and kv.
    // More: q into qg_, whose rows are a token's heads one after another (the views below).
    const bool one = T == 1 && A.qkv.data;
    const Tensor qg = one ? qgkv_.cols_view(0, 2 * nh * D) : first(qg_, T),
                 kv = one ? qgkv_.cols_view(2 * nh * D, 2 * nkv * D) : first(kv_, T),
                 k = kv.cols_view(0, nkv * D), v = kv.cols_view(nkv * D, nkv * D);
    if (one) {
        input_matmul(A.qkv, in, qgkv_);
    } else {
        input_matmul(A.q, in, qg);
        stacked_matmul(A.kv, {&A.k, &A.v}, in, kv);
    }
    // Per head, attn_q gives [query | gate]: view both halves as rows of one head each.
    const Tensor heads{qg.data, qg.type, T * nh, 2 * D, 2 * D};
    const Tensor q_rows{q_.data, q_.type, T * nh, D, D};
    const Tensor kn = first(k_, T);  // k normed per head, out of kv's column range
    const Tensor o = first(o_, T);
    ops_.qk_attention(heads.cols_view(0, D), A.q_norm, q_rows, k, A.k_norm,
                      Tensor{kn.data, kn.type, T * nkv, D, D}, v, hp_.rms_eps, hp_.n_rot, hp_.rope_theta,
                      cache_.kv[size_t(il)], plan_.kv_of_q.data(), 1.0f / std::sqrt(float(D)), info_, o);
    // The output gate (a head's second half of qg) and the rotation, on the way into the
    // output projection.
    kernels::RotatedInput gated{kernels::RotatedInput::Kind::SigmoidGate, o, heads.cols_view(D, D)};
    gated.width = D;
    gated.r = A.out_rot;
    return project(A.out, gated, first(or_, T), y);
}

Tensor RankForward::gdn_layer(int il, const SublayerInput& in, const Tensor& y) {
    const GdnWeights& G = w_.layers[size_t(il)].gdn;
    const int64_t T = n_tokens_, ds = hp_.ssm_d_state;
    const int64_t nk = int64_t(plan_.k_heads.size()), nv = int64_t(plan_.v_tiled.size());
    const int64_t qkv_dim = 2 * nk * ds + nv * ds;
    const Tensor qkvz = first(qkvz_, T), ab = first(ab_, T), conv = first(conv_, T);
    const Tensor qkv = qkvz.cols_view(0, qkv_dim), z = qkvz.cols_view(qkv_dim, nv * ds);
    const Tensor a = ab.cols_view(0, nv), b = ab.cols_view(nv, nv);
    const Tensor xn = in.xn;
    // alpha and beta read the plain normed input: stacked, the delta rule makes them where the
    // backend makes them inside its kernel (Ops::gdn_ab_in_delta_rule, GdnRaw::ab); else first,
    // where at decode sizes their small matmul is latency, and the large one after it streams its
    // first weights meanwhile (pdl.cuh) -- after it where the norm is made inside it, which
    // leaves xn.
    const SublayerInput plain{xn};
    const bool ab_in_rule = G.ab.data && ops_.gdn_ab_in_delta_rule(T);
    if (!ab_in_rule && !in.fused) stacked_matmul(G.ab, {&G.alpha, &G.beta}, plain, ab);
    // qkv's conv (a decode step's runs as the matmul stores its outputs, when the backend fuses).
    const kernels::GdnState& st = cache_.state[size_t(il)];
    const int K = hp_.ssm_conv_kernel;
    const kernels::Weight& first_w = G.qkvz.data ? G.qkvz : G.qkv;
    const Tensor first_y = G.qkvz.data ? qkvz : qkv;
    if (in.fused) {
        kernels::RotatedInput normed = in.norm;
        normed.normed = xn;
        ops_.rotated_matmul_conv1d_silu(first_w, normed, in.xr, first_y, G.conv, K, st, info_, conv);
    } else {
        ops_.matmul_conv1d_silu(first_w, in.xr, first_y, G.conv, K, st, info_, conv);
    }
    if (!G.qkvz.data) input_matmul(G.gate, in, z);
    if (!ab_in_rule && in.fused) stacked_matmul(G.ab, {&G.alpha, &G.beta}, plain, ab);
    // conv's first 2 nk heads of each row are q and k, L2-normalised per head (into qkn when the
    // backend does not fuse it), alpha and beta become the gates, then the delta rule.
    kernels::GdnRaw raw{G.a, G.dt_bias, 1e-6f, first(qkn_, T)};
    if (ab_in_rule) {
        raw.ab = &G.ab;
        raw.ab_x = xn;
    }
    const Tensor o = first(go_, T);
    ops_.gated_delta_rule_raw(conv.cols_view(0, 2 * nk * ds), conv.cols_view(2 * nk * ds, nv * ds), a, b, raw,
                              plan_.v_key.data(), int(ds), int(ds), 1.0f / std::sqrt(float(ds)), st, info_,
                              kernels::GdnMode::Auto, o);
    // Per head of ds channels (z a column range, read head by head in its rows), then rotated, on
    // the way into the output projection.
    const kernels::RotatedInput gated{
        kernels::RotatedInput::Kind::GatedNorm, o, z, G.norm, hp_.rms_eps, ds, G.out_rot};
    return project(G.out, gated, first(gr_, T), y);
}

Tensor RankForward::ffn(int il, const SublayerInput& in, const Tensor& y) {
    const LayerWeights& L = w_.layers[size_t(il)];
    const int64_t T = n_tokens_;
    const int64_t F = plan_.ffn.size();
    const Tensor gu = first(fgu_, T), g = gu.cols_view(0, F), u = gu.cols_view(F, F), h = first(fh_, T);
    stacked_matmul(L.ffn_gate_up, {&L.ffn_gate, &L.ffn_up}, in, gu);
    kernels::RotatedInput act{kernels::RotatedInput::Kind::Swiglu, g, u};
    act.r = L.ffn_down_rot;
    return project(L.ffn_down, act, h, y);
}

}  // namespace niwa::model
