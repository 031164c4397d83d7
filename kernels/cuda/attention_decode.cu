// Paged attention for decode rows (flash-decoding): one block per (query row, GQA group, split
// of the cached tokens). Each warp walks its tokens four at a time, reading a K and a V row once
// for all the group's query heads, with an fp32 online softmax per head; the block merges its
// warps and writes either the output (one split) or a partial that a combine pass merges.
// Precision::Mixed on a 16-bit pool takes the tensor-core kernel (decode_mma_kernel, below).
#include <algorithm>
#include <atomic>
#include <climits>
#include <type_traits>

#include "kernels/cuda/attention_kernels.h"
#include "kernels/cuda/pdl.cuh"

namespace niwa::kernels::cuda::attn {

namespace {

constexpr int kWarps = 4;
constexpr int kThreads = kWarps * 32;
constexpr int kTok = 4;  // tokens a warp loads at once: 8 rows of K/V in flight per warp

__device__ __forceinline__ int lane_id() {
    return int(threadIdx.x & 31);
}

// A lane's share of a D-wide row: kVpl values in chunks of kCh consecutive elements (one
// load of up to 16 bytes), chunks 32 * kCh apart so a warp reads whole lines.
template <typename T, int D>
struct Fragment {
    static constexpr int kVpl = D / 32;
    static constexpr int kMaxCh = 16 / int(sizeof(T));
    static constexpr int kCh = kVpl < kMaxCh ? kVpl : kMaxCh;
    __device__ static int elem(int lane, int i) { return (i / kCh) * (32 * kCh) + lane * kCh + i % kCh; }
    __device__ static void load(const T* row, int lane, float* out) {
#pragma unroll
        for (int c = 0; c < kVpl / kCh; ++c) load_f32<T, kCh>(row + c * 32 * kCh + lane * kCh, out + c * kCh);
    }
};

// The warp sums of four values, every lane getting all four: a transposed butterfly (each
// step halves the values a lane carries) in 6 shuffles, then 4 broadcasts.
__device__ __forceinline__ void warp_sum4(float (&s)[kTok]) {
    static_assert(kTok == 4, "the butterfly is written for four values");
    const bool hi16 = lane_id() & 16, hi8 = lane_id() & 8;
    const float t0 = (hi16 ? s[2] : s[0]) + __shfl_xor_sync(0xffffffffu, hi16 ? s[0] : s[2], 16);
    const float t1 = (hi16 ? s[3] : s[1]) + __shfl_xor_sync(0xffffffffu, hi16 ? s[1] : s[3], 16);
    float w = (hi8 ? t1 : t0) + __shfl_xor_sync(0xffffffffu, hi8 ? t0 : t1, 8);
#pragma unroll
    for (int o = 4; o > 0; o >>= 1) w += __shfl_xor_sync(0xffffffffu, w, o);
#pragma unroll
    for (int u = 0; u < kTok; ++u) s[u] = __shfl_sync(0xffffffffu, w, u * 8);  // lane 8u holds value u
}

// The block's warps' online-softmax states (per group head h: max m_s, sum l_s, unnormalised
// acc_s; m in units of 1 / unit nats, unit = ln 2 for log2 scores) merged into the output row, or
// into the split's partial (m in nats) for the combine pass. Called after a barrier.
template <int D, int H>
__device__ __forceinline__ void merge_warps(const AttnArgs& a, const HeadGroups& g, int gi,
                                            const DecodeEntries& e, const Partials& p, int entry, int split,
                                            int64_t row, const float (&m_s)[kWarps][H],
                                            const float (&l_s)[kWarps][H], const float (&acc_s)[kWarps][H][D],
                                            float unit) {
    const int gn = g.count[gi];
    for (int idx = threadIdx.x; idx < gn * D; idx += kThreads) {
        const int h = idx / D, c = idx % D;
        float mx = -INFINITY;
#pragma unroll
        for (int w = 0; w < kWarps; ++w) mx = fmaxf(mx, m_s[w][h]);
        float sum = 0.0f, val = 0.0f;
#pragma unroll
        for (int w = 0; w < kWarps; ++w) {
            if (m_s[w][h] == -INFINITY) continue;  // a warp that saw no token
            const float f = expf((m_s[w][h] - mx) * unit);
            sum += l_s[w][h] * f;
            val += acc_s[w][h][c] * f;
        }
        const int head = g.head[gi][h];
        if (e.n_splits == 1) {
            a.out[row * a.out_ld + int64_t(head) * D + c] = val / sum;
            continue;
        }
        const int64_t pi = (int64_t(entry) * e.n_splits + split) * p.n_q_heads + head;
        p.acc[pi * D + c] = val;
        if (c == 0) {
            p.ml[2 * pi] = mx * unit;
            p.ml[2 * pi + 1] = sum;
        }
    }
}

template <typename T, int D>
__global__ void __launch_bounds__(kThreads)
    decode_kernel(AttnArgs a, HeadGroups g, DecodeEntries e, Partials p) {
    using F = Fragment<T, D>;
    constexpr int V = F::kVpl;
    __shared__ float q_s[kMaxGroup][D];
    __shared__ float m_s[kWarps][kMaxGroup], l_s[kWarps][kMaxGroup];
    __shared__ float acc_s[kWarps][kMaxGroup][D];

    const int split = blockIdx.x, gi = blockIdx.y, entry = blockIdx.z;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const SeqInfo si = a.seqs[e.seq[entry]];
    const int row_in = e.row[entry];
    const int64_t row = si.q_start + row_in;
    const int ctx = si.pos0 + row_in + 1;
    const int split_len = (ctx + e.n_splits - 1) / e.n_splits;
    const int j0 = split * split_len;
    const int j1 = min(ctx, j0 + split_len);
    const int gn = g.count[gi], kvh = g.kv[gi];

    for (int idx = threadIdx.x; idx < gn * D; idx += kThreads) {
        const int h = idx / D, c = idx % D;
        q_s[h][c] = a.q[row * a.q_ld + int64_t(g.head[gi][h]) * D + c] * a.scale;
    }
    __syncthreads();

    float m[kMaxGroup], l[kMaxGroup], acc[kMaxGroup][V];
#pragma unroll
    for (int h = 0; h < kMaxGroup; ++h) {
        m[h] = -INFINITY;
        l[h] = 0.0f;
#pragma unroll
        for (int i = 0; i < V; ++i) acc[h][i] = 0.0f;
    }
    const T* kpool = static_cast<const T*>(a.k);
    const T* vpool = static_cast<const T*>(a.v);
    for (int j = j0 + kTok * warp; j < j1; j += kTok * kWarps) {
        // All of the warp's loads are issued before any is used.
        float kf[kTok][V], vf[kTok][V];
#pragma unroll
        for (int u = 0; u < kTok; ++u) {
            if (j + u < j1) {
                const int64_t off = pool_offset(a, si, j + u, kvh, D);
                F::load(kpool + off, lane, kf[u]);
                F::load(vpool + off, lane, vf[u]);
            } else {
#pragma unroll
                for (int i = 0; i < V; ++i) kf[u][i] = vf[u][i] = 0.0f;  // p = 0 multiplies them
            }
        }
#pragma unroll
        for (int h = 0; h < kMaxGroup; ++h) {
            if (h >= gn) break;
            float s[kTok] = {};
#pragma unroll
            for (int i = 0; i < V; ++i) {
                const float qv = q_s[h][F::elem(lane, i)];
#pragma unroll
                for (int u = 0; u < kTok; ++u) s[u] = fmaf(qv, kf[u][i], s[u]);
            }
            warp_sum4(s);
            float mx = m[h];
#pragma unroll
            for (int u = 0; u < kTok; ++u) {
                if (j + u >= j1) s[u] = -INFINITY;
                mx = fmaxf(mx, s[u]);
            }
            const float corr = expf(m[h] - mx);
            m[h] = mx;
            float pu[kTok], sum = 0.0f;
#pragma unroll
            for (int u = 0; u < kTok; ++u) {
                pu[u] = expf(s[u] - mx);
                sum += pu[u];
            }
            l[h] = l[h] * corr + sum;
#pragma unroll
            for (int i = 0; i < V; ++i) {
                float x = acc[h][i] * corr;
#pragma unroll
                for (int u = 0; u < kTok; ++u) x = fmaf(pu[u], vf[u][i], x);
                acc[h][i] = x;
            }
        }
    }

#pragma unroll
    for (int h = 0; h < kMaxGroup; ++h) {
        if (h >= gn) break;
        if (lane == 0) {
            m_s[warp][h] = m[h];
            l_s[warp][h] = l[h];
        }
#pragma unroll
        for (int i = 0; i < V; ++i) acc_s[warp][h][F::elem(lane, i)] = acc[h][i];
    }
    __syncthreads();

    merge_warps<D>(a, g, gi, e, p, entry, split, row, m_s, l_s, acc_s, 1.0f);
}

// ---- tensor cores (Precision::Mixed, 16-bit pools) --------------------------------------
//
// A warp takes 16 cached tokens at a time. S^T = K Q^T is one m16n8k16 chain: the tokens are
// the rows, the group's heads (<= 8) the columns, and the dimensions the k axis in an order of
// our choosing: lane (g, t) loads tokens g and g + 8 as whole 16-byte chunks t + 4i, and reads
// q (scaled, converted once, in shared memory) in the same order. The probabilities, transposed
// in registers (movmatrix), are the B operand of O^T = V^T P^T, whose A fragments come from
// 16-byte loads of tokens 2t, 2t+1, 2t+8, 2t+9 by byte permutes (row g of m-tile (G, w) is
// dimension 64 G + 8 g + 2 w, row g + 8 the one after). Scores are in log2 units; an fp32
// online softmax per head; warps and splits merge as in the fp32 kernel.

constexpr float kLog2e = 1.4426950408889634f;
constexpr int kMmaHeads = 8;  // the mma's n: a group's heads, padded with zeros

// Pool offsets of the tokens lane (g, t) reads in the tile at j (-1: past the split's end).
struct TileOffsets {
    int64_t k[2];  // tokens g, g + 8
    int64_t v[4];  // tokens 2t, 2t + 1, 2t + 8, 2t + 9
};

__device__ __forceinline__ TileOffsets tile_offsets(const AttnArgs& a, const SeqInfo& si, int j, int j1,
                                                    int kvh, int d, int gq, int tq) {
    TileOffsets o;
    const int kt[2] = {gq, gq + 8}, vt[4] = {2 * tq, 2 * tq + 1, 2 * tq + 8, 2 * tq + 9};
#pragma unroll
    for (int i = 0; i < 2; ++i) o.k[i] = j + kt[i] < j1 ? pool_offset(a, si, j + kt[i], kvh, d) : -1;
#pragma unroll
    for (int i = 0; i < 4; ++i) o.v[i] = j + vt[i] < j1 ? pool_offset(a, si, j + vt[i], kvh, d) : -1;
    return o;
}

__device__ __forceinline__ uint4 load16(const void* base, int64_t offset_bytes) {
    return __ldg(reinterpret_cast<const uint4*>(static_cast<const char*>(base) + offset_bytes));
}

// Lane (g, t)'s K and V chunks of the tile at j (tile_offsets: o) for its tokens in [lo, hi);
// the others are left as they are (zero from the start: past the split's end they must be).
template <typename T, int D>
__device__ __forceinline__ void load_tile(const AttnArgs& a, const TileOffsets& o, int j, int lo, int hi,
                                          int gq, int tq, uint4 (&kr)[2][D / 32], uint4 (&vr)[4][D / 64]) {
    constexpr int kEsz = int(sizeof(T));
    const int kt[2] = {gq, gq + 8}, vt[4] = {2 * tq, 2 * tq + 1, 2 * tq + 8, 2 * tq + 9};
#pragma unroll
    for (int u = 0; u < 2; ++u)
        if (o.k[u] >= 0 && j + kt[u] >= lo && j + kt[u] < hi)
#pragma unroll
            for (int i = 0; i < D / 32; ++i) kr[u][i] = load16(a.k, (o.k[u] + 8 * (tq + 4 * i)) * kEsz);
#pragma unroll
    for (int u = 0; u < 4; ++u)
        if (o.v[u] >= 0 && j + vt[u] >= lo && j + vt[u] < hi)
#pragma unroll
            for (int gr = 0; gr < D / 64; ++gr) vr[u][gr] = load16(a.v, (o.v[u] + 64 * gr + 8 * gq) * kEsz);
}

template <int D>
__device__ __forceinline__ void zero_tile(uint4 (&kr)[2][D / 32], uint4 (&vr)[4][D / 64]) {
#pragma unroll
    for (int u = 0; u < 2; ++u)
#pragma unroll
        for (int i = 0; i < D / 32; ++i) kr[u][i] = make_uint4(0, 0, 0, 0);
#pragma unroll
    for (int u = 0; u < 4; ++u)
#pragma unroll
        for (int gr = 0; gr < D / 64; ++gr) vr[u][gr] = make_uint4(0, 0, 0, 0);
}

__device__ __forceinline__ uint32_t word(const uint4& v, int w) {
    return w == 0 ? v.x : w == 1 ? v.y : w == 2 ? v.z : v.w;
}

template <typename T, int D>
__global__ void __launch_bounds__(kThreads)
    decode_mma_kernel(AttnArgs a, HeadGroups g, DecodeEntries e, Partials p) {
    using Op = Operand<T>;
    constexpr int kChunks = D / 32;  // K: 16-byte chunks t + 4i of a token's row a lane reads
    constexpr int kGroups = D / 64;  // V: 64-dimension groups, chunk g of each
    constexpr int kQRow = D + 32;    // q_s row stride (elements): 16-byte reads without conflicts
    __shared__ alignas(16) uint16_t q_s[kMmaHeads][kQRow];
    __shared__ float m_s[kWarps][kMmaHeads], l_s[kWarps][kMmaHeads];
    __shared__ float acc_s[kWarps][kMmaHeads][D];

    // Launched to overlap the kernel before (the one that stores the new keys): its launch is hidden. In a
    // settled step (StepInfo::settled) the tokens cached before it (before pos0) are read before the wait,
    // while the kernels before still run: at batch 1 they are most of the kernel's bytes.
    if (!a.settled) pdl_wait();
    const int split = blockIdx.x, gi = blockIdx.y, entry = blockIdx.z;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, gq = lane >> 2, tq = lane & 3;
    const SeqInfo si = a.seqs[e.seq[entry]];
    const int row_in = e.row[entry];
    const int64_t row = si.q_start + row_in;
    const int ctx = si.pos0 + row_in + 1;
    const int split_len = ((ctx + e.n_splits - 1) / e.n_splits + 15) & ~15;  // whole tiles
    const int j0 = min(ctx, split * split_len), j1 = min(ctx, j0 + split_len);
    const int gn = g.count[gi], kvh = g.kv[gi];
    int j = j0 + 16 * warp;
    TileOffsets cur = tile_offsets(a, si, j, j1, kvh, D, gq, tq);
    uint4 kr[2][kChunks], vr[4][kGroups];
    zero_tile<D>(kr, vr);
    const int early = a.settled ? si.pos0 : INT_MIN;  // tokens below it are loaded before the wait
    if (a.settled) {
        load_tile<T, D>(a, cur, j, INT_MIN, early, gq, tq, kr, vr);
        pdl_wait();
    }
    load_tile<T, D>(a, cur, j, early, INT_MAX, gq, tq, kr, vr);

    const float qscale = a.scale * kLog2e;
    for (int idx = threadIdx.x; idx < kMmaHeads * D / 2; idx += kThreads) {
        const int h = idx / (D / 2), c = 2 * (idx % (D / 2));
        float lo = 0.0f, hi = 0.0f;
        if (h < gn) {
            const float* q = a.q + row * a.q_ld + int64_t(g.head[gi][h]) * D + c;
            lo = q[0] * qscale;
            hi = q[1] * qscale;
        }
        *reinterpret_cast<uint32_t*>(&q_s[h][c]) = Op::pack(lo, hi);
    }
    __syncthreads();

    float o[D / 16][4] = {};  // O^T, m-tile 4 G + w; columns heads 2t, 2t + 1
    float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};  // heads 2t, 2t + 1; l: this lane's tokens
    for (; j < j1; j += 16 * kWarps) {
        const TileOffsets next = tile_offsets(a, si, j + 16 * kWarps, j1, kvh, D, gq, tq);

        float s[4] = {}, s2[4] = {};  // two accumulator chains, half as long
#pragma unroll
        for (int i = 0; i < kChunks; ++i) {
            const uint4 qf = *reinterpret_cast<const uint4*>(&q_s[gq][8 * (tq + 4 * i)]);
            Op::mma(s, {kr[0][i].x, kr[1][i].x, kr[0][i].y, kr[1][i].y}, qf.x, qf.y);
            Op::mma(s2, {kr[0][i].z, kr[1][i].z, kr[0][i].w, kr[1][i].w}, qf.z, qf.w);
        }
#pragma unroll
        for (int i = 0; i < 4; ++i) s[i] += s2[i];
        if (j + gq >= j1) s[0] = s[1] = -INFINITY;
        if (j + gq + 8 >= j1) s[2] = s[3] = -INFINITY;
        float mx[2] = {fmaxf(s[0], s[2]), fmaxf(s[1], s[3])};
#pragma unroll
        for (int off = 4; off < 32; off <<= 1)
#pragma unroll
            for (int h = 0; h < 2; ++h) mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], off));
        float corr[2], pr[4];
#pragma unroll
        for (int h = 0; h < 2; ++h) {  // token j is in the tile: mx is finite
            const float nm = fmaxf(m[h], mx[h]);
            corr[h] = exp2f(m[h] - nm);
            m[h] = nm;
            pr[h] = exp2f(s[h] - nm);
            pr[h + 2] = exp2f(s[h + 2] - nm);
            l[h] = l[h] * corr[h] + pr[h] + pr[h + 2];
        }
#pragma unroll
        for (int mt = 0; mt < D / 16; ++mt)
#pragma unroll
            for (int i = 0; i < 4; ++i) o[mt][i] *= corr[i & 1];
        const uint32_t b0 = movmatrix_trans(Op::pack(pr[0], pr[1]));
        const uint32_t b1 = movmatrix_trans(Op::pack(pr[2], pr[3]));
#pragma unroll
        for (int gr = 0; gr < kGroups; ++gr)
#pragma unroll
            for (int w = 0; w < 4; ++w) {
                const uint32_t v0 = word(vr[0][gr], w), v1 = word(vr[1][gr], w);
                const uint32_t v2 = word(vr[2][gr], w), v3 = word(vr[3][gr], w);
                Op::mma(o[4 * gr + w],
                        {__byte_perm(v0, v1, 0x5410), __byte_perm(v0, v1, 0x7632),
                         __byte_perm(v2, v3, 0x5410), __byte_perm(v2, v3, 0x7632)},
                        b0, b1);
            }
        cur = next;
        if (j + 16 * kWarps < j1) {  // the warp's next tile
            zero_tile<D>(kr, vr);
            load_tile<T, D>(a, cur, j + 16 * kWarps, INT_MIN, INT_MAX, gq, tq, kr, vr);
        }
    }
    pdl_release();  // after the loop: at large batches the grid is several waves

#pragma unroll
    for (int off = 4; off < 32; off <<= 1)
#pragma unroll
        for (int h = 0; h < 2; ++h) l[h] += __shfl_xor_sync(0xffffffffu, l[h], off);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const int head = 2 * tq + h;
        if (gq == 0) {
            m_s[warp][head] = m[h];
            l_s[warp][head] = l[h];
        }
#pragma unroll
        for (int gr = 0; gr < kGroups; ++gr)
#pragma unroll
            for (int w = 0; w < 4; ++w) {
                const int dim = 64 * gr + 8 * gq + 2 * w;
                acc_s[warp][head][dim] = o[4 * gr + w][h];
                acc_s[warp][head][dim + 1] = o[4 * gr + w][h + 2];
            }
    }
    __syncthreads();
    merge_warps<D>(a, g, gi, e, p, entry, split, row, m_s, l_s, acc_s, 1.0f / kLog2e);
}

// One block per (query head, entry), one thread per output element. The splits' weights
// exp(m_s - max) are computed once, in parallel, into shared memory, while every thread's first
// kCombineLoads partial values are already on their way: at batch 1 the pass is one trip to
// memory, not one per eight splits.
constexpr int kCombineLoads = 32;

__global__ void __launch_bounds__(256) combine_kernel(AttnArgs a, DecodeEntries e, Partials p, int d) {
    __shared__ float f_s[kMaxDecodeSplits];
    __shared__ float total;
    pdl_wait();  // launched to overlap the decode kernel: its launch is hidden (pdl.cuh)
    pdl_release();
    const int head = blockIdx.x, entry = blockIdx.y, c = threadIdx.x;
    const SeqInfo si = a.seqs[e.seq[entry]];
    const int64_t row = si.q_start + e.row[entry];
    const int64_t base = int64_t(entry) * e.n_splits * p.n_q_heads + head;
    const int n = e.n_splits;
    const float* acc = p.acc + base * d + c;
    const int64_t stride = int64_t(p.n_q_heads) * d;
    float x[kCombineLoads];
#pragma unroll
    for (int i = 0; i < kCombineLoads; ++i) x[i] = i < n ? acc[i * stride] : 0.0f;
    if (c < 32) {  // one warp: the max and the weighted sum of l over the splits
        constexpr int kPerLane = kMaxDecodeSplits / 32;
        float m[kPerLane], l[kPerLane];
        float mx = -INFINITY;
#pragma unroll
        for (int i = 0; i < kPerLane; ++i) {
            const int s = c + 32 * i;
            const int64_t pi = base + int64_t(s) * p.n_q_heads;
            m[i] = s < n ? p.ml[2 * pi] : -INFINITY;
            l[i] = s < n ? p.ml[2 * pi + 1] : 0.0f;
            mx = fmaxf(mx, m[i]);
        }
        for (int off = 16; off > 0; off >>= 1) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, off));
        float sum = 0.0f;
#pragma unroll
        for (int i = 0; i < kPerLane; ++i) {
            const float f = m[i] == -INFINITY ? 0.0f : expf(m[i] - mx);  // a split past the row's tokens: 0
            f_s[c + 32 * i] = f;
            sum += l[i] * f;
        }
        for (int off = 16; off > 0; off >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, off);
        if (c == 0) total = sum;
    }
    __syncthreads();
    float val = 0.0f;
    for (int s0 = 0; s0 < n; s0 += kCombineLoads) {
        if (s0 > 0) {
#pragma unroll
            for (int i = 0; i < kCombineLoads; ++i) x[i] = s0 + i < n ? acc[(s0 + i) * stride] : 0.0f;
        }
#pragma unroll
        for (int i = 0; i < kCombineLoads; ++i) {
            const float f = s0 + i < n ? f_s[s0 + i] : 0.0f;
            if (f != 0.0f) val += x[i] * f;
        }
    }
    a.out[row * a.out_ld + int64_t(head) * d + c] = val / total;
}

template <typename T, int D>
void launch(const AttnArgs& a, const HeadGroups& g, const DecodeEntries& e, const Partials& p,
            cudaStream_t stream) {
    const dim3 grid(unsigned(e.n_splits), unsigned(g.n), unsigned(e.n));
    decode_kernel<T, D><<<grid, kThreads, 0, stream>>>(a, g, e, p);
    NIWA_CUDA_LAUNCHED("attention decode");
}

template <typename T, int D>
void launch_mma(const AttnArgs& a, const HeadGroups& g, const DecodeEntries& e, const Partials& p,
                bool overlap, cudaStream_t stream) {
    const dim3 grid(unsigned(e.n_splits), unsigned(g.n), unsigned(e.n));
    NIWA_CUDA_CHECK(
        launch_overlapping(overlap, decode_mma_kernel<T, D>, grid, dim3(kThreads), 0, stream, a, g, e, p));
}

}  // namespace

template <typename T>
void launch_decode(const AttnArgs& a, const HeadGroups& g, const DecodeEntries& e, const Partials& p, int d,
                   cudaStream_t stream) {
    with_head_dim(d, [&](auto hd) { launch<T, decltype(hd)::value>(a, g, e, p, stream); });
}

void launch_decode_combine(const AttnArgs& a, const DecodeEntries& e, const Partials& p, int d, bool overlap,
                           cudaStream_t stream) {
    require(e.n_splits <= kMaxDecodeSplits && d <= 256, "attention",
            "the decode combine pass takes at most 64 splits of a head of at most 256 dimensions");
    NIWA_CUDA_CHECK(launch_overlapping(overlap, combine_kernel, dim3(unsigned(p.n_q_heads), unsigned(e.n)),
                                       dim3(unsigned(d)), 0, stream, a, e, p, d));
}

template <typename T>
int decode_blocks_per_sm(const CudaOps& ops, int d, bool tensor) {
    int n = 0;
    with_head_dim(d, [&](auto hd) {
        constexpr int D = decltype(hd)::value;
        if constexpr (!std::is_same_v<T, float>)
            if (tensor) {
                static std::atomic<int> cached[64] = {};
                n = blocks_per_sm(ops, decode_mma_kernel<T, D>, kThreads, 0, cached);
                return;
            }
        static std::atomic<int> cached[64] = {};
        n = blocks_per_sm(ops, decode_kernel<T, D>, kThreads, 0, cached);
    });
    return std::max(n, 1);
}

template int decode_blocks_per_sm<float>(const CudaOps&, int, bool);
template int decode_blocks_per_sm<__half>(const CudaOps&, int, bool);
template int decode_blocks_per_sm<__nv_bfloat16>(const CudaOps&, int, bool);

template void launch_decode<float>(const AttnArgs&, const HeadGroups&, const DecodeEntries&, const Partials&,
                                   int, cudaStream_t);
template void launch_decode<__half>(const AttnArgs&, const HeadGroups&, const DecodeEntries&, const Partials&,
                                    int, cudaStream_t);
template void launch_decode<__nv_bfloat16>(const AttnArgs&, const HeadGroups&, const DecodeEntries&,
                                           const Partials&, int, cudaStream_t);

template <typename T>
void launch_decode_mma(const AttnArgs& a, const HeadGroups& g, const DecodeEntries& e, const Partials& p,
                       int d, bool overlap, cudaStream_t stream) {
    with_head_dim(d, [&](auto hd) { launch_mma<T, decltype(hd)::value>(a, g, e, p, overlap, stream); });
}

template void launch_decode_mma<__half>(const AttnArgs&, const HeadGroups&, const DecodeEntries&,
                                        const Partials&, int, bool, cudaStream_t);
template void launch_decode_mma<__nv_bfloat16>(const AttnArgs&, const HeadGroups&, const DecodeEntries&,
                                               const Partials&, int, bool, cudaStream_t);

}  // namespace niwa::kernels::cuda::attn
