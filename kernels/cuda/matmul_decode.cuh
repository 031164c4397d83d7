// What the two ternary decode matmuls share (matmul_decode.cu stages rows through shared memory,
// every layout; matmul_decode_split.cu loads PQ2_0S straight into registers): the grid, x's
// staging, the quant blocks' tensor-core arithmetic, the output and the cross-slice sum.
//
// The grid is groups of 16-row weight tiles x slices of K (8 quant blocks, 1024 inputs: one
// PQ2_0S run). A block stages its slice of x once, as fp16, in shared memory, with a bias sum
// per quant block and x row; its warps then take the group's tiles in turn. Inside a quant block
// the order of the 128 inputs is free, so thread (g, tig) of a warp takes two whole code words
// of rows g and g + 8 (WordPairs) and x is stored permuted to match. The codes become fp16 as
// 1024 + q 4^s with one logic op (s = 0..4 by the code's bit position, dequant.cuh), x is stored
// times 4^-s, and the offset, the same for every weight row, is removed as the precomputed bias sum:
// decoding costs about one logic op per two weights, all exact. The block's fp16 scale
// multiplies its fp32 sum once. Slices write partial sums; the last block of a row group to
// finish (a counter per group) adds them in slice order, so the result does not depend on
// scheduling.
#pragma once

#include <atomic>
#include <cstdint>
#include <type_traits>

#include "kernels/cuda/dequant.cuh"
#include "kernels/cuda/hadamard.cuh"
#include "kernels/cuda/matmul.cuh"
#include "kernels/cuda/mma.cuh"
#include "kernels/cuda/pdl.cuh"
#include "kernels/cuda/rotate_sources.cuh"
#include "kernels/cuda/wait_bound.cuh"
#include "kernels/cuda/wgmma.cuh"

namespace niwa::kernels::cuda {

constexpr int kSliceBlocks = kSplitRunBlocks;   // quant blocks per K slice
constexpr int kTileRows = 16;                   // weight rows per warp tile (one mma M)
constexpr int kXWords = kSliceBlocks * 64 + 2;  // fp16 pairs per x row; + 2 spreads the banks
constexpr int kMaxGroups = 4096;

struct DecodeParams {
    MatmulArgs a;
    float* partial = nullptr;      // [slices][n][out] when slices > 1
    unsigned* counters = nullptr;  // [groups][2] (arrived, left), zero between calls
    bool shared_sum = false;       // the group's slices share its sum (sum_slices)
    int slices = 1;
    int groups = 1;
    int64_t tiles = 0;
    int stages = 3;  // the staged kernel: tiles in each warp's ring (2 or 3)
};

// Shared memory for x's slice as fp16 pairs and its bias sums (NT tiles of 8 x rows).
__host__ __device__ constexpr size_t decode_x_bytes(int nt) {
    return static_cast<size_t>(nt) * 8 * (kXWords + kSliceBlocks) * 4;
}

// Which two code words of a quant block thread tig takes: words tig and tig + 4 (Apart: the
// staged kernel, where PTQ1_0's words then come from fewer of its byte groups) or 2 tig and
// 2 tig + 1 (Adjacent: one 8-byte load of a PQ2_0S run). Either way it reads x at positions
// tig and tig + 4; position_word gives the code word x position p (0..7) holds.
enum class WordPairs { Apart, Adjacent };

template <WordPairs W>
__device__ __forceinline__ int position_word(int p) {
    if constexpr (W == WordPairs::Apart) return p;
    return p < 4 ? 2 * p : 2 * (p - 4) + 1;
}

// Which x position p (0..7) holds code word w: position_word's inverse.
template <WordPairs W>
__device__ __forceinline__ int word_position(int w) {
    if constexpr (W == WordPairs::Apart) return w;
    return (w & 1) ? 4 + (w >> 1) : w >> 1;
}

// The bias sums of K x rows' quant blocks, whose words lane and lane + 32 a lane holds (w0, w1;
// weight: 1024 4^-s + 1 for the lane's e): every lane gets them. The K chains of shuffles
// interleave, each summed in the same order as alone.
template <int K>
__device__ __forceinline__ void block_biases(const uint32_t (&w0)[K], const uint32_t (&w1)[K], float weight,
                                             float (&sum)[K]) {
#pragma unroll
    for (int k = 0; k < K; ++k) {
        const float2 v0 = __half22float2(*reinterpret_cast<const __half2*>(&w0[k]));
        const float2 v1 = __half22float2(*reinterpret_cast<const __half2*>(&w1[k]));
        sum[k] = weight * (v0.x + v0.y);
        sum[k] += weight * (v1.x + v1.y);
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1)
#pragma unroll
        for (int k = 0; k < K; ++k) sum[k] += __shfl_xor_sync(0xffffffffu, sum[k], off);
}

// One x row's quant block (block_biases of one).
__device__ __forceinline__ float block_bias(uint32_t w0, uint32_t w1, float weight) {
    const uint32_t a[1] = {w0}, b[1] = {w1};
    float sum[1];
    block_biases<1>(a, b, weight, sum);
    return sum[0];
}

// Lane `lane`'s share of staging one x row's quant block (xr: its 128 values): the values at
// positions at0, at0 + 8, at1, at1 + 8 (load), as the fp16 pairs of words lane and lane + 32
// times 4^-s (pack), whose bias sums take `weight` (block_biases).
template <WordPairs W>
struct StageLane {
    int at0, at1;
    float sc, weight;
    __device__ __forceinline__ explicit StageLane(int lane) {
        const int e = lane & 7;
        at0 = 16 * position_word<W>(lane >> 3) + e;
        at1 = 16 * position_word<W>((lane >> 3) + 4) + e;
        sc = pair_x_scale(e);
        weight = 1024.0f + 1.0f / sc;
    }
    __device__ __forceinline__ void load(const float* xr, float (&v)[4]) const {
        v[0] = xr[at0];
        v[1] = xr[at0 + 8];
        v[2] = xr[at1];
        v[3] = xr[at1 + 8];
    }
    __device__ __forceinline__ void pack(const float (&v)[4], uint32_t& w0, uint32_t& w1) const {
        w0 = f16x2_bits(v[0] * sc, v[1] * sc);
        w1 = f16x2_bits(v[2] * sc, v[3] * sc);
    }
};

// x's slice (quant blocks qb0 .. qb0 + nqb) into xs as fp16 pairs, word 8 p + e of a block =
// inputs (16 w + e, 16 w + e + 8) of code word w = position_word<W>(p), times 4^-s; with, per
// quant block and x row, the sum of (1024 4^-s + 1) x over the fp16 values stored (= (1024 +
// 4^s) times the stored x 4^-s), which biased_code_pair's offset adds. A warp takes one x row's
// quant block at a time, lane j its words j and j + 32 (the same e, so the same factor), and
// sums them with its shuffles: one pass, no division, no second barrier. Only the rows below n:
// the others reach only output columns >= n (an mma's columns are independent), which are never
// stored. Ends with the block synchronised.
// Word `word` (8 p + e) of x row r's quant block qb is xs[r kXWords + 64 qb + word] (the mma.sync
// kernels' layout; the wgmma kernel's records are stage_records_kernel's, matmul_decode_wgmma.cu).
template <int NT, WordPairs W>
__device__ __forceinline__ void stage_x(const MatmulArgs& a, int qb0, int nqb, uint32_t* xs, float* bias) {
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, warps = blockDim.x >> 5;
    const int rows = min(static_cast<int>(a.n), NT * 8);
    const StageLane<W> sl(lane);
    // Item i = r nqb + qb (x row r's quant block qb); a warp takes items warp + k warps, kBatch
    // at a time with every load issued before the first store: at 24 rows a warp has 24 items,
    // whose loads one by one were 24 trips to memory (measured: 14 % of the register kernel's
    // samples at 24 rows, one instruction waiting on them). A batch's bias sums interleave their
    // shuffles (block_biases): one after another they were most of the staging's time
    // (docs/BENCHMARKS.md, nineteenth pass). Items past the last in a batch are guarded (the last
    // one loaded again, nothing stored), so the rest after whole batches go two at a time.
    constexpr int kBatch = NT == 1 ? 1 : 8;  // one x row: a block's 8+ warps take an item each
    const int items = rows * nqb;
    auto batch = [&](int i0, auto k) {
        constexpr int K = decltype(k)::value;
        float v[K][4];
        int r[K], qb[K];
#pragma unroll
        for (int j = 0; j < K; ++j) {
            const int i = min(i0 + j * warps, items - 1);
            r[j] = i / nqb;
            qb[j] = i - r[j] * nqb;
            sl.load(a.x + r[j] * a.ldx + static_cast<int64_t>(qb0 + qb[j]) * kQuantBlock, v[j]);
        }
        uint32_t w0[K], w1[K];
        float sum[K];
#pragma unroll
        for (int j = 0; j < K; ++j) sl.pack(v[j], w0[j], w1[j]);
        block_biases<K>(w0, w1, sl.weight, sum);
#pragma unroll
        for (int j = 0; j < K; ++j)
            if (i0 + j * warps < items) {
                uint32_t* word = xs + r[j] * kXWords + qb[j] * 64 + lane;
                word[0] = w0[j];
                word[32] = w1[j];
                if (lane == 0) bias[qb[j] * NT * 8 + r[j]] = sum[j];
            }
    };
    int i0 = warp;
    for (; i0 + (kBatch - 1) * warps < items; i0 += kBatch * warps)
        batch(i0, std::integral_constant<int, kBatch>{});
    if constexpr (kBatch > 1)
        for (; i0 < items; i0 += 2 * warps) batch(i0, std::integral_constant<int, 2>{});
    __syncthreads();
}

// What the staging reads: x itself (stage_x), or an input made on the way in (stage_rotated).
struct PlainX {};

// A rotated input (RotatedInput, ops.h): Read's values (rotate_sources.cuh) times the signs,
// through Hadamard blocks of `block` channels (32..1024, dividing 1024) times norm; block 0: the
// values as they are.
template <typename Read>
struct RotatedX {
    Read read;
    const float* signs = nullptr;
    int block = 0;
    float norm = 1.0f;
};

// Rows of x up to which the split decode kernel builds a rotated input itself (stage_rotated):
// it keeps them as fp32 in shared memory, 4 KB a row.
constexpr int kRotatedMaxRows = 4;
constexpr size_t kRotatedRowBytes = static_cast<size_t>(kSliceBlocks) * kQuantBlock * sizeof(float);

// The signs of the 128 channels of quant block `warp` of the slice a lane of warp `warp` takes
// (channels lane + 32 k): weights, so they may be read before the kernel before has finished.
template <typename Read>
__device__ __forceinline__ void rotated_signs(const RotatedX<Read>& src, int qb0, int nqb, float (&sg)[4]) {
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int64_t c0 = static_cast<int64_t>(qb0 + warp) * kQuantBlock + lane;
#pragma unroll
    for (int k = 0; k < 4; ++k) sg[k] = warp < nqb && src.signs ? src.signs[c0 + 32 * k] : 1.0f;
}

// stage_x's result for the input src describes, rows [0, n) (n <= kRotatedMaxRows; 8 warps):
// warp w takes quant block w of the slice (128 channels, lane + 32 k in its v[k]) of every row,
// all rows' loads in flight together, and runs the Hadamard stages of pair distance 1..64 in
// registers; the rows meet as fp32 in `rows_buf`, where the stages of distance 128..512 run, a
// thread per channel of a quant block, in the CPU oracle's order (hadamard.cuh), and the fp16
// result is stored as stage_x lays it out. The bias sums then come from the stored words as
// stage_x sums them: the result is bit for bit the matmul of the input staged by the rotate
// kernels (rotate.cu), which run the same arithmetic. Each block of a slice builds its slice
// again: at one and two rows that measured faster than a kernel that builds x once, at four the
// same (docs/BENCHMARKS.md, twelfth pass). A ResidualNorm read: each warp first has the rows'
// 1 / rms from their parts of the sum of squares (inverse_rms, loaded after x's values are
// requested), scales the values by it, and row group 0's blocks write the plain normed rows.
// Ends with the block synchronised. Fp32Rows: the input
// is left in rows_buf as fp32 instead (row r's channel qb0 128 + c at r kRotatedRowBytes / 4 + c),
// for the int8 staging (matmul_decode_x8.cuh); xs and bias are not touched.
template <int NT, WordPairs W, typename Read, bool Fp32Rows = false>
__device__ __forceinline__ void stage_rotated(const RotatedX<Read>& src, const float (&sg)[4], int64_t n,
                                              int qb0, int nqb, uint32_t* xs, float* bias, float* rows_buf) {
    constexpr bool kNorm = std::is_same_v<Read, ReadResidualNorm>;
    static_assert(!kNorm || ReadResidualNorm::kMaxRows >= kRotatedMaxRows);
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, warps = blockDim.x >> 5;
    const int rows = min(static_cast<int>(n), kRotatedMaxRows);
    if (warp < nqb) {
        const int64_t c0 = static_cast<int64_t>(qb0 + warp) * kQuantBlock + lane;
        typename Read::Raw raw[kRotatedMaxRows][4];
#pragma unroll
        for (int r = 0; r < kRotatedMaxRows; ++r)
#pragma unroll
            for (int k = 0; k < 4; ++k)
                if (r < rows) raw[r][k] = src.read.fetch(r, c0 + 32 * k);
        [[maybe_unused]] float inv[ReadResidualNorm::kMaxRows];
        if constexpr (kNorm) src.read.inverse_rms(rows, lane, inv);
#pragma unroll
        for (int r = 0; r < kRotatedMaxRows; ++r) {
            if (r >= rows) break;
            float v[4];
            src.read.values(raw[r], v);
            if constexpr (kNorm) {
#pragma unroll
                for (int k = 0; k < 4; ++k) v[k] *= inv[r];
                if (src.read.normed && blockIdx.x == 0)
#pragma unroll
                    for (int k = 0; k < 4; ++k) src.read.normed[r * src.read.ldn + c0 + 32 * k] = v[k];
            }
#pragma unroll
            for (int k = 0; k < 4; ++k) v[k] *= sg[k];
            if (src.block > 0) {
                lane_butterflies(v, lane);
                register_butterflies(v, 32, src.block);
            }
#pragma unroll
            for (int k = 0; k < 4; ++k)
                rows_buf[r * kSliceBlocks * kQuantBlock + warp * kQuantBlock + lane + 32 * k] = v[k];
        }
    }
    __syncthreads();
    [[maybe_unused]] __half* xh = reinterpret_cast<__half*>(xs);
    for (int t = threadIdx.x; t < rows * kQuantBlock; t += blockDim.x) {
        const int r = t / kQuantBlock, i = t - r * kQuantBlock;
        const float* row = rows_buf + r * kSliceBlocks * kQuantBlock;
        float o[kSliceBlocks];
#pragma unroll
        for (int q = 0; q < kSliceBlocks; ++q) o[q] = q < nqb ? row[q * kQuantBlock + i] : 0.0f;
        register_butterflies(o, kQuantBlock, src.block);
        const float norm = src.block > 0 ? src.norm : 1.0f;
        if constexpr (Fp32Rows) {
            // Each thread rewrites the channels it read: no other thread reads them.
#pragma unroll
            for (int q = 0; q < kSliceBlocks; ++q)
                if (q < nqb) rows_buf[r * kSliceBlocks * kQuantBlock + q * kQuantBlock + i] = o[q] * norm;
            continue;
        }
        // Channel i of a quant block: code word i / 16, half (i >> 3) & 1 of its pair i % 8.
        const int at = 2 * (r * kXWords + 8 * word_position<W>(i >> 4) + (i & 7)) + ((i >> 3) & 1);
        const float sc = pair_x_scale(i & 7);
#pragma unroll
        for (int q = 0; q < kSliceBlocks; ++q)
            if (q < nqb) xh[at + 2 * 64 * q] = __float2half_rn(o[q] * norm * sc);
    }
    __syncthreads();
    if constexpr (Fp32Rows) return;
    const float weight = 1024.0f + 1.0f / pair_x_scale(lane & 7);
    for (int i = warp; i < rows * nqb; i += warps) {
        const int r = i / nqb, qb = i - r * nqb;
        const uint32_t* words = xs + r * kXWords + qb * 64;
        const float sum = block_bias(words[lane], words[lane + 32], weight);
        if (lane == 0) bias[qb * NT * 8 + r] = sum;
    }
    __syncthreads();
}

// Two k16 steps' worth of one code-word pair: pairs E0 and E0 + 1 of rows g (wa) and g + 8 (wb).
template <int E0, int NT>
__device__ __forceinline__ void mma_step(uint32_t wa, uint32_t wb, const uint32_t* xw, float (&blk)[NT][4]) {
    const uint32_t a0 = biased_code_pair<E0>(wa), a1 = biased_code_pair<E0>(wb);
    const uint32_t a2 = biased_code_pair<E0 + 1>(wa), a3 = biased_code_pair<E0 + 1>(wb);
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) {
        const uint2 b = *reinterpret_cast<const uint2*>(xw + nt * 8 * kXWords + E0);
        mma_f16(blk[nt], a0, a1, a2, a3, b.x, b.y);
    }
}

// Quant blocks in flight at once (blocks_product): their mma chains interleave, so a warp has
// independent tensor-core work between the dependent steps of one chain.
struct BlockWords {
    uint32_t wa0, wb0, wa1, wb1;  // the thread's first and second code word of rows g and g + 8
    float d0, d1;                 // the block's scales of rows g and g + 8
};

// acc += B quant blocks of a tile times x, their mma steps interleaved: block b's words w[b], its
// x words xw + b xstride (this thread's row g and position tig) and bias sums bias + b NT 8.
// With one x tile and fewer than four blocks each block keeps two accumulator chains (one per
// code word: four or more chains in flight either way; one chain saves summing them); with more
// x tiles, theirs are independent already and registers are short.
template <int NT, int B>
__device__ __forceinline__ void blocks_product(const BlockWords (&w)[B], const uint32_t* xw, int xstride,
                                               const float* bias, int tig, float (&acc)[NT][4]) {
    constexpr int kChains = NT == 1 && B < 4 ? 2 : 1;
    float c[B][kChains][NT][4] = {};
    auto steps = [&](auto e) {
        constexpr int E = decltype(e)::value;
#pragma unroll
        for (int b = 0; b < B; ++b) {
            mma_step<E, NT>(w[b].wa0, w[b].wb0, xw + b * xstride, c[b][0]);
            mma_step<E, NT>(w[b].wa1, w[b].wb1, xw + b * xstride + 32, c[b][kChains - 1]);
        }
    };
    steps(std::integral_constant<int, 0>{});
    steps(std::integral_constant<int, 2>{});
    steps(std::integral_constant<int, 4>{});
    steps(std::integral_constant<int, 6>{});
#pragma unroll
    for (int b = 0; b < B; ++b)
#pragma unroll
        for (int nt = 0; nt < NT; ++nt) {
            const float2 k =
                *reinterpret_cast<const float2*>(bias + b * NT * 8 + nt * 8 + 2 * tig);  // x columns 2tig, +1
            float s[4];
#pragma unroll
            for (int i = 0; i < 4; ++i)
                s[i] = kChains == 2 ? c[b][0][nt][i] + c[b][kChains - 1][nt][i] : c[b][0][nt][i];
            acc[nt][0] += w[b].d0 * (s[0] - k.x);
            acc[nt][1] += w[b].d0 * (s[1] - k.y);
            acc[nt][2] += w[b].d1 * (s[2] - k.x);
            acc[nt][3] += w[b].d1 * (s[3] - k.y);
        }
}

// Where a decode kernel's outputs go: y (PlainOut), or through GDN's conv (ConvStore, matmul.cuh)
// for rows below its channels.
struct PlainOut {};

// Or added to the residual stream (Ops::rotated_matmul_add): x += the sum, for x rows below
// kRotatedMaxRows (a rotated input's kernel), and each row's sum of squares of its new values over
// a summing block's outputs into squares (row c's part `part` at c lds + part; sum_slices says
// which part a block writes).
struct ResidualAdd {
    float* x;
    int64_t ldx;
    float* squares;
    int64_t lds;
};

// What the conv of output row r reads besides the matmul's value: its taps and the conv state of
// x row c's sequence, oldest first. Loaded with the partial sums, before the value is known.
struct ConvWindow {
    float w[kConvTaps], h[kConvTaps - 1];
};

__device__ __forceinline__ float* conv_state(const ConvStore& cs, int64_t c, int64_t r) {
    return cs.state + static_cast<int64_t>(cs.seqs[c].state_slot) * (kConvTaps - 1) * cs.channels + r;
}

__device__ __forceinline__ void conv_fetch(const ConvStore& cs, int64_t c, int64_t r, ConvWindow& win) {
    const float* st = conv_state(cs, c, r);
#pragma unroll
    for (int j = 0; j < kConvTaps; ++j) win.w[j] = cs.w[r * kConvTaps + j];
#pragma unroll
    for (int j = 0; j < kConvTaps - 1; ++j) win.h[j] = __ldcg(st + j * cs.channels);
}

// Output (x row c, weight row r < channels) = v through the conv as conv1d.cu's kernel computes
// it (the same sum in the same order, so the same bits), its state moved on by one token.
__device__ __forceinline__ void store_conv(const ConvStore& cs, int64_t c, int64_t r, float v,
                                           const ConvWindow& win) {
    float acc = 0.0f;
#pragma unroll
    for (int j = 0; j < kConvTaps - 1; ++j) acc += win.w[j] * win.h[j];
    acc += win.w[kConvTaps - 1] * v;
    cs.out[c * cs.ld + r] = acc / (1.0f + expf(-acc));
    float* st = conv_state(cs, c, r);
#pragma unroll
    for (int j = 0; j + 1 < kConvTaps - 1; ++j) st[j * cs.channels] = win.h[j + 1];
    st[(kConvTaps - 2) * cs.channels] = v;
}

// Where a kernel's finished tiles go: y (one slice) or the slice's partial rows (a launch with a
// ConvStore has several slices: split_decode_takes_conv). Thread (g, tig)'s columns nt 8 + 2 tig
// + h are 32-bit offsets made once a kernel, -1 past x's rows (plan_decode: they fit). With
// x8_columns (matmul_decode_x8.cuh: x row r is columns 2 r and 2 r + 1, summed into the first),
// thread (g, tig)'s h = 0 sums are x row tig's and h = 1 holds none.
template <int NT>
struct TileStores {
    float* out;
    int rows;
    int col[NT][2];

    __device__ __forceinline__ TileStores(const DecodeParams& p, int slice, int tig,
                                          bool x8_columns = false) {
        const MatmulArgs& a = p.a;
        const int ld = static_cast<int>(p.slices == 1 ? a.ldy : a.out);
        out = p.slices == 1 ? a.y : p.partial + static_cast<int64_t>(slice) * a.n * a.out;
        rows = static_cast<int>(a.out);
#pragma unroll
        for (int nt = 0; nt < NT; ++nt)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                // x8: the h = 1 column holds no sums of its own (its q1 part is in h = 0's).
                const bool holds = !x8_columns || h == 0;
                const int c = x8_columns ? tig : nt * 8 + 2 * tig + h;
                col[nt][h] = holds && c < a.n ? c * ld : -1;
            }
    }
    __device__ __forceinline__ void store(int64_t tile, int g, const float (&acc)[NT][4]) const {
        const int r0 = static_cast<int>(tile) * kTileRows + g;
#pragma unroll
        for (int nt = 0; nt < NT; ++nt)
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                const int r = r0 + (i >> 1) * 8, c = col[nt][i & 1];
                if (c >= 0 && r < rows) out[c + r] = acc[nt][i];
            }
    }
};

// Outputs [0, total) of a row group (rows from row0, `rows` of them, column-major) summed over the
// slices in slice order into y (or through the conv: store_conv, its window loaded with the
// partials): a thread takes B outputs at a time with C slices' loads in flight
// (B x C of them), every load issued before any store (a store to y could alias the partials as far
// as the compiler knows, so it would not move loads past it). The C slices are guarded inside the
// unrolled body: a loop unrolled by a pragma runs a trip count below its factor one slice at a time.
// Each output's (x row, weight row) is carried from one trip to the next (one division a thread,
// not one an output) and its offsets are 32-bit (plan_decode, plan_slice_sums).
// A ResidualAdd's x is loaded with the partials, and the squares of its new values are summed
// per x row into sq.
template <int B, int C, typename Out>
__device__ __forceinline__ void sum_outputs(const DecodeParams& p, int64_t row0, int rows, int total,
                                            const Out& out, float (&sq)[kRotatedMaxRows]) {
    constexpr bool Conv = std::is_same_v<Out, ConvStore>, Add = std::is_same_v<Out, ResidualAdd>;
    if (total <= 0) return;  // a share of no rows (fewer rows than slices)
    const MatmulArgs& a = p.a;
    const int slice_stride = static_cast<int>(a.n * a.out), out_rows = static_cast<int>(a.out);
    const int ldy = static_cast<int>(a.ldy), threads = static_cast<int>(blockDim.x);
    const float* part = p.partial + row0;
    float* y = a.y + row0;
    // Output idx = c rows + i: x row c, weight row row0 + i. A thread's outputs are idx = base +
    // b threads; (c, i) of its first is carried from one trip to the next, the others' follow
    // by adding (tc, ti) = threads as (rows, remainder) to the one before.
    const int tc = threads / rows, ti = threads - tc * rows;
    int c0 = static_cast<int>(threadIdx.x) / rows, i0 = static_cast<int>(threadIdx.x) - c0 * rows;
    for (int base = threadIdx.x; base < total; base += B * threads) {
        int src[B], c[B], i[B];
        ConvWindow win[Conv ? B : 1];
#pragma unroll
        for (int b = 0; b < B; ++b) {
            c[b] = b == 0 ? c0 : c[b - 1] + tc;
            i[b] = b == 0 ? i0 : i[b - 1] + ti;
            if (i[b] >= rows) {
                i[b] -= rows;
                ++c[b];
            }
            src[b] = base + b * threads < total ? c[b] * out_rows + i[b] : -1;
            if constexpr (Conv)
                if (src[b] >= 0 && row0 + i[b] < out.channels) conv_fetch(out, c[b], row0 + i[b], win[b]);
        }
        // The next trip's first output: B threads on from this trip's first.
        c0 = c[B - 1] + tc;
        i0 = i[B - 1] + ti;
        if (i0 >= rows) {
            i0 -= rows;
            ++c0;
        }
        float s[B] = {};
        [[maybe_unused]] float res[Add ? B : 1];
        if constexpr (Add)
#pragma unroll
            for (int b = 0; b < B; ++b)
                res[b] = src[b] >= 0 ? __ldcg(out.x + row0 + c[b] * out.ldx + i[b]) : 0.0f;
        for (int sl0 = 0; sl0 < p.slices; sl0 += C) {
            float v[C][B];
#pragma unroll
            for (int j = 0; j < C; ++j) {
                const float* sl = part + (sl0 + j) * slice_stride;
#pragma unroll
                for (int b = 0; b < B; ++b)
                    v[j][b] = sl0 + j < p.slices && src[b] >= 0 ? __ldcg(sl + src[b]) : 0.0f;
            }
#pragma unroll
            for (int j = 0; j < C; ++j)
                if (sl0 + j < p.slices)
#pragma unroll
                    for (int b = 0; b < B; ++b) s[b] += v[j][b];
        }
#pragma unroll
        for (int b = 0; b < B; ++b) {
            if (src[b] >= 0) {
                if constexpr (Conv) {
                    if (row0 + i[b] < out.channels)
                        store_conv(out, c[b], row0 + i[b], s[b], win[b]);
                    else
                        y[c[b] * ldy + i[b]] = s[b];
                } else if constexpr (Add) {
                    const float h = res[b] + s[b];
                    out.x[row0 + c[b] * out.ldx + i[b]] = h;
#pragma unroll
                    for (int r = 0; r < kRotatedMaxRows; ++r)
                        if (c[b] == r) sq[r] = fmaf(h, h, sq[r]);
                } else {
                    y[c[b] * ldy + i[b]] = s[b];
                }
            }
        }
    }
}

// After a block's last tile: the partials of tiles [t0, t1) of its row group summed in slice order
// into y. `flag` is a word of shared memory. Either the last slice of the group to finish sums
// them all, after every slice has finished, so this is the kernel's tail, and each round trip to
// the L2 costs it about a microsecond: 20-24 loads a thread are in flight, as few outputs a thread
// as cover the group in one pass (the 20 slices of a small output's 16 rows in one round trip).
// Or, where the group's outputs are many (p.shared_sum: at 24 rows of x a group holds up to
// ~10^5 outputs, and one block summing them was most of a large matrix's time), every slice
// waits for the others and sums its share of the rows: the grid is one wave (launch_wave), so
// every block of the group runs at once. Either way each output is summed by one thread in slice
// order, so the result does not depend on scheduling. Offsets into the partials and y fit 32 bits
// (plan_slice_sums, plan_decode). Out: where the sums go (PlainOut: y; a ConvStore: its rows through the
// conv).
// A ResidualAdd takes `scratch`: kRotatedMaxRows x 32 floats of shared memory (static
// shared memory would not fit beside the dynamic share the decode kernels take whole).
template <typename Out = PlainOut>
__device__ __forceinline__ void sum_slices(const DecodeParams& p, int group, int64_t t0, int64_t t1,
                                           unsigned* flag, const Out& out = {}, float* scratch = nullptr) {
    if (p.slices == 1) return;
    const MatmulArgs& a = p.a;
    unsigned* arrived = p.counters + 2 * group;
    // The block's partial stores, ordered before thread 0's count by the barrier, are released
    // with it (the count is cumulative over what the barrier orders); the summing block acquires
    // every other block's with its count (or its wait), and its threads after the second barrier
    // read them. One thread's fence, not one a thread: each was a round trip.
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned prev;
        asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;" : "=r"(prev) : "l"(arrived) : "memory");
        if (p.shared_sum) {
            // Bounded: a group whose slices cannot all run (never, in one wave) fails the launch
            // after kWaitTrapNs of waiting instead of hanging the GPU. The bound is time, not
            // polls: 2^20 polls (~1 s) is the likely cause of the launch failures racecheck met
            // at shared-sum launches only, twelve runs sharing the GPU, where a slice can take
            // seconds (docs/BENCHMARKS.md, twentieth pass).
            unsigned now = prev + 1;
            const uint64_t start = globaltimer_ns();
            while (now < static_cast<unsigned>(p.slices)) {
                if (globaltimer_ns() - start > kWaitTrapNs) __trap();
                __nanosleep(64);
                asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(now) : "l"(arrived) : "memory");
            }
            *flag = 1;
        } else {
            *flag = prev == static_cast<unsigned>(p.slices - 1);
            if (*flag) *arrived = 0;
        }
    }
    __syncthreads();
    if (!*flag) return;
    int64_t row0 = t0 * kTileRows, row1 = min(t1 * kTileRows, a.out);
    if (p.shared_sum) {
        // This slice's share: rows [row0, row1) cut in p.slices parts.
        const int64_t rows = row1 - row0, s = blockIdx.y;
        row1 = row0 + rows * (s + 1) / p.slices;
        row0 += rows * s / p.slices;
    }
    const int rows = static_cast<int>(row1 - row0), total = rows * static_cast<int>(a.n);
    const int threads = static_cast<int>(blockDim.x);
    float sq[kRotatedMaxRows] = {};
    auto sum = [&](const auto& to) {
        using To = std::decay_t<decltype(to)>;
        if (total <= threads)
            sum_outputs<1, 20, To>(p, row0, rows, total, to, sq);
        else if (total <= 2 * threads)
            sum_outputs<2, 10, To>(p, row0, rows, total, to, sq);
        else
            sum_outputs<4, 6, To>(p, row0, rows, total, to, sq);
    };
    // A group (or share) wholly past the conv's rows sums as a plain one (fewer registers).
    if constexpr (std::is_same_v<Out, ConvStore>) {
        if (row0 < out.channels)
            sum(out);
        else
            sum(PlainOut{});
    } else if constexpr (std::is_same_v<Out, ResidualAdd>) {
        sum(out);
        // The block's squares per x row (a warp tree, then the warps in order) into its part: the
        // group's (one block sums it), or the group's slice's share (shared sums: every block).
        const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
#pragma unroll
        for (int r = 0; r < kRotatedMaxRows; ++r) {
#pragma unroll
            for (int o = 16; o > 0; o >>= 1) sq[r] += __shfl_xor_sync(0xffffffffu, sq[r], o);
            if (lane == 0) scratch[r * 32 + warp] = sq[r];
        }
        __syncthreads();
        if (threadIdx.x < min(static_cast<int>(a.n), kRotatedMaxRows)) {
            float v = 0.0f;
            for (int w = 0; w < (threads >> 5); ++w) v += scratch[threadIdx.x * 32 + w];
            const int part = p.shared_sum ? group * p.slices + static_cast<int>(blockIdx.y) : group;
            out.squares[threadIdx.x * out.lds + part] = v;
        }
    } else {
        sum(PlainOut{});
    }
    if (p.shared_sum) {
        // The last block to leave sets both counts back to zero (every block has seen them all).
        if (threadIdx.x == 0) {
            const unsigned left = atomicAdd(arrived + 1, 1u);
            if (left == static_cast<unsigned>(p.slices - 1)) {
                arrived[0] = 0;
                arrived[1] = 0;
            }
        }
    }
}

// Calls f(std::integral_constant<int, NT>{}) for nt x tiles of 8 rows (1..4).
template <typename F>
void with_x_tiles(int nt, F&& f) {
    switch (nt) {
        case 1:
            return f(std::integral_constant<int, 1>{});
        case 2:
            return f(std::integral_constant<int, 2>{});
        case 3:
            return f(std::integral_constant<int, 3>{});
        default:
            return f(std::integral_constant<int, 4>{});
    }
}

// Host: the slices, tiles and groups of a launch over x rows [0, a.n) filling `blocks` blocks
// (one wave), with the partial buffer and group counters when K is split.
DecodeParams plan_decode(CudaOps& ops, const MatmulArgs& a, int blocks);
// With p.slices > 1 (p.a, p.slices and p.groups set): the partial buffer and zeroed group
// counters sum_slices needs for one call (a ring of counters per device; the last block of a
// group sets its counter back to zero).
void plan_slice_sums(CudaOps& ops, DecodeParams& p);
// For a launch of one wave (every block running at once, launch_wave): whether a group's slices
// share its sum (p.shared_sum: from CudaOps::shared_sum_outputs outputs a group). Other launches
// (the staged kernel's grid is sized by shared memory alone, the small-output matmul's by its
// shape) leave it off: their slices must not wait for each other.
void share_sums_in_one_wave(const CudaOps& ops, DecodeParams& p);

// Launches `kernel` over one wave of blocks (measured: fewer, fuller blocks for small matrices
// are slower): blocks_per_sm from the occupancy calculator, so every block runs at once, as a
// shared sum (sum_slices) needs.
// Returns the launch's plan.
template <typename K, typename... Args>
DecodeParams launch_wave(CudaOps& ops, K* kernel, int threads, const MatmulArgs& pass, size_t smem,
                         int blocks_per_sm, const Args&... args) {
    DecodeParams p = plan_decode(ops, pass, ops.props().multiProcessorCount * blocks_per_sm);
    share_sums_in_one_wave(ops, p);
    const dim3 grid(static_cast<unsigned>(p.groups), static_cast<unsigned>(p.slices));
    NIWA_CUDA_CHECK(launch_overlapping(ops.overlap_launches(), kernel, grid, dim3(threads), smem,
                                       ops.stream(), p, args...));
    return p;
}

// The parts a ResidualAdd launch planned as p leaves each x row's sum of squares in (sum_slices).
inline int residual_parts(const DecodeParams& p) {
    return p.shared_sum ? p.groups * p.slices : p.groups;
}

}  // namespace niwa::kernels::cuda
