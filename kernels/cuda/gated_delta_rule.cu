// The gated delta rule in fp32, in the CPU oracle's two forms. Recurrent: one block per
// (sequence, value head, 32 state columns) holds its dk x 32 slice of S in registers for the
// whole step (columns of S evolve independently), read once and written once. Chunked: the
// WY/UT form in chunks of 64 tokens, in two kernels: prep does every chunk's state-free part
// at once, walk carries S through the chunks in order (see "chunked" below). Auto: recurrent
// for short runs.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cuda/activations.cuh"
#include "kernels/cuda/cuda_ops.h"
#include "kernels/cuda/mma.cuh"
#include "kernels/cuda/pdl.cuh"

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
    // gated_delta_rule_raw's recurrent kernel: q and k not yet normalised, g and beta the raw
    // alpha and beta, turned into gates with these (gdn_gates).
    const float *gate_a = nullptr, *dt_bias = nullptr;
    float l2_eps = 0.0f;
    bool settled = false;  // CudaOps::reads_early: the recurrent kernel loads the state early
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

// GDN's alpha and beta made in the recurrent kernel (GdnRaw::ab, at most kAbMaxTokens tokens): the
// head's two bf16 rows of the stacked weight (alpha's row h, beta's n_v + h), loaded before the
// wait, times the token's row of x; thread i takes inputs 8 i .. 8 i + 7 of every kAbChunk.
struct AbArgs {
    const uint16_t* w = nullptr;  // bf16 rows `stride` elements apart
    int64_t stride = 0;
    const float* x = nullptr;
    int64_t ldx = 0;
    int in = 0;
};
constexpr int kAbChunk = kRecWarps * 32 * 8;
constexpr int kAbChunks = 5;  // inputs up to 5120 (the 27B's width)
constexpr int kAbMaxTokens = 4;

// The head's two rows into shared memory (cp.async, no registers held): thread i's 16 bytes of
// chunk c of row r at (r kAbChunks + c) kAbChunk / 8 + i, as ab_part reads them.
__device__ __forceinline__ void ab_weights(const AbArgs& ab, int h, int n_v, uint4* w) {
#pragma unroll
    for (int c = 0; c < kAbChunks; ++c) {
        const int k = c * kAbChunk + 8 * int(threadIdx.x);
#pragma unroll
        for (int r = 0; r < 2; ++r)
            cp_async16_or_zero(w + (r * kAbChunks + c) * (kAbChunk / 8) + threadIdx.x,
                               ab.w + (r * n_v + h) * ab.stride + (k < ab.in ? k : 0), k < ab.in);
    }
    cp_async_commit();
}

// This thread's share of the token's alpha and beta sums: its inputs of x's row `row`, in order
// (w: ab_weights', landed).
__device__ __forceinline__ float2 ab_part(const AbArgs& ab, int64_t row, const uint4* w) {
    float2 d = make_float2(0.0f, 0.0f);
    float xv[kAbChunks][8];
#pragma unroll
    for (int c = 0; c < kAbChunks; ++c) {
        const int k = c * kAbChunk + 8 * int(threadIdx.x);
        const float4* xp = reinterpret_cast<const float4*>(ab.x + row * ab.ldx + k);
        const float4 x0 = k < ab.in ? xp[0] : make_float4(0, 0, 0, 0), x1 = k < ab.in ? xp[1] : x0;
        xv[c][0] = x0.x, xv[c][1] = x0.y, xv[c][2] = x0.z, xv[c][3] = x0.w;
        xv[c][4] = x1.x, xv[c][5] = x1.y, xv[c][6] = x1.z, xv[c][7] = x1.w;
    }
#pragma unroll
    for (int c = 0; c < kAbChunks; ++c) {
        const uint4 a4 = w[c * (kAbChunk / 8) + threadIdx.x],
                    b4 = w[(kAbChunks + c) * (kAbChunk / 8) + threadIdx.x];
        const uint32_t wa[4] = {a4.x, a4.y, a4.z, a4.w}, wb[4] = {b4.x, b4.y, b4.z, b4.w};
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            d.x = fmaf(__uint_as_float(wa[j] << 16), xv[c][2 * j], d.x);
            d.x = fmaf(__uint_as_float(wa[j] & 0xFFFF0000u), xv[c][2 * j + 1], d.x);
            d.y = fmaf(__uint_as_float(wb[j] << 16), xv[c][2 * j], d.y);
            d.y = fmaf(__uint_as_float(wb[j] & 0xFFFF0000u), xv[c][2 * j + 1], d.y);
        }
    }
    return d;
}

// Raw: the token's k and q heads L2-normalised (a thread an element, the sums of squares in
// fp32 as the l2norm kernel), and its gates computed, as gdn_gates and l2norm would first; with
// AB, from alpha and beta it sums itself (ab_part, the block's parts summed with the squares).
template <int DK, bool AB>
__device__ __forceinline__ void load_raw_token(const GdnArgs& a, int64_t row, int64_t kc, int h,
                                               const AbArgs& ab, const uint4* abw, float (&kq)[2][DK],
                                               float4 (&ss)[kRecWarps], float& decay, float& b) {
    static_assert(DK <= kRecWarps * 32, "a thread an element of the head");
    const int i = threadIdx.x, lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const float kv = i < DK ? a.k[row * a.k_ld + kc + i] : 0.0f;
    const float qv = i < DK ? a.q[row * a.q_ld + kc + i] : 0.0f;
    float alpha = 0.0f, beta = 0.0f;
    float4 s = make_float4(kv * kv, qv * qv, 0.0f, 0.0f);
    if constexpr (AB) {
        const float2 d = ab_part(ab, row, abw);
        s.z = d.x;
        s.w = d.y;
    } else {
        alpha = a.g[row * a.g_ld + h];
        beta = a.beta[row * a.beta_ld + h];
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        s.x += __shfl_xor_sync(0xffffffffu, s.x, o);
        s.y += __shfl_xor_sync(0xffffffffu, s.y, o);
        if constexpr (AB) {
            s.z += __shfl_xor_sync(0xffffffffu, s.z, o);
            s.w += __shfl_xor_sync(0xffffffffu, s.w, o);
        }
    }
    if (lane == 0) ss[warp] = s;
    if constexpr (!AB) {
        decay = expf(gdn_log_decay(alpha, a.gate_a[h], a.dt_bias[h]));
        b = sigmoid_value(beta);
    }
    __syncthreads();
    float4 t = ss[0];
#pragma unroll
    for (int w = 1; w < kRecWarps; ++w) t.x += ss[w].x, t.y += ss[w].y, t.z += ss[w].z, t.w += ss[w].w;
    if constexpr (AB) {
        decay = expf(gdn_log_decay(t.z, a.gate_a[h], a.dt_bias[h]));
        b = sigmoid_value(t.w);
    }
    if (i < DK) {
        kq[0][i] = kv * (1.0f / sqrtf(t.x + a.l2_eps));
        kq[1][i] = qv * (1.0f / sqrtf(t.y + a.l2_eps));
    }
}

// one_wave: the grid is resident at once, so the kernel after it may be scheduled from the start
// (it streams its weights meanwhile: GDN's output projection, pdl.cuh).
// AB (with Raw): alpha and beta from ab (AbArgs), its weights copied to shared memory before the
// wait.
template <int DK, bool Raw, bool AB>
__global__ void __launch_bounds__(kRecWarps * 32)
    recurrent_kernel(GdnArgs a, KeyMap km, SeqList list, bool one_wave, AbArgs ab) {
    static_assert(Raw || !AB, "alpha and beta are made only in the raw form");
    constexpr int kRows = DK / kRecWarps;  // rows of S a thread holds, in its column
    __shared__ float kq[2][DK];
    __shared__ float red[2][kRecWarps][32];
    __shared__ float4 ss[kRecWarps];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int h = blockIdx.y, j = blockIdx.x * kRecCols + lane;
    if (one_wave) pdl_release();
    __shared__ uint4 abw[AB ? 2 * kAbChunks * kAbChunk / 8 : 1];
    if constexpr (AB) ab_weights(ab, h, a.n_v, abw);
    // Launched to overlap the kernel before it: its launch is hidden (pdl.cuh). In a settled
    // step (StepInfo::settled) the sequence's state, which only this kernel writes, is loaded
    // before the wait, while the kernel before (the qkv+z matmul's tail) still runs.
    if (!a.settled) pdl_wait();
    const SeqInfo si = a.seqs[list.idx[blockIdx.z]];
    const int64_t kc = int64_t(km.key[h]) * DK, vc = int64_t(h) * a.dv + j;
    float* S = a.ssm + (int64_t(si.state_slot) * a.n_v + h) * DK * a.dv + j;
    float s[kRows];
    if (si.n_q > 0)
#pragma unroll
        for (int r = 0; r < kRows; ++r) s[r] = S[int64_t(warp * kRows + r) * a.dv];
    if (a.settled) pdl_wait();
    if constexpr (AB) {
        cp_async_wait<0>();
        __syncthreads();
    }
    if (si.n_q == 0) return;

    for (int t = 0; t < si.n_q; ++t) {
        const int64_t row = si.q_start + t;
        const float vj = a.v[row * a.v_ld + vc];
        float decay, b;
        if constexpr (Raw) {
            load_raw_token<DK, AB>(a, row, kc, h, ab, abw, kq, ss, decay, b);
        } else {
            for (int i = threadIdx.x; i < DK; i += kRecWarps * 32) {
                kq[0][i] = a.k[row * a.k_ld + kc + i];
                kq[1][i] = a.q[row * a.q_ld + kc + i];
            }
            decay = expf(a.g[row * a.g_ld + h]);
            b = a.beta[row * a.beta_ld + h];
        }
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
//
// The oracle's chunk() split where the state enters. Per chunk of L <= 64 tokens from state S0
// (gc: in-chunk cumulative log decay, G_t = exp(gc_t); A[t][s] = beta_t G_t/G_s k_t·k_s for
// s < t; T = (I + A)⁻¹):
//   W = T (beta G K),  U = T (beta V)                         state-free: prep
//   P = scale (Q Kᵀ ∘ G_t/G_s, s <= t)                        state-free: prep
//   V' = U - W S0;  O = scale G Q S0 + P V';  S = G_L S0 + Kᵀ diag(G_L/G_s) V'    walk
// prep runs one block per (chunk, value head), all chunks at once, into the workspace (83 KB a
// chunk and value head at dk = 128, 1.3 KB a token); walk runs one block per (sequence, value
// head, 16 state columns) through the chunks in order, 384 blocks for 27B's 48 heads (3 an SM
// on an H200). All fp32 on CUDA cores, as the oracle's tolerance needs. Long steps go in
// windows of chunks so the workspace stays under kWindowBytes (64 MiB: 1,024 tokens of 27B).

constexpr int kC = 64;  // tokens a chunk
constexpr int kPrepThreads = 256;
constexpr int kWalkThreads = 128;
constexpr int kBV = 16;     // state columns a walk block
constexpr int kStages = 3;  // walk's ring of operand slices
constexpr int kMaxRuns = 128;
constexpr size_t kWindowBytes = size_t(64) << 20;

// One (chunk, value head) in the workspace, in floats: W [kC][D], U [kC][D], P [kC][kC], then
// G_L/G_t (0 past L), scale G_t and G_L.
template <int D>
struct Record {
    static constexpr int64_t kW = 0, kU = int64_t(kC) * D, kP = 2 * int64_t(kC) * D, kDecay = kP + kC * kC,
                             kGq = kDecay + kC, kGl = kGq + kC, kFloats = kDecay + 4 * kC;
};

// Chunks c0 .. c0 + n - 1 of sequence `seq` (its index in StepInfo::seqs), in workspace
// records first .. first + n - 1.
struct ChunkRun {
    int32_t seq, c0, n, first;
};

struct Window {
    int n_runs = 0, n_chunks = 0;
    ChunkRun run[kMaxRuns];
};

__device__ __forceinline__ float4 ld4(const float* p) {
    return *reinterpret_cast<const float4*>(p);
}

__device__ __forceinline__ void st4(float* p, float4 v) {
    *reinterpret_cast<float4*>(p) = v;
}

__device__ __forceinline__ float at4(const float4& v, int e) {
    return e == 0 ? v.x : e == 1 ? v.y : e == 2 ? v.z : v.w;
}

// acc[x] += a * b[x]
__device__ __forceinline__ void fma4(float (&acc)[4], float a, const float4& b) {
    acc[0] = fmaf(a, b.x, acc[0]);
    acc[1] = fmaf(a, b.y, acc[1]);
    acc[2] = fmaf(a, b.z, acc[2]);
    acc[3] = fmaf(a, b.w, acc[3]);
}

__device__ __forceinline__ float dot4(const float4& a, const float4& b, float acc) {
    return fmaf(a.w, b.w, fmaf(a.z, b.z, fmaf(a.y, b.y, fmaf(a.x, b.x, acc))));
}

// Four floats global -> shared: one 16-byte copy when `wide` (16-byte-aligned rows), else four
// 4-byte copies; zeros, nothing read, when !valid (rows past a chunk's end must be finite).
__device__ __forceinline__ void cp_async_f4(float* smem, const float* global, bool wide, bool valid) {
    if (wide) return cp_async16_or_zero(smem, global, valid);
#pragma unroll
    for (int e = 0; e < 4; ++e) cp_async4_or_zero(smem + e, global + e, valid);
}

constexpr int kInvB = 16;  // T's diagonal blocks

// T = (I + A)⁻¹ is stored transposed above the diagonal of `at`, at[s][t] = T[t][s] for t > s,
// with A below it. This solves the diagonal block [t_first, t_end) by forward substitution,
// T[t][s] = -(A[t][s] + sum_{s<m<t} A[t][m] T[m][s]): four lanes own column s, each the rows
// t ≡ lane (mod 4) — every T[m][s] a lane reads it wrote itself, so no barrier is needed.
template <int kTl>
__device__ void invert_substitute(float* at, int t_first, int t_end, int s, int part_of) {
    const int m_first = s + 1 + ((part_of - (s + 1)) & 3);  // first m > s with m % 4 == part_of
    for (int t = t_first + 1; t < t_end; ++t) {
        float part = 0.0f;
#pragma unroll 4
        for (int m = m_first; m < t; m += 4) part = fmaf(at[t * kTl + m], at[s * kTl + m], part);
        part += __shfl_xor_sync(0xffffffffu, part, 1);
        part += __shfl_xor_sync(0xffffffffu, part, 2);
        if (t > s && (t & 3) == part_of) at[s * kTl + t] = -(at[t * kTl + s] + part);
    }
}

// All of T in 16 x 16 blocks (a 63-step substitution is one long latency chain): the four
// diagonal blocks by substitution at once (a column's four lanes each), then the blocks below
// them a block diagonal at a time, T_ij = -T_ii sum_{j<=k<i} A_ik T_kj, through xs [3][16][16].
template <int kTl>
__device__ void invert_blocked(float* at, float* xs, int tid) {
    constexpr int B = kInvB;
    {
        const int s = tid >> 2, blk = s / B;
        invert_substitute<kTl>(at, B * blk, B * blk + B, s, tid & 3);
    }
    __syncthreads();
    for (int d = 1; d < kC / B; ++d) {
        const int n = (kC / B - d) * B * B;  // entries of this diagonal's blocks
        // X_ij[t][s] = A[t][s] + sum_{s<m<16i} A[t][m] T[m][s], block (i, j) = (j + d, j).
        for (int e = tid; e < n; e += kPrepThreads) {
            const int j = e / (B * B), t = B * (j + d) + (e / B) % B, s = B * j + e % B;
            float x = at[t * kTl + s];
#pragma unroll 4
            for (int m = s + 1; m < B * (j + d); ++m) x = fmaf(at[t * kTl + m], at[s * kTl + m], x);
            xs[e] = x;
        }
        __syncthreads();
        // T[t][s] = -(X[t][s] + sum_{16i<=m<t} T[t][m] X[m][s]).
        for (int e = tid; e < n; e += kPrepThreads) {
            const int j = e / (B * B), tl = (e / B) % B, t = B * (j + d) + tl, s = B * j + e % B;
            float x = xs[e];
#pragma unroll 4
            for (int ml = 0; ml < tl; ++ml)
                x = fmaf(at[(B * (j + d) + ml) * kTl + t], xs[j * B * B + ml * B + e % B], x);
            at[s * kTl + t] = -x;
        }
        __syncthreads();
    }
}

template <int D>
struct PrepLayout {
    static constexpr int kLd = D + 4;   // padded rows: a warp's float4 reads of 8 rows hit distinct banks
    static constexpr int kTl = kC + 4;  // A / Tᵀ rows, float4-aligned
    static constexpr size_t kBytes = sizeof(float) * (2 * size_t(kC) * kLd + size_t(kC) * kTl +
                                                      3 * size_t(kC) + 3 * size_t(kInvB) * kInvB);
};

// One block per (chunk of the window, value head). Shared memory: K (then beta G K), Q (then
// beta V), A below the diagonal with Tᵀ above it, and the gates.
template <int D>
__global__ void __launch_bounds__(kPrepThreads, 2)
    chunk_prep_kernel(GdnArgs a, KeyMap km, Window w, float* work, bool wide) {
    constexpr int kLd = PrepLayout<D>::kLd, kTl = PrepLayout<D>::kTl;
    extern __shared__ float4 smem4[];
    float* ks = reinterpret_cast<float*>(smem4);
    float* qv = ks + kC * kLd;
    float* at = qv + kC * kLd;
    float* gc = at + kC * kTl;
    float* bt = gc + kC;
    float* kb = bt + kC;  // beta_t G_t
    float* xs = kb + kC;

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int rec_i = blockIdx.x, h = blockIdx.y;
    int ri = 0;
    while (rec_i >= w.run[ri].first + w.run[ri].n) ++ri;
    const ChunkRun run = w.run[ri];
    const SeqInfo si = a.seqs[run.seq];
    const int c = run.c0 + rec_i - run.first;
    const int L = min(kC, si.n_q - c * kC);
    const int64_t r0 = si.q_start + int64_t(c) * kC;
    const int64_t kc = int64_t(km.key[h]) * D;
    const float* kg = a.k + r0 * a.k_ld + kc;
    const float* qg = a.q + r0 * a.q_ld + kc;
    const float* vg = a.v + r0 * a.v_ld + int64_t(h) * D;
    float* rec = work + (int64_t(rec_i) * a.n_v + h) * Record<D>::kFloats;

    for (int idx = tid; idx < kC * D / 4; idx += kPrepThreads) {
        const int t = idx / (D / 4), f = 4 * (idx % (D / 4));
        const int64_t row = t < L ? t : 0;
        cp_async_f4(ks + t * kLd + f, kg + row * a.k_ld + f, wide, t < L);
        cp_async_f4(qv + t * kLd + f, qg + row * a.q_ld + f, wide, t < L);
    }
    cp_async_commit();
    if (tid < kC) {
        gc[tid] = tid < L ? a.g[(r0 + tid) * a.g_ld + h] : 0.0f;  // rows past L: no decay
        bt[tid] = tid < L ? a.beta[(r0 + tid) * a.beta_ld + h] : 0.0f;
    }
    __syncthreads();
    if (warp == 0) {  // inclusive scan of g over the chunk, then the gates walk needs
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
        kb[lane] = bt[lane] * expf(x0);
        kb[lane + 32] = bt[lane + 32] * expf(x1);
        rec[Record<D>::kDecay + lane] = lane < L ? expf(last - x0) : 0.0f;
        rec[Record<D>::kDecay + lane + 32] = lane + 32 < L ? expf(last - x1) : 0.0f;
        rec[Record<D>::kGq + lane] = lane < L ? a.scale * expf(x0) : 0.0f;
        rec[Record<D>::kGq + lane + 32] = lane + 32 < L ? a.scale * expf(x1) : 0.0f;
        if (lane == 0) rec[Record<D>::kGl] = expf(last);
    }
    cp_async_wait<0>();
    __syncthreads();

    // K Kᵀ and Q Kᵀ together: thread (ty, tx) takes rows ty + 16x, columns tx + 16y, y <= x
    // (the 16 x 16 blocks on and below the diagonal: A and P are 0 above it).
    {
        const int tx = tid & 15, ty = tid >> 4;
        float kk[4][4] = {}, qk[4][4] = {};
        for (int i = 0; i < D; i += 4) {
            float4 kt[4], qt[4], ksv[4];
#pragma unroll
            for (int x = 0; x < 4; ++x) {
                kt[x] = ld4(ks + (ty + 16 * x) * kLd + i);
                qt[x] = ld4(qv + (ty + 16 * x) * kLd + i);
                ksv[x] = ld4(ks + (tx + 16 * x) * kLd + i);
            }
#pragma unroll
            for (int x = 0; x < 4; ++x)
#pragma unroll
                for (int y = 0; y <= x; ++y) {
                    kk[x][y] = dot4(kt[x], ksv[y], kk[x][y]);
                    qk[x][y] = dot4(qt[x], ksv[y], qk[x][y]);
                }
        }
        float* P = rec + Record<D>::kP;
#pragma unroll
        for (int x = 0; x < 4; ++x)
#pragma unroll
            for (int y = 0; y < 4; ++y) {
                const int t = ty + 16 * x, s = tx + 16 * y;
                if (s < t) at[t * kTl + s] = bt[t] * expf(gc[t] - gc[s]) * kk[x][y];
                P[t * kC + s] = s <= t ? a.scale * expf(gc[t] - gc[s]) * qk[x][y] : 0.0f;
            }
    }
    __syncthreads();

    // V into Q's place while K becomes beta G K and T = (I + A)⁻¹ is solved (rows past L have
    // A = 0 and come out 0).
    for (int idx = tid; idx < kC * D / 4; idx += kPrepThreads) {
        const int t = idx / (D / 4), f = 4 * (idx % (D / 4));
        cp_async_f4(qv + t * kLd + f, vg + (t < L ? t : 0) * a.v_ld + f, wide, t < L);
    }
    cp_async_commit();
    for (int idx = tid; idx < kC * D; idx += kPrepThreads) ks[(idx / D) * kLd + idx % D] *= kb[idx / D];
    invert_blocked<kTl>(at, xs, tid);
    cp_async_wait<0>();
    __syncthreads();
    // Tᵀ gets its unit diagonal and zeros where A was; V becomes beta V.
    for (int idx = tid; idx < kC * kC; idx += kPrepThreads) {
        const int s = idx / kC, t = idx % kC;
        if (t <= s) at[s * kTl + t] = t == s ? 1.0f : 0.0f;
    }
    for (int idx = tid; idx < kC * D; idx += kPrepThreads) qv[(idx / D) * kLd + idx % D] *= bt[idx / D];
    __syncthreads();

    // [W | U] = T [beta G K | beta V]: warp w takes rows 8w..8w+7 (T is lower triangular, so
    // s < 8w + 8), lane the columns 4 lane + 128 p of the 2D.
    {
        constexpr int kPasses = 2 * D / 128;
        const int t0 = 8 * warp;
        float acc[kPasses][8][4] = {};
        for (int s = 0; s < t0 + 8; ++s) {
            const float4 ta = ld4(at + s * kTl + t0), tb = ld4(at + s * kTl + t0 + 4);
            const float tv[8] = {ta.x, ta.y, ta.z, ta.w, tb.x, tb.y, tb.z, tb.w};
#pragma unroll
            for (int p = 0; p < kPasses; ++p) {
                const int col = 4 * lane + 128 * p;
                const float4 b = ld4(col < D ? ks + s * kLd + col : qv + s * kLd + col - D);
#pragma unroll
                for (int r = 0; r < 8; ++r) fma4(acc[p][r], tv[r], b);
            }
        }
#pragma unroll
        for (int p = 0; p < kPasses; ++p) {
            const int col = 4 * lane + 128 * p;
            float* dst = rec + (col < D ? Record<D>::kW + col : Record<D>::kU + col - D);
#pragma unroll
            for (int r = 0; r < 8; ++r)
                st4(dst + (t0 + r) * D, make_float4(acc[p][r][0], acc[p][r][1], acc[p][r][2], acc[p][r][3]));
        }
    }
}

template <int D>
struct WalkLayout {
    static constexpr int kMl = 32 + 4;  // [W; Q] slice rows: 32 of D, padded like prep's
    static constexpr int kPl = kC + 4;
    static constexpr int kStage = std::max(std::max(2 * kC * kMl, kC* kPl), 32 * D);
    static constexpr size_t kBytes =
        sizeof(float) * (size_t(kStages) * kStage + size_t(D) * kBV + 2 * size_t(kC) * kBV);
};

// One block per (run, value head, 16 state columns): its dk x 16 slice of S stays in shared
// memory; each chunk streams through a ring of slices (cp.async, two ahead): [W; Q] in
// 32-column pieces of D (V' = U - W S0 and Q S0), then P (O), then K in two halves of 32
// tokens (the new S). Thread (g, j0): rows g and g + 32 of W, Q, P, O, V'; state rows
// (D/32) g ..; columns j0 .. j0 + 3.
template <int D>
__global__ void __launch_bounds__(kWalkThreads, 3)
    chunk_walk_kernel(GdnArgs a, KeyMap km, Window w, const float* work, bool wide) {
    using Lay = WalkLayout<D>;
    using Rec = Record<D>;
    constexpr int kMl = Lay::kMl, kPl = Lay::kPl, kStage = Lay::kStage;
    constexpr int kPieces = D / 32, kPer = kPieces + 3, kRs = D / 32;
    extern __shared__ float4 smem4[];
    float* ring = reinterpret_cast<float*>(smem4);
    float* ss = ring + kStages * kStage;  // S [D][kBV]
    float* vp = ss + D * kBV;             // V' [kC][kBV]
    float* vd = vp + kC * kBV;            // V' G_L/G_s

    const int tid = threadIdx.x, warp = tid >> 5, g = tid >> 2, j0 = 4 * (tid & 3);
    const int jb = blockIdx.x * kBV, h = blockIdx.y;
    const ChunkRun run = w.run[blockIdx.z];
    const SeqInfo si = a.seqs[run.seq];
    const int64_t kc = int64_t(km.key[h]) * D, vc = int64_t(h) * D + jb;
    float* S = a.ssm + (int64_t(si.state_slot) * a.n_v + h) * D * D + jb;
    for (int idx = tid; idx < D * kBV / 4; idx += kWalkThreads) {
        const int i = idx / (kBV / 4), f = 4 * (idx % (kBV / 4));
        st4(ss + i * kBV + f, ld4(S + int64_t(i) * D + f));
    }

    const int n_slices = run.n * kPer;
    auto issue = [&](int n) {
        if (n >= n_slices) return;
        const int c = run.c0 + n / kPer, kind = n % kPer;
        const int L = min(kC, si.n_q - c * kC);
        const int64_t r0 = si.q_start + int64_t(c) * kC;
        const float* rec = work + (int64_t(run.first + n / kPer) * a.n_v + h) * Rec::kFloats;
        float* buf = ring + (n % kStages) * kStage;
        if (kind < kPieces) {
            const int i0 = 32 * kind;
            for (int idx = tid; idx < kC * 8; idx += kWalkThreads) {
                const int t = idx >> 3, f = 4 * (idx & 7);
                cp_async_f4(buf + t * kMl + f, rec + Rec::kW + t * D + i0 + f, true, true);
                cp_async_f4(buf + (kC + t) * kMl + f, a.q + (r0 + (t < L ? t : 0)) * a.q_ld + kc + i0 + f,
                            wide, t < L);
            }
        } else if (kind == kPieces) {
            for (int idx = tid; idx < kC * kC / 4; idx += kWalkThreads) {
                const int t = idx / (kC / 4), f = 4 * (idx % (kC / 4));
                cp_async_f4(buf + t * kPl + f, rec + Rec::kP + t * kC + f, true, true);
            }
        } else {
            const int t0 = 32 * (kind - kPieces - 1);
            for (int idx = tid; idx < 32 * D / 4; idx += kWalkThreads) {
                const int r = idx / (D / 4), f = 4 * (idx % (D / 4)), t = t0 + r;
                cp_async_f4(buf + r * D + f, a.k + (r0 + (t < L ? t : 0)) * a.k_ld + kc + f, wide, t < L);
            }
        }
    };
    issue(0);
    cp_async_commit();
    issue(1);
    cp_async_commit();

    float acc_w[2][4] = {}, acc_q[2][4] = {}, acc_s[kRs][4] = {};
    float4 u[2] = {};
    float dec[2] = {}, gq[2] = {}, g_l = 0.0f;
    int L = 0;
    int64_t r0 = 0;
    for (int n = 0; n < n_slices; ++n) {
        cp_async_wait<1>();
        __syncthreads();  // slice n is in; every thread is done with slice n - 1, whose stage n + 2 takes
        issue(n + 2);
        cp_async_commit();
        const int kind = n % kPer;
        const float* buf = ring + (n % kStages) * kStage;
        if (kind == 0) {  // a new chunk: its U and gates, read while the first slices compute
            const int c = run.c0 + n / kPer;
            L = min(kC, si.n_q - c * kC);
            r0 = si.q_start + int64_t(c) * kC;
            const float* rec = work + (int64_t(run.first + n / kPer) * a.n_v + h) * Rec::kFloats;
#pragma unroll
            for (int r = 0; r < 2; ++r) {
                const int t = g + 32 * r;
                u[r] = ld4(rec + Rec::kU + t * D + jb + j0);
                dec[r] = rec[Rec::kDecay + t];
                gq[r] = rec[Rec::kGq + t];
#pragma unroll
                for (int x = 0; x < 4; ++x) acc_w[r][x] = acc_q[r][x] = 0.0f;
            }
            g_l = rec[Rec::kGl];
        }
        if (kind < kPieces) {  // W S0 and Q S0 over 32 rows of S
            const float* sk = ss + 32 * kind * kBV;
            for (int i = 0; i < 32; i += 4) {
                const float4 w0 = ld4(buf + g * kMl + i), w1 = ld4(buf + (g + 32) * kMl + i);
                const float4 q0 = ld4(buf + (kC + g) * kMl + i), q1 = ld4(buf + (kC + g + 32) * kMl + i);
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const float4 sv = ld4(sk + (i + e) * kBV + j0);
                    fma4(acc_w[0], at4(w0, e), sv);
                    fma4(acc_w[1], at4(w1, e), sv);
                    fma4(acc_q[0], at4(q0, e), sv);
                    fma4(acc_q[1], at4(q1, e), sv);
                }
            }
            if (kind == kPieces - 1) {  // V' = U - W S0 (rows past L: 0 - 0)
#pragma unroll
                for (int r = 0; r < 2; ++r) {
                    const int t = g + 32 * r;
                    const float4 v = make_float4(u[r].x - acc_w[r][0], u[r].y - acc_w[r][1],
                                                 u[r].z - acc_w[r][2], u[r].w - acc_w[r][3]);
                    st4(vp + t * kBV + j0, v);
                    st4(vd + t * kBV + j0,
                        make_float4(v.x * dec[r], v.y * dec[r], v.z * dec[r], v.w * dec[r]));
                }
            }
        } else if (kind == kPieces) {  // O = scale G Q S0 + P V' (P is 0 above the diagonal)
            float o[2][4];
#pragma unroll
            for (int r = 0; r < 2; ++r)
#pragma unroll
                for (int x = 0; x < 4; ++x) o[r][x] = gq[r] * acc_q[r][x];
            const int s_end = 8 * warp + 40;  // past this warp's last row, g + 32
            for (int s = 0; s < s_end; s += 4) {
                const float4 p0 = ld4(buf + g * kPl + s), p1 = ld4(buf + (g + 32) * kPl + s);
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const float4 v = ld4(vp + (s + e) * kBV + j0);
                    fma4(o[0], at4(p0, e), v);
                    fma4(o[1], at4(p1, e), v);
                }
            }
#pragma unroll
            for (int r = 0; r < 2; ++r) {
                const int t = g + 32 * r;
                if (t >= L) continue;
                float* dst = a.o + (r0 + t) * a.o_ld + vc + j0;
#pragma unroll
                for (int x = 0; x < 4; ++x) dst[x] = o[r][x];
            }
        } else {  // S = G_L S0 + Kᵀ (V' G_L/G_s), over 32 tokens a slice
            const int half = kind - kPieces - 1;
            if (half == 0)
#pragma unroll
                for (int e = 0; e < kRs; ++e)
#pragma unroll
                    for (int x = 0; x < 4; ++x) acc_s[e][x] = g_l * ss[(kRs * g + e) * kBV + j0 + x];
            for (int r = 0; r < 32; ++r) {
                const float4 v = ld4(vd + (32 * half + r) * kBV + j0);
                float kv[kRs];
                if constexpr (kRs == 4) {
                    const float4 k4 = ld4(buf + r * D + kRs * g);
                    kv[0] = k4.x, kv[1] = k4.y, kv[2] = k4.z, kv[3] = k4.w;
                } else {
                    const float2 k2 = *reinterpret_cast<const float2*>(buf + r * D + kRs * g);
                    kv[0] = k2.x, kv[1] = k2.y;
                }
#pragma unroll
                for (int e = 0; e < kRs; ++e) fma4(acc_s[e], kv[e], v);
            }
            if (half == 1)  // every thread has read S0 (the barriers since W S0), and only its own part here
#pragma unroll
                for (int e = 0; e < kRs; ++e)
                    st4(ss + (kRs * g + e) * kBV + j0,
                        make_float4(acc_s[e][0], acc_s[e][1], acc_s[e][2], acc_s[e][3]));
        }
    }
    cp_async_wait<0>();
#pragma unroll
    for (int e = 0; e < kRs; ++e) st4(S + int64_t(kRs * g + e) * D + j0, ld4(ss + (kRs * g + e) * kBV + j0));
}

// Blocks of recurrent_kernel<DK, Raw, AB> resident at once on ops' device.
template <int DK, bool Raw, bool AB>
int64_t resident_blocks(const CudaOps& ops) {
    static std::atomic<int> per_sm[64] = {};
    const int n = blocks_per_sm(ops, recurrent_kernel<DK, Raw, AB>, kRecWarps * 32, 0, per_sm);
    return int64_t(std::max(n, 1)) * ops.props().multiProcessorCount;
}

template <int DK, bool Raw, bool AB>
void launch_recurrent(const CudaOps& ops, const GdnArgs& a, const KeyMap& km, const SeqList& list, int n_v,
                      const AbArgs& ab) {
    const dim3 grid(unsigned(a.dv / kRecCols), unsigned(n_v), unsigned(list.n));
    const dim3 block(kRecWarps * 32);
    const bool one_wave = int64_t(grid.x) * grid.y * grid.z <= resident_blocks<DK, Raw, AB>(ops);
    NIWA_CUDA_CHECK(launch_overlapping(ops.overlap_launches(), recurrent_kernel<DK, Raw, AB>, grid, block, 0,
                                       ops.stream(), a, km, list, one_wave, ab));
}

// The listed sequences, recurrent, kMaxListSeqs at a time (with ab.w set: alpha and beta made in
// the kernel, the raw form).
void launch_recurrent_lists(const CudaOps& ops, const GdnArgs& a, const KeyMap& km,
                            const std::vector<int32_t>& seqs, int dk, int n_v, const AbArgs& ab) {
    for (size_t first = 0; first < seqs.size(); first += kMaxListSeqs) {
        SeqList list;
        list.n = int(std::min(seqs.size() - first, size_t(kMaxListSeqs)));
        std::copy_n(seqs.begin() + int64_t(first), list.n, list.idx);
        auto launch = [&](auto dk_tag) {
            constexpr int DK = decltype(dk_tag)::value;
            if (ab.w) return launch_recurrent<DK, true, true>(ops, a, km, list, n_v, ab);
            if (a.gate_a) return launch_recurrent<DK, true, false>(ops, a, km, list, n_v, ab);
            launch_recurrent<DK, false, false>(ops, a, km, list, n_v, ab);
        };
        dk == 64 ? launch(std::integral_constant<int, 64>{}) : launch(std::integral_constant<int, 128>{});
    }
}

// Whether mode takes the recurrent form for a sequence of n_q tokens.
bool recurrent_form(GdnMode mode, int n_q) {
    return mode == GdnMode::Recurrent || (mode == GdnMode::Auto && n_q <= kAutoRecurrentMaxQ);
}

// The listed sequences (host_seqs indices), chunked: windows of at most kWindowBytes of
// records (a sequence may span windows: walk leaves S where the next window's walk reads it).
template <int D>
void launch_chunked(CudaOps& ops, const GdnArgs& a, const KeyMap& km, const SeqInfo* host_seqs,
                    const std::vector<int32_t>& seqs, bool wide) {
    constexpr size_t kRecordBytes = sizeof(float) * size_t(Record<D>::kFloats);
    const int cap = int(std::max<size_t>(1, kWindowBytes / (kRecordBytes * size_t(a.n_v))));
    int64_t total = 0;
    for (int32_t s : seqs) total += (host_seqs[s].n_q + kC - 1) / kC;
    auto* work = static_cast<float*>(ops.workspace(
        CudaOps::Workspace::GatedDeltaRule, size_t(std::min<int64_t>(total, cap)) * a.n_v * kRecordBytes));
    constexpr size_t kPrepBytes = PrepLayout<D>::kBytes, kWalkBytes = WalkLayout<D>::kBytes;
    NIWA_CUDA_CHECK(cudaFuncSetAttribute(chunk_prep_kernel<D>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         int(kPrepBytes)));
    NIWA_CUDA_CHECK(cudaFuncSetAttribute(chunk_walk_kernel<D>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         int(kWalkBytes)));
    Window w;
    auto flush = [&] {
        if (w.n_runs == 0) return;
        chunk_prep_kernel<D>
            <<<dim3(unsigned(w.n_chunks), unsigned(a.n_v)), kPrepThreads, kPrepBytes, ops.stream()>>>(
                a, km, w, work, wide);
        NIWA_CUDA_LAUNCHED("gated_delta_rule (chunk prep)");
        chunk_walk_kernel<D><<<dim3(unsigned(D / kBV), unsigned(a.n_v), unsigned(w.n_runs)), kWalkThreads,
                               kWalkBytes, ops.stream()>>>(a, km, w, work, wide);
        NIWA_CUDA_LAUNCHED("gated_delta_rule (chunk walk)");
        w = Window{};
    };
    for (int32_t s : seqs) {
        const int n_c = (host_seqs[s].n_q + kC - 1) / kC;
        for (int c = 0; c < n_c;) {
            const int take = std::min(n_c - c, cap - w.n_chunks);
            w.run[w.n_runs++] = ChunkRun{s, c, take, w.n_chunks};
            w.n_chunks += take;
            c += take;
            if (w.n_chunks == cap || w.n_runs == kMaxRuns) flush();
        }
    }
    flush();
}

}  // namespace

void CudaOps::gated_delta_rule(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& g,
                               const Tensor& beta, const int32_t* key_of_v, int dk, int dv, float scale,
                               const GdnState& st, const StepInfo& step, GdnMode mode, const Tensor& o) {
    delta_rule(q, k, v, g, beta, nullptr, key_of_v, dk, dv, scale, st, step, mode, o);
}

namespace {

// Whether the recurrent kernel makes alpha and beta itself (AbArgs): at most kAbMaxTokens
// tokens (more, and its blocks read the weights and x once per head slice and token: the small
// matmul first is cheaper; made here up to 32 tokens, batch 8 lost 2.2 % and batch 24 3.2 % on
// an H100, docs/BENCHMARKS.md, forty-second pass), a bf16 weight of 2 n_v rows with 16-byte
// aligned rows of at most kAbChunks chunks, x's rows 16-byte aligned.
bool makes_ab(const GdnRaw& raw, const Tensor& v, int64_t n_v, bool fuse) {
    if (!raw.ab || !fuse) return false;
    const Weight& w = *raw.ab;
    const Tensor& x = raw.ab_x;
    auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
    return v.rows <= kAbMaxTokens && w.type == DType::BF16 && w.out == 2 * n_v && w.in == x.cols &&
           w.in % 8 == 0 && w.in <= int64_t(kAbChunks) * kAbChunk && aligned(w.data) &&
           w.row_stride % 16 == 0 && x.type == DType::F32 && x.rows == v.rows && aligned(x.data) &&
           x.ld % 4 == 0;
}

}  // namespace

bool CudaOps::gdn_ab_in_delta_rule(int64_t tokens) const {
    return !ab_first_ || (fuse_inputs_ && tokens <= kAbMaxTokens);
}

// Fused when every sequence takes the recurrent form (decode): the recurrent kernel normalises
// q and k and computes the gates itself, three launches in one; with raw.ab at a few tokens it
// also makes alpha and beta (makes_ab), the small matmul's launch gone. Otherwise the
// composition.
void CudaOps::gated_delta_rule_raw(const Tensor& qk, const Tensor& v, const Tensor& alpha, const Tensor& beta,
                                   const GdnRaw& raw, const int32_t* key_of_v, int dk, int dv, float scale,
                                   const GdnState& st, const StepInfo& step, GdnMode mode, const Tensor& o) {
    bool fused = dk == 64 || dk == 128;
    for (int s = 0; fused && s < step.n_seqs && step.host_seqs; ++s)
        fused = recurrent_form(mode, step.host_seqs[s].n_q);
    if (!fused || qk.cols % (2 * int64_t(dk)) != 0 || !raw.a || !raw.dt_bias)
        return Ops::gated_delta_rule_raw(qk, v, alpha, beta, raw, key_of_v, dk, dv, scale, st, step, mode, o);
    GdnRaw r = raw;
    if (raw.ab) {
        const Tensor both = gate_inputs(alpha, beta);
        if (makes_ab(raw, v, dv > 0 ? v.cols / dv : 0, fuse_inputs_)) {
            check_matmul("cuda", *raw.ab, raw.ab_x, both);
        } else {
            matmul(*raw.ab, raw.ab_x, both);  // the small matmul first; the kernel reads alpha and beta
            r.ab = nullptr;
        }
    }
    const int64_t half = qk.cols / 2;
    delta_rule(qk.cols_view(0, half), qk.cols_view(half, half), v, alpha, beta, &r, key_of_v, dk, dv, scale,
               st, step, mode, o);
}

// gated_delta_rule, or with raw set its fused form (every sequence recurrent, raw q and k, raw
// alpha and beta for g and beta).
void CudaOps::delta_rule(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& g,
                         const Tensor& beta, const GdnRaw* raw, const int32_t* key_of_v, int dk, int dv,
                         float scale, const GdnState& st, const StepInfo& step, GdnMode mode,
                         const Tensor& o) {
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
        (recurrent_form(mode, si.n_q) ? recurrent : chunked).push_back(s);
    }
    require(chunked.empty() || !raw, op, "the fused raw form takes only recurrent sequences");
    require(chunked.empty() || dv == dk, op,
            "value head dim " + std::to_string(dv) + " with key head dim " + std::to_string(dk) +
                "; the chunked CUDA kernels take equal dims (recurrent mode takes any)");
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
                    step.seqs,
                    raw ? raw->a : nullptr,
                    raw ? raw->dt_bias : nullptr,
                    raw ? raw->l2_eps : 0.0f,
                    reads_early(step)};
    AbArgs ab;
    if (raw && raw->ab) {
        ab.w = static_cast<const uint16_t*>(raw->ab->data);
        ab.stride = int64_t(raw->ab->row_stride / sizeof(uint16_t));
        ab.x = raw->ab_x.as<const float>();
        ab.ldx = raw->ab_x.ld;
        ab.in = int(raw->ab->in);
    }
    launch_recurrent_lists(*this, a, km, recurrent, dk, int(n_v), ab);
    if (chunked.empty()) return;
    auto rows16 = [](const Tensor& t) {
        return reinterpret_cast<uintptr_t>(t.data) % 16 == 0 && t.ld % 4 == 0;
    };
    const bool wide = rows16(q) && rows16(k) && rows16(v);
    dk == 64 ? launch_chunked<64>(*this, a, km, step.host_seqs, chunked, wide)
             : launch_chunked<128>(*this, a, km, step.host_seqs, chunked, wide);
}

}  // namespace niwa::kernels::cuda
