// The op interface: everything the model forward calls, and nothing else. One
// implementation per backend (kernels/cpu: the fp32 oracle; kernels/cuda: the fast one).
// All pointers handed to an op point into the backend's own memory (see Ops::alloc).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/formats.h"

namespace niwa::kernels {

// A 2-D activation: `rows` rows of `cols` elements, rows `ld` elements apart (ld >= cols).
struct Tensor {
    void* data = nullptr;
    DType type = DType::F32;
    int64_t rows = 0;
    int64_t cols = 0;
    int64_t ld = 0;

    template <typename T>
    T* as() const {
        return static_cast<T*>(data);
    }
    // Views: columns [c0, c0 + n) of every row; rows [r0, r0 + n).
    Tensor cols_view(int64_t c0, int64_t n) const;
    Tensor rows_view(int64_t r0, int64_t n) const;
};

// A weight matrix of `out` rows by `in` columns (y = x · Wᵀ). Each row is packed in `type`
// (PQ2_0, PTQ1_0, Q8_0, BF16, F16 or F32); rows are `row_stride` bytes apart, so a shard
// can be a view into a larger matrix.
struct Weight {
    const void* data = nullptr;
    DType type = DType::F32;
    int64_t in = 0;
    int64_t out = 0;
    size_t row_stride = 0;
};

// The Prism block Hadamard: H_B on each block of `block` consecutive channels, and a ±1
// sign vector (fp32, one per channel). block == 0 means no transform (unrotated file).
struct Rotation {
    int block = 0;
    const float* signs = nullptr;
};

// One sequence's part of a step. Its new tokens are rows [q_start, q_start + n_q) of the
// step's activations, at positions [pos0, pos0 + n_q).
struct SeqInfo {
    int32_t q_start = 0;
    int32_t n_q = 0;
    int32_t pos0 = 0;         // tokens already cached for this sequence before the step
    int32_t state_slot = 0;   // recurrent-state slot (GDN and conv states)
    int32_t table_start = 0;  // first entry of its block table in StepInfo::block_tables
};

// What the ops need to know about a step: its sequences and where each token goes.
struct StepInfo {
    const SeqInfo* seqs = nullptr;  // [n_seqs]
    int n_seqs = 0;
    int n_tokens = 0;
    const int32_t* positions = nullptr;     // [n_tokens]
    const int32_t* kv_slots = nullptr;      // [n_tokens] KV slot: block * block_tokens + offset
    const int32_t* block_tables = nullptr;  // concatenated per-sequence block tables
    // The same sequence table in host memory (the CPU reads seqs directly; a GPU backend
    // uses this to plan launches without a device round-trip).
    const SeqInfo* host_seqs = nullptr;
    // Whether what the sequences bring from earlier steps was written before this step's first
    // op began, and no op of the step writes it before the op that reads it: the KV cache's
    // tokens before each sequence's pos0 and its recurrent state (which only the layer's delta
    // rule writes). The tables above are uploaded, never written by an op. A backend may then
    // read that history while the ops before still run (CUDA: before pdl_wait, pdl.cuh). The
    // model's steps are so (their first kernel, the embedding lookup, waits for all work before);
    // ops called one by one, where one op may write another's history, are not.
    bool settled = false;
};

// One attention layer's paged KV pool: [n_blocks][block_tokens][n_kv_heads][head_dim] for
// K and for V.
struct KvLayer {
    void* k = nullptr;
    void* v = nullptr;
    DType type = DType::F32;
    int n_blocks = 0;
    int block_tokens = 0;
    int n_kv_heads = 0;
    int head_dim = 0;
};

// Recurrent state of one GDN layer: conv[n_slots][kernel-1][channels] and
// ssm[n_slots][n_v_heads][head_k][head_v] (fp32).
struct GdnState {
    float* conv = nullptr;
    float* ssm = nullptr;
    int n_slots = 0;
};

enum class GdnMode { Auto, Recurrent, Chunked };

// What gated_delta_rule_raw takes beyond gated_delta_rule's arguments: gdn_gates' parameters
// ([n_v_heads] each), the L2 norm's eps, and room for the normalised q and k heads. With `ab`
// set, alpha and beta are not inputs but ab_x · abᵀ (GDN's ssm_alpha and ssm_beta stacked,
// [2 n_v_heads, in]), alpha its first n_v_heads columns: the op computes them, into alpha and
// beta, which must then be the two halves of one [n_tokens, 2 n_v_heads] tensor.
struct GdnRaw {
    const float* a = nullptr;
    const float* dt_bias = nullptr;
    float l2_eps = 1e-6f;
    Tensor qkn;  // [n_tokens, 2 n_k_heads dk], packed
    const Weight* ab = nullptr;
    Tensor ab_x;  // [n_tokens, in]
};

// A matmul's input made on the way in (Ops::rotated_matmul): f(x, ...) rotated as a folded
// weight's input takes it, H_B(s ⊙ f) (rotate with signs_first). What f is:
// - Rotate: x itself;
// - Swiglu: swiglu(x, other) (x the gate, other the up projection);
// - GatedNorm: rmsnorm_gated(x, w, other) per head of `width` channels (other is z);
// - SigmoidGate: x * sigmoid(gate) per head of `width` channels, the gate of x's row r and head
//   h being row r * (x.cols / width) + h of `other` (rows of one head each: attention's gate
//   halves).
// - ResidualNorm: rmsnorm(x) * w per row (x rows of the residual stream, eps), as residual_norm
//   norms them; `normed`, when given, also receives those plain normed rows (residual_norm's xn),
//   and `squares`, when given, holds each row's sum of squares of x in parts, as
//   rotated_matmul_add returned them (a backend may norm from them instead of reading whole rows).
struct RotatedInput {
    enum class Kind { Rotate, Swiglu, GatedNorm, SigmoidGate, ResidualNorm };
    Kind kind = Kind::Rotate;
    Tensor x;
    Tensor other;
    const float* w = nullptr;
    float eps = 0.0f;
    int64_t width = 0;
    Rotation r;
    Tensor normed;   // ResidualNorm: [x.rows, x.cols] or none
    Tensor squares;  // ResidualNorm: [x.rows, parts] or none
};

struct SampleParams {
    float temperature = 1.0f;  // <= 0: greedy (argmax)
    int top_k = 0;             // 0: off
    float top_p = 1.0f;        // 1: off
    float min_p = 0.0f;        // 0: off
    float uniform = 0.0f;      // a uniform draw in [0, 1) from the caller's RNG
};

// Ops::top_logits: what a row of logits is reduced to on its device, so a draw needs no download of
// the whole row (kernels/sample_draw.h merges a row's slices and draws from them).
struct TopAsk {
    int k = 1;                 // candidates: the k largest logits (and every one tied with the k-th)
    float temperature = 0.0f;  // > 0: the rule's total mass at this temperature too
};
struct TopLogits {
    int64_t size = 0;             // tokens in the row
    float max_logit = -INFINITY;  // its largest number (NaN ranks below every number)
    double mass = 0.0;            // sum of exp((logit - max_logit) / T) as sample_weights computes it
    float floor = INFINITY;       // every token whose logit is >= floor is a candidate; -inf: all are
    std::vector<float> logits;    // the candidates, in no order
    std::vector<int32_t> ids;
};

class Ops {
public:
    virtual ~Ops() = default;
    virtual const char* name() const = 0;
    // True when the backend's memory is host memory, so weights can stay in the mapped
    // file instead of being copied.
    virtual bool host_memory() const { return false; }
    // The type this backend multiplies by when a file stores a matrix as `file_type`: the model
    // loader converts its rows with convert_rows (formats.h) when the two differ.
    virtual DType weight_layout(DType file_type) const { return file_type; }
    // The same for a whole matrix of `out` rows of `in` elements that only matmul reads (an
    // embedding table is looked up by rows: weight_layout).
    virtual DType matmul_layout(DType file_type, int64_t in, int64_t out) const {
        (void)in;
        (void)out;
        return weight_layout(file_type);
    }
    // The backend's device memory: free and total on the card (every process's use counted),
    // and what this Ops has allocated and not freed; all 0 for host memory.
    struct MemoryInfo {
        size_t free = 0, total = 0, allocated = 0;
    };
    virtual MemoryInfo memory_info() const { return {}; }
    // Makes the calling thread ready to issue this backend's work; a thread must call it before
    // its first op on this backend and after issuing another backend's work (CUDA: makes the
    // backend's device current, as a kernel launch into another device's stream fails).
    virtual void bind() {}

    // Recorded launches (CUDA graphs): `record` runs `issue` in recording mode — the ops it
    // calls check their arguments and plan as usual, but their launches are kept, not run —
    // and returns what `replay` runs again, each time with the arguments recorded (pointers,
    // sizes, launch plans; the data behind the pointers is read at replay). nullptr: this
    // backend does not record, run the ops directly. A recording is valid while
    // recording_epoch() is unchanged (a workspace it points into may move) and for steps whose
    // launch_key() and row layout equal the recorded one's.
    class Recording {
    public:
        virtual ~Recording() = default;
        virtual void replay() = 0;
    };
    virtual std::unique_ptr<Recording> record(const std::function<void()>& issue) {
        (void)issue;
        return nullptr;
    }
    virtual uint64_t recording_epoch() const { return 0; }
    // What this backend's launches read from step.host_seqs beyond the rows of each sequence
    // (for CUDA: the attention split count's context bucket).
    virtual uint64_t launch_key(const StepInfo& step) const {
        (void)step;
        return 0;
    }

    // Tensor parallelism on the devices: t (f32) = the sum of every rank's t, in place, queued
    // on this rank's stream like any op (so a recording holds it), for ranks joined by
    // join_device_group (devices.h). Every rank of the group must make the same calls in the same
    // order. False, doing nothing, when this rank is in no such group: the caller meets the ranks
    // in host memory instead.
    virtual bool all_reduce_sum(const Tensor& t) {
        (void)t;
        return false;
    }
    // Whether all_reduce_sum runs on the device (this rank joined a device group).
    virtual bool in_device_group() const { return false; }

    // Memory of this backend.
    virtual void* alloc(size_t bytes) = 0;
    virtual void free(void* p) = 0;
    virtual void upload(void* dst, const void* host_src, size_t bytes) = 0;
    virtual void download(void* host_dst, const void* src, size_t bytes) = 0;
    // `rows` rows of row_bytes each, src_pitch bytes apart in backend memory, to host memory
    // dst_pitch bytes apart (such as one rank's vocabulary slice of every full logits row);
    // both pitches >= row_bytes. Returns when the data is there, like download. The default
    // is one download when both pitches equal row_bytes, else one per row (kernels/download_rows.cpp).
    virtual void download_rows(void* host_dst, size_t dst_pitch, const void* src, size_t src_pitch,
                               size_t row_bytes, size_t rows);
    // The same for only the rows indexed by rows[0, n): row rows[i] of src to row rows[i] of
    // host_dst; rows not listed are not written. The default takes a run of consecutive rows a
    // download_rows.
    virtual void download_rows_at(void* host_dst, size_t dst_pitch, const void* src, size_t src_pitch,
                                  size_t row_bytes, const int64_t* rows, size_t n);
    virtual void copy(void* dst, const void* src, size_t bytes) = 0;
    virtual void zero(void* dst, size_t bytes) = 0;
    virtual void synchronize() = 0;
    // Host memory that download() writes into at full speed (CUDA: page-locked, so the copy
    // skips the driver's staging buffer), for buffers every step reuses, such as the logits.
    // Slow to allocate: keep what it returns. The default is plain 64-byte-aligned host
    // memory. Free with free_host of the same Ops.
    static constexpr size_t kHostAlign = 64;
    virtual void* alloc_host(size_t bytes) { return ::operator new (bytes, std::align_val_t{kHostAlign}); }
    virtual void free_host(void* p) { ::operator delete (p, std::align_val_t{kHostAlign}); }

    // y[n, w.out] = x[n, w.in] · Wᵀ, fp32 accumulation.
    virtual void matmul(const Weight& w, const Tensor& x, const Tensor& y) = 0;
    // signs_first: y = H_B(s ⊙ x) (input of a folded weight);
    // else y = s ⊙ H_B(x) (the embedding's inverse). y may alias x.
    virtual void rotate(const Tensor& x, const Rotation& r, bool signs_first, const Tensor& y) = 0;
    // y[i] = row ids[i] - row0 of the table, dequantized; rows outside the table are zero
    // (a vocabulary shard holds rows [row0, row0 + table.out)).
    virtual void embed(const Weight& table, const int32_t* ids, int64_t row0, const Tensor& y) = 0;
    // Per row of width y.cols (a row may be one head): y = x * rsqrt(mean(x²) + eps) * w.
    virtual void rmsnorm(const Tensor& x, const float* w, float eps, const Tensor& y) = 0;
    // Between two sublayers, per row of the residual stream x: x += y (skipped when y.data is
    // null), xn = rmsnorm(x) * w, xr = H_B(s ⊙ xn) (rotate with signs_first; a copy of xn when
    // r.block is 0). The default calls add, rmsnorm and rotate; a backend may fuse them.
    virtual void residual_norm(const Tensor& x, const Tensor& y, const float* w, float eps, const Tensor& xn,
                               const Rotation& r, const Tensor& xr) {
        if (y.data) add(x, y, x);
        rmsnorm(x, w, eps, xn);
        rotate(xn, r, /*signs_first=*/true, xr);
    }
    // Per row: y = x * rsqrt(sum(x²) + eps) (GDN's q and k).
    virtual void l2norm(const Tensor& x, float eps, const Tensor& y) = 0;
    // y = a + b (y may alias a or b).
    virtual void add(const Tensor& a, const Tensor& b, const Tensor& y) = 0;
    // y = silu(gate) * up.
    virtual void swiglu(const Tensor& gate, const Tensor& up, const Tensor& y) = 0;
    // y = H_B(s ⊙ swiglu(gate, up)) (rotate with signs_first): the input of the FFN's down
    // projection. The default calls swiglu and rotates y in place; a backend may fuse them.
    virtual void swiglu_rotate(const Tensor& gate, const Tensor& up, const Rotation& r, const Tensor& y) {
        swiglu(gate, up, y);
        rotate(y, r, /*signs_first=*/true, y);
    }
    // y = x * sigmoid(gate).
    virtual void sigmoid_mul(const Tensor& x, const Tensor& gate, const Tensor& y) = 0;
    // In place, NeoX rotate-half on the first n_rot dims of each head of head_dim in x's
    // rows, at positions step.positions[row].
    virtual void rope(const Tensor& x, int head_dim, int n_rot, float theta, const StepInfo& step) = 0;
    // The attention layer's queries and keys before they meet the cache: every head row (of
    // width q_out.cols, as rmsnorm takes rows) RMS-normed by its side's weight into q_out /
    // k_out, then rope on its first n_rot dims at its token's position. The default calls
    // rmsnorm and rope for each side; a backend may fuse them.
    virtual void qk_norm_rope(const Tensor& q, const float* q_w, const Tensor& q_out, const Tensor& k,
                              const float* k_w, const Tensor& k_out, float eps, int n_rot, float theta,
                              const StepInfo& step) {
        rmsnorm(q, q_w, eps, q_out);
        rmsnorm(k, k_w, eps, k_out);
        rope(q_out, static_cast<int>(q_out.cols), n_rot, theta, step);
        rope(k_out, static_cast<int>(k_out.cols), n_rot, theta, step);
    }

    // Writes the step's K and V rows ([n_tokens, n_kv_heads * head_dim]) into the pool at
    // step.kv_slots.
    virtual void kv_store(const KvLayer& kv, const Tensor& k, const Tensor& v, const StepInfo& step) = 0;
    // qk_norm_rope, then kv_store of its keys and v: the attention layer's new tokens into the
    // pool. k_out is qk_norm_rope's, the keys as head rows [n_tokens * n_kv_heads, head_dim] with
    // ld == cols. The default runs the two (qk_kv_store.cpp); a backend may fuse them, and then
    // leaves k_out unspecified.
    virtual void qk_norm_rope_store(const Tensor& q, const float* q_w, const Tensor& q_out, const Tensor& k,
                                    const float* k_w, const Tensor& k_out, const Tensor& v, float eps,
                                    int n_rot, float theta, const KvLayer& kv, const StepInfo& step);
    // Causal attention of q ([n_tokens, n_q_heads * head_dim]) over each sequence's cached
    // tokens (its new ones included, stored by kv_store first). Query head h reads KV head
    // kv_of_q[h] (host array of n_q_heads). out has q's shape.
    virtual void attention(const Tensor& q, const KvLayer& kv, const int32_t* kv_of_q, float scale,
                           const StepInfo& step, const Tensor& out) = 0;
    // The attention layer from its projections: qk_norm_rope_store, then attention of q_out's
    // head rows (ld == cols) as the step's token rows ([n_tokens, q_out.rows / n_tokens * head_dim],
    // out's shape). The default runs the two (qk_kv_store.cpp); a backend may fuse them, and then
    // leaves q_out and k_out unspecified.
    virtual void qk_attention(const Tensor& q, const float* q_w, const Tensor& q_out, const Tensor& k,
                              const float* k_w, const Tensor& k_out, const Tensor& v, float eps, int n_rot,
                              float theta, const KvLayer& kv, const int32_t* kv_of_q, float scale,
                              const StepInfo& step, const Tensor& out);

    // Causal depthwise conv over each sequence's tokens, continuing from (and updating) its
    // conv state; w is [channels][kernel] fp32; y = silu(conv(x)). y may not alias x.
    virtual void conv1d_silu(const Tensor& x, const float* w, int kernel, const GdnState& st,
                             const StepInfo& step, const Tensor& y) = 0;
    // GDN's input projection and its conv: y = x · Wᵀ, then conv1d_silu over y's first
    // conv_out.cols columns into conv_out (which may not overlap y). The default runs the two; a
    // backend may fuse them, and then leaves those columns of y unspecified.
    virtual void matmul_conv1d_silu(const Weight& w, const Tensor& x, const Tensor& y, const float* conv_w,
                                    int kernel, const GdnState& st, const StepInfo& step,
                                    const Tensor& conv_out) {
        matmul(w, x, y);
        conv1d_silu(y.cols_view(0, conv_out.cols), conv_w, kernel, st, step, conv_out);
    }
    // In place on [n_tokens, n_v_heads]: alpha <- a[h] * softplus(alpha + dt_bias[h]) (the log
    // decay g); beta <- sigmoid(beta).
    virtual void gdn_gates(const Tensor& alpha, const Tensor& beta, const float* a, const float* dt_bias) = 0;
    // Gated delta rule per value head h (key head key_of_v[h], host array) and token:
    //   S = exp(g) S;  u = beta (v - Sᵀk);  S += k uᵀ;  o = Sᵀ (scale q)
    // q, k: [n_tokens, n_k_heads * dk] (already L2-normalised); v, o: [n_tokens, n_v_heads * dv];
    // g, beta: [n_tokens, n_v_heads]. State per slot, continued and updated.
    virtual void gated_delta_rule(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& g,
                                  const Tensor& beta, const int32_t* key_of_v, int dk, int dv, float scale,
                                  const GdnState& st, const StepInfo& step, GdnMode mode,
                                  const Tensor& o) = 0;
    // The gated delta rule from GDN's raw inputs: qk's q and k heads ([n_tokens, 2 n_k_heads dk],
    // the q heads first, as the conv gives them) L2-normalised per head into raw.qkn, alpha and
    // beta through gdn_gates in place, then gated_delta_rule. The default runs those ops; a
    // backend may fuse them, and then leaves raw.qkn, alpha and beta unspecified (scratch).
    virtual void gated_delta_rule_raw(const Tensor& qk, const Tensor& v, const Tensor& alpha,
                                      const Tensor& beta, const GdnRaw& raw, const int32_t* key_of_v, int dk,
                                      int dv, float scale, const GdnState& st, const StepInfo& step,
                                      GdnMode mode, const Tensor& o) {
        const int64_t half = qk.cols / 2;
        const Tensor& n = raw.qkn;
        if (dk <= 0 || qk.cols % (2 * int64_t(dk)) != 0 || n.ld != n.cols || n.rows != qk.rows ||
            n.cols != qk.cols)
            throw std::invalid_argument("gated_delta_rule_raw: qk must be whole q and k heads of " +
                                        std::to_string(dk) + ", raw.qkn a packed tensor of its shape");
        if (raw.ab) matmul(*raw.ab, raw.ab_x, gate_inputs(alpha, beta));
        l2norm(qk, raw.l2_eps, Tensor{n.data, n.type, n.rows * (n.cols / dk), dk, dk});
        gdn_gates(alpha, beta, raw.a, raw.dt_bias);
        gated_delta_rule(n.cols_view(0, half), n.cols_view(half, half), v, alpha, beta, key_of_v, dk, dv,
                         scale, st, step, mode, o);
    }
    // alpha and beta as the one tensor [alpha | beta] they are the halves of (GdnRaw::ab,
    // gate_inputs.cpp); throws std::invalid_argument when they are not.
    Tensor gate_inputs(const Tensor& alpha, const Tensor& beta) const;
    // Per row of width y.cols (one head): y = rmsnorm(x) * w * silu(z).
    virtual void rmsnorm_gated(const Tensor& x, const float* w, const Tensor& z, float eps,
                               const Tensor& y) = 0;
    // y = H_B(s ⊙ rmsnorm_gated(x, w, z)) over heads of `width` channels (rotate with
    // signs_first): the input of GDN's output projection. x, z and y are [n, H * width], y with
    // whole rows (ld == cols). The default calls rmsnorm_gated on y's rows of one head each and
    // rotates y in place; a backend may fuse them.
    virtual void rmsnorm_gated_rotate(const Tensor& x, const float* w, const Tensor& z, float eps,
                                      int64_t width, const Rotation& r, const Tensor& y) {
        if (width <= 0 || y.cols % width != 0 || y.ld != y.cols)
            throw std::invalid_argument("rmsnorm_gated_rotate: y must be whole rows of heads of " +
                                        std::to_string(width));
        rmsnorm_gated(x, w, z, eps, Tensor{y.data, y.type, y.rows * (y.cols / width), width, width});
        rotate(y, r, /*signs_first=*/true, y);
    }

    // y = x · Wᵀ for the x that `in` describes, with `staged` (x's shape, whole rows: ld ==
    // cols) as room to build it. The default builds x in staged (stage_rotated_input) and
    // multiplies; a backend may fuse the two, and then leaves staged unspecified.
    virtual void rotated_matmul(const Weight& w, const RotatedInput& in, const Tensor& staged,
                                const Tensor& y) {
        stage_rotated_input(in, staged);
        matmul(w, staged, y);
    }
    // staged = the input `in` describes, through the ops above (rotated_input.cpp).
    void stage_rotated_input(const RotatedInput& in, const Tensor& staged);
    // A sublayer's output projection and the residual add after it: x += (the input `in`
    // describes) · Wᵀ, per row; y ([x.rows, w.out]) is room for the product. Returns, where the
    // backend summed them as it added, each new row's sum of squares in parts ([x.rows, parts],
    // backend memory, valid until its next call of this op) for the ResidualNorm input of x that
    // follows (RotatedInput::squares); else an empty tensor. The default runs rotated_matmul into
    // y, then add.
    virtual Tensor rotated_matmul_add(const Weight& w, const RotatedInput& in, const Tensor& staged,
                                      const Tensor& y, const Tensor& x) {
        rotated_matmul(w, in, staged, y);
        add(x, y, x);
        return {};
    }
    // matmul_conv1d_silu of the input `in` describes (staged: room to build it, as rotated_matmul
    // takes it). The default builds it in staged.
    virtual void rotated_matmul_conv1d_silu(const Weight& w, const RotatedInput& in, const Tensor& staged,
                                            const Tensor& y, const float* conv_w, int kernel,
                                            const GdnState& st, const StepInfo& step,
                                            const Tensor& conv_out) {
        stage_rotated_input(in, staged);
        matmul_conv1d_silu(w, staged, y, conv_w, kernel, st, step, conv_out);
    }
    // Whether a model step of `rows` tokens should leave each residual add to the output
    // projection before it (rotated_matmul_add) and the norm after it to the matmuls that read it
    // (ResidualNorm inputs) rather than run residual_norm between them: where the backend builds
    // both inside its matmuls, so the step has two fewer launches a layer. No by default.
    virtual bool norms_in_matmuls(int64_t rows) const {
        (void)rows;
        return false;
    }
    // Whether a model step of `tokens` tokens should leave GDN's stacked alpha and beta to
    // gated_delta_rule_raw (GdnRaw::ab: where the backend makes them inside its kernel) rather than
    // run their small matmul before the layer's large one. Yes by default (the op then runs the
    // matmul itself, first).
    virtual bool gdn_ab_in_delta_rule(int64_t tokens) const {
        (void)tokens;
        return true;
    }

    // One token per row of logits [n, vocab]: greedy or sampled per params[i]; params and
    // out_ids are host arrays of n.
    virtual void sample(const Tensor& logits, const SampleParams* params, int32_t* out_ids) = 0;
    // Each row of logits [n, vocab] reduced as asks[i] says (TopAsk), into host out[i]. The
    // default reads the rows in host memory (top_logits_row); a GPU reduces them on the device
    // and brings back only the reductions.
    virtual void top_logits(const Tensor& logits, const TopAsk* asks, TopLogits* out);
};

// The CPU backend (kernels/cpu), with `threads` worker threads (0: hardware concurrency).
std::unique_ptr<Ops> make_cpu_ops(int threads = 0);

// How a GPU backend computes. Activations are fp32 in memory either way; Mixed feeds the
// matmuls' tensor cores bf16 inputs (fp32 accumulation), Fp32 keeps every multiply in fp32
// (the exactness-check path, `--precision fp32`).
enum class Precision { Mixed, Fp32 };

// The CUDA backend (kernels/cuda) on GPU `device`. Throws std::runtime_error in a build
// without CUDA or when the GPU cannot be used, saying why.
std::unique_ptr<Ops> make_cuda_ops(int device = 0, Precision precision = Precision::Mixed);

}  // namespace niwa::kernels
