// Gated DeltaNet: the gates, and the delta rule in two forms that must agree: token by token
// (Recurrent, the definition) and the chunked WY/UT form of flash-linear-attention (Chunked).
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cpu/cpu_ops.h"

namespace niwa::kernels::cpu {

namespace {

constexpr int kChunk = 64;

// One (sequence, value head): where its rows live and its dk x dv state S[i][j].
struct HeadView {
    const Tensor *q, *k, *v, *g, *beta, *o;
    int64_t key_col, val_col, head;  // column offsets of the key and value head; gate column
    int dk, dv;
    float scale;
    float* state;

    const float* q_row(int64_t r) const { return row_f32(*q, r) + key_col; }
    const float* k_row(int64_t r) const { return row_f32(*k, r) + key_col; }
    const float* v_row(int64_t r) const { return row_f32(*v, r) + val_col; }
    float* o_row(int64_t r) const { return row_f32(*o, r) + val_col; }
    float g_at(int64_t r) const { return row_f32(*g, r)[head]; }
    float beta_at(int64_t r) const { return row_f32(*beta, r)[head]; }
};

void recurrent(const HeadView& hv, int64_t r0, int64_t n) {
    const int dk = hv.dk, dv = hv.dv;
    float* S = hv.state;
    thread_local std::vector<float> u;
    u.resize(static_cast<size_t>(dv));
    // Loops run over i outside and j inside so S is read row by row.
    for (int64_t r = r0; r < r0 + n; ++r) {
        const float decay = std::exp(hv.g_at(r));
        const float* k = hv.k_row(r);
        const float* v = hv.v_row(r);
        const float b = hv.beta_at(r);
        std::fill(u.begin(), u.end(), 0.0f);
        for (int i = 0; i < dk; ++i)
            for (int j = 0; j < dv; ++j) {
                S[i * dv + j] *= decay;
                u[j] += S[i * dv + j] * k[i];  // (Sᵀk)[j]
            }
        for (int j = 0; j < dv; ++j) u[j] = b * (v[j] - u[j]);
        const float* q = hv.q_row(r);
        float* o = hv.o_row(r);
        std::fill(o, o + dv, 0.0f);
        for (int i = 0; i < dk; ++i)
            for (int j = 0; j < dv; ++j) {
                S[i * dv + j] += k[i] * u[j];
                o[j] += S[i * dv + j] * q[i];
            }
        for (int j = 0; j < dv; ++j) o[j] *= hv.scale;
    }
}

// One chunk of L <= kChunk tokens from state S0 (G_t = exp(gc[t]), gc the in-chunk cumulative
// log decay; A[t][s] = beta_t G_t/G_s k_t·k_s for s < t; T = (I + A)⁻¹):
//   U = T(beta V) - T(beta G K) S0     (the u_t of every token at once)
//   O = scale (G Q S0 + (Q Kᵀ ∘ G_t/G_s, s <= t) U)
//   S = G_L S0 + Kᵀ diag(G_L/G_s) U
void chunk(const HeadView& hv, int64_t r0, int L) {
    const int dk = hv.dk, dv = hv.dv;
    float* S = hv.state;
    thread_local std::vector<float> gc, T, W, U;
    gc.resize(L);
    T.assign(static_cast<size_t>(L) * L, 0.0f);
    W.assign(static_cast<size_t>(L) * dk, 0.0f);
    U.assign(static_cast<size_t>(L) * dv, 0.0f);

    float cum = 0.0f;
    for (int t = 0; t < L; ++t) gc[t] = cum += hv.g_at(r0 + t);

    // Forward substitution for T = (I + A)⁻¹, lower unit-triangular, row by row:
    // T[t][s] = [t == s] - sum_{s <= m < t} A[t][m] T[m][s].
    for (int t = 0; t < L; ++t) {
        T[t * L + t] = 1.0f;
        const float bt = hv.beta_at(r0 + t);
        for (int m = 0; m < t; ++m) {
            const float a = bt * std::exp(gc[t] - gc[m]) * dot_f32(hv.k_row(r0 + t), hv.k_row(r0 + m), dk);
            for (int s = 0; s <= m; ++s) T[t * L + s] -= a * T[m * L + s];
        }
    }
    // W = T (beta G K), U = T (beta V) - W S0.
    for (int t = 0; t < L; ++t) {
        for (int s = 0; s <= t; ++s) {
            const float ts = T[t * L + s] * hv.beta_at(r0 + s);
            const float tsg = ts * std::exp(gc[s]);
            const float* ks = hv.k_row(r0 + s);
            const float* vs = hv.v_row(r0 + s);
            for (int i = 0; i < dk; ++i) W[t * dk + i] += tsg * ks[i];
            for (int j = 0; j < dv; ++j) U[t * dv + j] += ts * vs[j];
        }
        for (int i = 0; i < dk; ++i) {
            const float w = W[t * dk + i];
            for (int j = 0; j < dv; ++j) U[t * dv + j] -= w * S[i * dv + j];
        }
    }
    // O: the decayed start state seen through q, plus the chunk's own tokens.
    for (int t = 0; t < L; ++t) {
        const float* q = hv.q_row(r0 + t);
        float* o = hv.o_row(r0 + t);
        const float gt = std::exp(gc[t]);
        for (int j = 0; j < dv; ++j) o[j] = 0.0f;
        for (int i = 0; i < dk; ++i) {
            const float qi = q[i] * gt;
            for (int j = 0; j < dv; ++j) o[j] += qi * S[i * dv + j];
        }
        for (int s = 0; s <= t; ++s) {
            const float a = std::exp(gc[t] - gc[s]) * dot_f32(q, hv.k_row(r0 + s), dk);
            for (int j = 0; j < dv; ++j) o[j] += a * U[s * dv + j];
        }
        for (int j = 0; j < dv; ++j) o[j] *= hv.scale;
    }
    // The state after the chunk.
    const float g_last = gc[L - 1];
    const float decay_all = std::exp(g_last);
    for (int64_t i = 0; i < int64_t{dk} * dv; ++i) S[i] *= decay_all;
    for (int s = 0; s < L; ++s) {
        const float d = std::exp(g_last - gc[s]);
        const float* ks = hv.k_row(r0 + s);
        for (int i = 0; i < dk; ++i) {
            const float ki = ks[i] * d;
            for (int j = 0; j < dv; ++j) S[i * dv + j] += ki * U[s * dv + j];
        }
    }
}

}  // namespace

void CpuOps::gdn_gates(const Tensor& alpha, const Tensor& beta, const float* a, const float* dt_bias) {
    require_f32(alpha, "gdn_gates", "alpha");
    require_f32(beta, "gdn_gates", "beta");
    require_same_shape(alpha, beta, "gdn_gates");
    for (int64_t r = 0; r < alpha.rows; ++r) {
        float* al = row_f32(alpha, r);
        float* be = row_f32(beta, r);
        for (int64_t h = 0; h < alpha.cols; ++h) {
            const float x = al[h] + dt_bias[h];
            const float softplus = x > 20.0f ? x : std::log1p(std::exp(x));
            al[h] = a[h] * softplus;
            be[h] = sigmoid(be[h]);
        }
    }
}

void CpuOps::gated_delta_rule(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& g,
                              const Tensor& beta, const int32_t* key_of_v, int dk, int dv, float scale,
                              const GdnState& st, const StepInfo& step, GdnMode mode, const Tensor& o) {
    const char* op = "gated_delta_rule";
    check_gated_delta_rule("cpu", q, k, v, g, beta, key_of_v, dk, dv, o);
    const int64_t n_v = v.cols / dv;
    for (int s = 0; s < step.n_seqs; ++s)
        require(step.seqs[s].state_slot >= 0 && step.seqs[s].state_slot < st.n_slots, op,
                "sequence " + std::to_string(s) + " state slot outside " + std::to_string(st.n_slots));

    pool_.parallel_for(step.n_seqs * n_v, [&](int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i) {
            const SeqInfo& si = step.seqs[i / n_v];
            const int64_t h = i % n_v;
            const HeadView hv{&q,
                              &k,
                              &v,
                              &g,
                              &beta,
                              &o,
                              int64_t{key_of_v[h]} * dk,
                              h * dv,
                              h,
                              dk,
                              dv,
                              scale,
                              st.ssm + (int64_t{si.state_slot} * n_v + h) * dk * dv};
            const bool chunked = mode == GdnMode::Chunked || (mode == GdnMode::Auto && si.n_q > 1);
            if (!chunked) {
                recurrent(hv, si.q_start, si.n_q);
                continue;
            }
            for (int t0 = 0; t0 < si.n_q; t0 += kChunk)
                chunk(hv, si.q_start + t0, std::min(kChunk, si.n_q - t0));
        }
    });
}

}  // namespace niwa::kernels::cpu
