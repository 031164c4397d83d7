// The gated delta rule in fp32, in the CPU oracle's two forms. Recurrent: one block per
// (sequence, value head, 32 state columns) holds its dk x 32 slice of S in registers for the
// whole step (columns of S evolve independently), read once and written once. Chunked: one
// block per (sequence, value head, 16 columns) walks the sequence in chunks of 64 tokens in
// the WY/UT form, everything a chunk needs in shared memory. Auto: recurrent for short runs.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cuda/cuda_ops.h"

namespace niwa::kernels::cuda {

namespace {

constexpr int kMaxValueHeads = 256;
constexpr int kMaxListSeqs = 512;
// Auto takes the recurrent form up to this many tokens (a chunk costs about as much as that
// many recurrent steps).
constexpr int kAutoRecurrentMaxQ = 8;

struct GdnArgs {
    const float *q, *k, *v, *g, *beta;
    float* o;
    int64_t q_ld, k_ld, v_ld, g_ld, beta_ld, o_ld;
    int dv, n_v;
    float scale;
    float* ssm;
    const SeqInfo* seqs;
};

struct KeyMap {
    int16_t key[kMaxValueHeads];
};

struct SeqList {
    int n = 0;
    int32_t idx[kMaxListSeqs];
};

// ---- recurrent ---------------------------------------------------------------------------

constexpr int kRecWarps = 4;
constexpr int kRecCols = 32;

template <int DK>
__global__ void __launch_bounds__(kRecWarps * 32) recurrent_kernel(GdnArgs a, KeyMap km, SeqList list) {
    constexpr int kRows = DK / kRecWarps;  // rows of S a thread holds, in its column
    __shared__ float kq[2][DK];
    __shared__ float red[2][kRecWarps][32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int h = blockIdx.y, j = blockIdx.x * kRecCols + lane;
    const SeqInfo si = a.seqs[list.idx[blockIdx.z]];
    if (si.n_q == 0) return;
    const int64_t kc = int64_t(km.key[h]) * DK, vc = int64_t(h) * a.dv + j;
    float* S = a.ssm + (int64_t(si.state_slot) * a.n_v + h) * DK * a.dv + j;
    float s[kRows];
#pragma unroll
    for (int r = 0; r < kRows; ++r) s[r] = S[int64_t(warp * kRows + r) * a.dv];

    for (int t = 0; t < si.n_q; ++t) {
        const int64_t row = si.q_start + t;
        for (int i = threadIdx.x; i < DK; i += kRecWarps * 32) {
            kq[0][i] = a.k[row * a.k_ld + kc + i];
            kq[1][i] = a.q[row * a.q_ld + kc + i];
        }
        const float decay = expf(a.g[row * a.g_ld + h]);
        const float b = a.beta[row * a.beta_ld + h];
        const float vj = a.v[row * a.v_ld + vc];
        __syncthreads();
        float part = 0.0f;
#pragma unroll
        for (int r = 0; r < kRows; ++r) {
            s[r] *= decay;
            part = fmaf(s[r], kq[0][warp * kRows + r], part);
        }
        red[0][warp][lane] = part;
        __syncthreads();
        float sk = 0.0f;
#pragma unroll
        for (int w = 0; w < kRecWarps; ++w) sk += red[0][w][lane];
        const float u = b * (vj - sk);
        part = 0.0f;
#pragma unroll
        for (int r = 0; r < kRows; ++r) {
            s[r] = fmaf(kq[0][warp * kRows + r], u, s[r]);
            part = fmaf(s[r], kq[1][warp * kRows + r], part);
        }
        red[1][warp][lane] = part;
        __syncthreads();
        if (warp == 0) {
            float o = 0.0f;
#pragma unroll
            for (int w = 0; w < kRecWarps; ++w) o += red[1][w][lane];
            a.o[row * a.o_ld + vc] = o * a.scale;
        }
    }
#pragma unroll
    for (int r = 0; r < kRows; ++r) S[int64_t(warp * kRows + r) * a.dv] = s[r];
}

// ---- chunked -----------------------------------------------------------------------------

constexpr int kC = 64;   // tokens a chunk
constexpr int kBV = 16;  // state columns a block
constexpr int kChunkThreads = 256;
static_assert(kChunkThreads == 16 * kBV && kC == 64, "thread (ty, tx) takes rows ty + 16a, column tx");

template <int DK>
constexpr size_t chunk_smem_bytes() {
    return sizeof(float) * (2 * size_t(kC) * (DK + 1) + size_t(kC) * (kC + 1) + size_t(kC) * kBV +
                            size_t(DK) * kBV + 3 * size_t(kC));
}

// Per chunk of L tokens from state S0 (gc: in-chunk cumulative log decay, G_t = exp(gc_t);
// A[t][s] = beta_t G_t/G_s k_t·k_s for s < t; T = (I + A)⁻¹):
//   U = T (beta (V - G K S0))        (the u_t of every token at once)
//   O = scale (G Q S0 + (Q Kᵀ ∘ G_t/G_s, s <= t) U)
//   S = G_L S0 + Kᵀ diag(G_L/G_s) U
// A lives below the diagonal of one 64 x 65 buffer and T[m][s] above it (at [s][m]), so the
// forward substitution needs no barrier: four lanes own column s of T, each the rows m ≡ lane.
template <int DK>
__global__ void __launch_bounds__(kChunkThreads) chunked_kernel(GdnArgs a, KeyMap km, SeqList list) {
    constexpr int kKl = DK + 1, kAl = kC + 1;
    extern __shared__ float4 smem4[];
    float* ks = reinterpret_cast<float*>(smem4);
    float* qs = ks + kC * kKl;
    float* at = qs + kC * kKl;
    float* us = at + kC * kAl;
    float* ss = us + kC * kBV;
    float* gc = ss + DK * kBV;
    float* bt = gc + kC;
    float* dec = bt + kC;

    const int tid = threadIdx.x, lane = tid & 31, tx = tid % 16, ty = tid / 16;
    const int h = blockIdx.y, j0 = blockIdx.x * kBV;
    const SeqInfo si = a.seqs[list.idx[blockIdx.z]];
    if (si.n_q == 0) return;
    const int64_t kc = int64_t(km.key[h]) * DK, vc = int64_t(h) * a.dv + j0;
    float* S = a.ssm + (int64_t(si.state_slot) * a.n_v + h) * DK * a.dv + j0;
    for (int idx = tid; idx < DK * kBV; idx += kChunkThreads)
        ss[idx] = S[int64_t(idx / kBV) * a.dv + idx % kBV];

    for (int c0 = 0; c0 < si.n_q; c0 += kC) {
        const int L = min(kC, si.n_q - c0);
        const int64_t r0 = si.q_start + c0;
        __syncthreads();  // the previous chunk is done with every buffer
        for (int idx = tid; idx < kC * DK; idx += kChunkThreads) {
            const int t = idx / DK, i = idx % DK;
            const bool in = t < L;
            ks[t * kKl + i] = in ? a.k[(r0 + t) * a.k_ld + kc + i] : 0.0f;
            qs[t * kKl + i] = in ? a.q[(r0 + t) * a.q_ld + kc + i] : 0.0f;
        }
        for (int idx = tid; idx < kC * kBV; idx += kChunkThreads) {
            const int t = idx / kBV;
            us[idx] = t < L ? a.v[(r0 + t) * a.v_ld + vc + idx % kBV] : 0.0f;
        }
        if (tid < kC) {
            gc[tid] = tid < L ? a.g[(r0 + tid) * a.g_ld + h] : 0.0f;  // rows past L: no decay
            bt[tid] = tid < L ? a.beta[(r0 + tid) * a.beta_ld + h] : 0.0f;
        }
        __syncthreads();
        if (tid < 32) {  // inclusive scan of g over the chunk, then the decays to its end
            float x0 = gc[lane], x1 = gc[lane + 32];
#pragma unroll
            for (int off = 1; off < 32; off <<= 1) {
                const float y0 = __shfl_up_sync(0xffffffffu, x0, off);
                const float y1 = __shfl_up_sync(0xffffffffu, x1, off);
                if (lane >= off) {
                    x0 += y0;
                    x1 += y1;
                }
            }
            x1 += __shfl_sync(0xffffffffu, x0, 31);
            const float last = __shfl_sync(0xffffffffu, x1, 31);  // = gc[L - 1]: rows past L add 0
            gc[lane] = x0;
            gc[lane + 32] = x1;
            dec[lane] = lane < L ? expf(last - x0) : 0.0f;
            dec[lane + 32] = lane + 32 < L ? expf(last - x1) : 0.0f;
        }
        __syncthreads();

        // A, below the diagonal.
        {
            float acc[4][4] = {};
            for (int i = 0; i < DK; ++i) {
                float kt[4], kk[4];
#pragma unroll
                for (int x = 0; x < 4; ++x) {
                    kt[x] = ks[(ty + 16 * x) * kKl + i];
                    kk[x] = ks[(tx + 16 * x) * kKl + i];
                }
#pragma unroll
                for (int x = 0; x < 4; ++x)
#pragma unroll
                    for (int y = 0; y < 4; ++y) acc[x][y] = fmaf(kt[x], kk[y], acc[x][y]);
            }
#pragma unroll
            for (int x = 0; x < 4; ++x)
#pragma unroll
                for (int y = 0; y < 4; ++y) {
                    const int t = ty + 16 * x, s = tx + 16 * y;
                    if (t > s) at[t * kAl + s] = bt[t] * expf(gc[t] - gc[s]) * acc[x][y];
                }
        }
        __syncthreads();

        // T = (I + A)⁻¹ by forward substitution: T[t][s] = -(A[t][s] + sum_{s<m<t} A[t][m] T[m][s]).
        {
            const int s = tid >> 2, part_of = tid & 3;
            const int m_first = s + 1 + ((part_of - (s + 1)) & 3);  // first m > s with m % 4 == part_of
            for (int t = 1; t < L; ++t) {
                float part = 0.0f;
                for (int m = m_first; m < t; m += 4) part = fmaf(at[t * kAl + m], at[s * kAl + m], part);
                part += __shfl_xor_sync(0xffffffffu, part, 1);
                part += __shfl_xor_sync(0xffffffffu, part, 2);
                if (t > s && (t & 3) == part_of) at[s * kAl + t] = -(at[t * kAl + s] + part);
            }
        }
        __syncthreads();

        // V <- beta (V - G K S0).
        {
            float acc[4] = {};
            for (int i = 0; i < DK; ++i) {
                const float sv = ss[i * kBV + tx];
#pragma unroll
                for (int x = 0; x < 4; ++x) acc[x] = fmaf(ks[(ty + 16 * x) * kKl + i], sv, acc[x]);
            }
#pragma unroll
            for (int x = 0; x < 4; ++x) {
                const int s = ty + 16 * x;
                us[s * kBV + tx] = bt[s] * (us[s * kBV + tx] - expf(gc[s]) * acc[x]);
            }
        }
        __syncthreads();

        // U = T V.
        {
            float acc[4];
#pragma unroll
            for (int x = 0; x < 4; ++x) {
                const int t = ty + 16 * x;
                float sum = us[t * kBV + tx];
                for (int s = 0; s < t; ++s) sum = fmaf(at[s * kAl + t], us[s * kBV + tx], sum);
                acc[x] = sum;
            }
            __syncthreads();
#pragma unroll
            for (int x = 0; x < 4; ++x) us[(ty + 16 * x) * kBV + tx] = acc[x];
        }
        __syncthreads();

        // P = Q Kᵀ ∘ G_t/G_s on and below the diagonal (over A; T is no longer needed).
        {
            float acc[4][4] = {};
            for (int i = 0; i < DK; ++i) {
                float qt[4], kk[4];
#pragma unroll
                for (int x = 0; x < 4; ++x) {
                    qt[x] = qs[(ty + 16 * x) * kKl + i];
                    kk[x] = ks[(tx + 16 * x) * kKl + i];
                }
#pragma unroll
                for (int x = 0; x < 4; ++x)
#pragma unroll
                    for (int y = 0; y < 4; ++y) acc[x][y] = fmaf(qt[x], kk[y], acc[x][y]);
            }
#pragma unroll
            for (int x = 0; x < 4; ++x)
#pragma unroll
                for (int y = 0; y < 4; ++y) {
                    const int t = ty + 16 * x, s = tx + 16 * y;
                    if (s <= t) at[t * kAl + s] = expf(gc[t] - gc[s]) * acc[x][y];
                }
        }
        __syncthreads();

        // O = scale (G Q S0 + P U).
#pragma unroll
        for (int x = 0; x < 4; ++x) {
            const int t = ty + 16 * x;
            float qs0 = 0.0f, pu = 0.0f;
            for (int i = 0; i < DK; ++i) qs0 = fmaf(qs[t * kKl + i], ss[i * kBV + tx], qs0);
            for (int s = 0; s <= t; ++s) pu = fmaf(at[t * kAl + s], us[s * kBV + tx], pu);
            if (t < L) a.o[(r0 + t) * a.o_ld + vc + tx] = a.scale * (expf(gc[t]) * qs0 + pu);
        }
        __syncthreads();

        // S = G_L S0 + Kᵀ diag(G_L / G_s) U.
        {
            constexpr int kPer = DK / 16;
            const float g_all = expf(gc[kC - 1]);
            float acc[kPer];
#pragma unroll
            for (int c = 0; c < kPer; ++c) acc[c] = ss[(ty + 16 * c) * kBV + tx] * g_all;
            for (int s = 0; s < L; ++s) {
                const float u = us[s * kBV + tx] * dec[s];
#pragma unroll
                for (int c = 0; c < kPer; ++c) acc[c] = fmaf(ks[s * kKl + ty + 16 * c], u, acc[c]);
            }
#pragma unroll
            for (int c = 0; c < kPer; ++c) ss[(ty + 16 * c) * kBV + tx] = acc[c];
        }
    }
    __syncthreads();
    for (int idx = tid; idx < DK * kBV; idx += kChunkThreads)
        S[int64_t(idx / kBV) * a.dv + idx % kBV] = ss[idx];
}

template <int DK>
void launch_recurrent(const GdnArgs& a, const KeyMap& km, const SeqList& list, int n_v, cudaStream_t stream) {
    const dim3 grid(unsigned(a.dv / kRecCols), unsigned(n_v), unsigned(list.n));
    recurrent_kernel<DK><<<grid, kRecWarps * 32, 0, stream>>>(a, km, list);
    NIWA_CUDA_LAUNCHED("gated_delta_rule (recurrent)");
}

template <int DK>
void launch_chunked(const GdnArgs& a, const KeyMap& km, const SeqList& list, int n_v, cudaStream_t stream) {
    constexpr size_t kSmem = chunk_smem_bytes<DK>();
    NIWA_CUDA_CHECK(
        cudaFuncSetAttribute(chunked_kernel<DK>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kSmem)));
    const dim3 grid(unsigned(a.dv / kBV), unsigned(n_v), unsigned(list.n));
    chunked_kernel<DK><<<grid, kChunkThreads, kSmem, stream>>>(a, km, list);
    NIWA_CUDA_LAUNCHED("gated_delta_rule (chunked)");
}

// Launches `form` over the listed sequences, kMaxListSeqs at a time.
void launch_lists(const GdnArgs& a, const KeyMap& km, const std::vector<int32_t>& seqs, int dk, int n_v,
                  bool chunked, cudaStream_t stream) {
    for (size_t first = 0; first < seqs.size(); first += kMaxListSeqs) {
        SeqList list;
        list.n = int(std::min(seqs.size() - first, size_t(kMaxListSeqs)));
        std::copy_n(seqs.begin() + int64_t(first), list.n, list.idx);
        if (chunked)
            dk == 64 ? launch_chunked<64>(a, km, list, n_v, stream)
                     : launch_chunked<128>(a, km, list, n_v, stream);
        else
            dk == 64 ? launch_recurrent<64>(a, km, list, n_v, stream)
                     : launch_recurrent<128>(a, km, list, n_v, stream);
    }
}

}  // namespace

void CudaOps::gated_delta_rule(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& g,
                               const Tensor& beta, const int32_t* key_of_v, int dk, int dv, float scale,
                               const GdnState& st, const StepInfo& step, GdnMode mode, const Tensor& o) {
    const char* op = "gated_delta_rule";
    check_gated_delta_rule("cuda", q, k, v, g, beta, key_of_v, dk, dv, o);
    require(dk == 64 || dk == 128, op,
            "key head dim " + std::to_string(dk) + "; the CUDA kernels take 64 or 128");
    require(dv > 0 && dv % kRecCols == 0, op,
            "value head dim " + std::to_string(dv) + "; the CUDA kernels take multiples of " +
                std::to_string(kRecCols));
    const int64_t n_v = v.cols / dv;
    require(n_v <= kMaxValueHeads, op,
            std::to_string(n_v) + " value heads; at most " + std::to_string(kMaxValueHeads));
    KeyMap km;
    for (int64_t h = 0; h < n_v; ++h) km.key[h] = int16_t(key_of_v[h]);
    require(step.n_seqs == 0 || step.host_seqs != nullptr, op, "StepInfo::host_seqs is not set");
    thread_local std::vector<int32_t> recurrent, chunked;
    recurrent.clear();
    chunked.clear();
    for (int s = 0; s < step.n_seqs; ++s) {
        const SeqInfo& si = step.host_seqs[s];
        require(si.state_slot >= 0 && si.state_slot < st.n_slots, op,
                "sequence " + std::to_string(s) + " state slot outside " + std::to_string(st.n_slots));
        require(si.q_start >= 0 && si.n_q >= 0 && si.q_start + int64_t(si.n_q) <= v.rows, op,
                "sequence " + std::to_string(s) + " rows outside the step's " + std::to_string(v.rows));
        if (si.n_q == 0) continue;
        const bool chunk = mode == GdnMode::Chunked || (mode == GdnMode::Auto && si.n_q > kAutoRecurrentMaxQ);
        (chunk ? chunked : recurrent).push_back(s);
    }
    const GdnArgs a{q.as<float>(),
                    k.as<float>(),
                    v.as<float>(),
                    g.as<float>(),
                    beta.as<float>(),
                    o.as<float>(),
                    q.ld,
                    k.ld,
                    v.ld,
                    g.ld,
                    beta.ld,
                    o.ld,
                    dv,
                    int(n_v),
                    scale,
                    st.ssm,
                    step.seqs};
    launch_lists(a, km, recurrent, dk, int(n_v), false, stream_);
    launch_lists(a, km, chunked, dk, int(n_v), true, stream_);
}

}  // namespace niwa::kernels::cuda
