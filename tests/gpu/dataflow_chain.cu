// Can a persistent kernel keep a batch-1 step's weights streaming at the copy rate through the
// step's phase changes? The thirtieth pass's chain (kernels/cuda/matmul_chain.cu) ran the step's
// matmuls as one kernel and stayed at 61 % of the copy rate (73 % with no waits at all): each link
// started its loads only after the barrier before it, and loading ahead competed with the link's
// own last tiles. This probe tests the other shape of the plan (docs/BENCHMARKS.md, forty-ninth
// pass): per SM one producer thread streams the SM's share of every link's weights, link after
// link, into a ring of shared-memory slots with bulk copies, waiting only for free slots, never
// for data; consumer warps wait for the link before to finish (a counter a link, all blocks) only
// to stage their x. So the ring, not the barrier, decides when bytes are asked for.
//
// The links are the 27B layout's one-row matmuls in step order (per layer q+k+v or qkv+z, the
// attention or GDN output, gate+up, down; the head last), each a matrix of random ternary codes
// (2 bits a weight, no scales: a row of K inputs is K / 4 bytes). A block takes whole rows, all
// of K (no cross-slice sums): link L's x is the first K outputs of link L-1 (fp16 in global
// memory), quantised to int8 by its absmax, and a row's sum is sum(code x) - sum(x) on dp4a,
// scaled back (and by sqrt(1.5 / K), so the values keep their size link after link) into fp16.
//
// Measured, a line of JSON each: the copy bandwidth (cudaMemcpy device to device, bytes read +
// written), then the chain's time and its weight bytes' share of the copy rate, by ring depth,
// with the waits and without them (wrong results: what the stream and the arithmetic reach), and
// the ring alone (consumers that only free the slots: what the bulk copies reach); then where the
// consumers' time goes: x staged without the rows, and the rows on independent dp4a chains; then the
// rows in 16-row tiles on the tensor cores (u8 codes by s8 x, one AND an operand, as the register
// kernel takes them: kernels/cuda/matmul_decode_x8.cuh), a K chunk of a tile a slot, its sums by one
// warp or split over all eight (their partial sums met in shared memory), and their ring. Then the
// split tiles step by step towards fewer instructions a byte and less a link (the fifty-second pass):
// the codes in fragment order (a bulk copy an 8-row group, not a row), x staged so each mma's B is
// one load, the warps' sums added into shared ints and stored at the link's end, each warp staging
// only its own x with the absmax the link before left (consume_split), K ordered by field so x
// stages with one load a word straight into place, and a warp's units of a chunk unrolled; and
// where a link's time goes in that last form, from the GPU clock stamped at each step (link_times).
// Then (the fifty-third pass) that form with part or all of each link's tiles taken by the blocks at
// run time, one after another from a count a link, so an SM whose bytes come later takes fewer; with
// the 5,120-row links in 8-row tiles whose K is halved across the mma's rows and B's columns; and
// with each warp releasing its own rows. And (the fifty-fourth pass) with each link's x rotated by H_1024
// as the model's ternary inputs are, each warp rotating the 1,024-channel blocks its units touch with no
// barrier (stage_rotated: H_16 on the tensor cores, H_8 in registers and H_8 by shuffles), int8 by each
// block's absmax, checked within a tolerance of the exact rotation (and, to split its cost, the same
// staging and sums without the transform's arithmetic); and with the residual stream and its
// RMS norms as well (the sum of squares added up by the rows' writers, 1 / rms in the output scale); and
// with each GDN layer's recurrent step as a link of its own (consume_delta), its state streamed through
// the ring like weights and checked against a CPU oracle of the delta rule. And (the fifty-fifth and
// fifty-sixth passes) with each block of x rotated once, by one warp that keeps it in registers, the
// link's one scale met at a barrier and each warp quantising its own blocks into the tiles' layout
// ('B'; 'E' with the norms, 'H' with the recurrent steps as well, 'F' without the transform); the
// forms measured most each compiled to a kernel of their own (FixedForm). Built with
// -DNIWA_CONSUMER_WARPS=16 (or 12), forms 'a', 'B', 'F', 'E' and 'H' with sixteen (twelve) consumer warps a
// block instead of eight (the fifty-seventh pass's plan: whether more warps hide the tiles' latencies;
// the rotated forms then rotate down's 17 blocks in one pass, not two). Sixteen leave 96 registers a
// thread (17 warps: five share a scheduler's 16,384) and 'B', 'F' and 'E' spill 24-40 bytes; twelve
// leave 128 and none spills.
// Checked first: the first links' outputs against a CPU oracle of the same arithmetic, bit for bit
// (the rotated forms within a tolerance of the exact rotation, the recurrent steps of their fp32).
// Built and run by tests/gpu/run.sh dataflow: nvcc -O3 -arch=sm_90a -I. dataflow_chain.cu.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "cuda_check.h"
#include "kernels/cuda/bulk_copy.cuh"
#include "kernels/cuda/wait_bound.cuh"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

namespace {

using niwa::kernels::cuda::bulk_copy_async;
using niwa::kernels::cuda::bulk_copy_to_shared;
using niwa::kernels::cuda::globaltimer_ns;
using niwa::kernels::cuda::kWaitTrapNs;
using niwa::kernels::cuda::mbarrier_arrive;
using niwa::kernels::cuda::mbarrier_arrive_expect_tx;
using niwa::kernels::cuda::mbarrier_init;
using niwa::kernels::cuda::mbarrier_wait;
using niwa::kernels::cuda::mma_f16;
using niwa::kernels::cuda::mma_f16_sum16;
using niwa::kernels::cuda::mma_u8s8;
using niwa::kernels::cuda::smem_addr;

// Consumer warps a block: 8, or 12 or 16 when built with -DNIWA_CONSUMER_WARPS=N (then only forms 'a', 'B',
// 'F', 'E', 'H' and the ring alone, 'T', run: the older forms' staging is laid out for eight; the
// recurrent steps give eight warps two channels of a tile each and the others none).
#ifndef NIWA_CONSUMER_WARPS
#define NIWA_CONSUMER_WARPS 8
#endif
constexpr int kConsumerWarps = NIWA_CONSUMER_WARPS;
static_assert(kConsumerWarps == 8 || kConsumerWarps == 12 || kConsumerWarps == 16,
              "eight, twelve or sixteen consumer warps");
constexpr int kThreads = 32 * (1 + kConsumerWarps);  // warp 0 is the producer
constexpr int kSlotBytes = 20 * 1024;
constexpr int kMaxSlots = 9;
constexpr int kMaxK = 17408;
constexpr int kMaxWordsPerThread = kMaxK / 4 / (32 * kConsumerWarps) + 1;  // x staging, 4 inputs a word
constexpr int kMaxLinks = 640;
// Form 'D''s chain (the step's links with a GDN layer's recurrent step after its qkv+z) from here in kLinks.
constexpr int kDeltaBase = 320;
// Form 'D': a GDN layer's state, 48 value heads of 128 x 128 fp32 ([head][value channel][key channel]),
// in tiles of 16 value channels (8 KB), 8 a head; its q and k heads (16 of 128 channels each, value
// head h taking key head h % 16) and v (48 x 128) at the start of the qkv+z link's rows.
constexpr int kDeltaHeads = 48, kDeltaKeyHeads = 16, kDeltaTileCols = 16;
constexpr int kDeltaTilesPerHead = 128 / kDeltaTileCols, kDeltaTiles = kDeltaHeads * kDeltaTilesPerHead;
constexpr int kDeltaTileFloats = kDeltaTileCols * 128;
// Where a link's time goes (consume_split with Chain::stamps): the GPU clock when thread 32 has seen
// the link before counted done (its wait and the barrier after it), has staged its x, when the
// block's tiles are done (the link's end's first barrier), its rows stored (the second), and after
// the release that counts it done. And staging's steps by the SM's clock (clock64, as the global one
// ticks in steps near a microsecond): seen, x's first chunk's loads landed (cycle_stamp's `dep`), or in
// form 'B' and its kin the warp's blocks rotated and the barrier that meets x's absmax passed (a stamp
// for their loads spills); staged.
enum LinkStamp {
    kSeen,
    kStaged,
    kTiles,
    kStored,
    kReleased,
    kCycSeen,
    kCycLoaded,
    kCycRotated,
    kCycMet,
    kCycStaged,
    kStamps
};
// A block's rows of a link at most: the head's 248,320 / 132 in whole 8s is 1,888; with tiles handed
// out at run time (Chain::tail) a block takes up to kMaxTiles of 16 rows.
constexpr int kMaxTiles = 160;
constexpr int kMaxShareRows = 16 * kMaxTiles;
// The tensor-core form's ring: fewer, larger slots in the same shared memory (a 16-row tile of
// 6,144 inputs with its rows' padding fills one).
constexpr int kMmaSlots = 7;
constexpr int kMmaSlotBytes = 16 * (6144 / 4 + 32);
constexpr int kMostUnits = (kMmaSlotBytes / 16 - 32) / 32;  // 128-input units a slot holds of a tile's rows
// Form 'R': a link's chunks at most (K 17,408 in whole-8 chunks of 48 units), a warp's blocks' scales
// and split kept a chunk in the block's partial sums' memory (3 words each).
constexpr int kRotChunks = 3;
// Form 'B' and its kin: a warp rotates two blocks of x a pass; the passes that take the widest x's.
constexpr int kRotPasses = (kMaxK / 1024 + 2 * kConsumerWarps - 1) / (2 * kConsumerWarps);
// Form 'N': the residual stream's width, the model's hidden size.
constexpr int kNormWidth = 5120;
static_assert(3 * kRotChunks * kConsumerWarps <= 2 * kConsumerWarps * 16, "form R's chunk notes fit");
static_assert(kMmaSlots * kMmaSlotBytes <= kMaxSlots * kSlotBytes,
              "the tensor-core ring fits the ring's memory");

struct Link {
    const uint32_t* w;  // [n][k / 16]: weight 16 v + 4 j + s of a row at bits 8 j + 2 s of word v
    const uint8_t* wt;  // the same codes in fragment order (tile_codes): [n / 8][k / 128][32 lanes][8 bytes]
    const uint8_t* wf;  // and in fragment order with K by field (tile_codes_by_field)
    __half* y;          // [n]
    int k, n;
    // sqrt(1.5 / k): a row of k ternary weights, 2 / 3 of them nonzero, grows x's rms by sqrt(2 k / 3).
    float rk;
    // Form 'D': a GDN layer's recurrent step instead of a matmul (k 0, n 6,144: o): its state, and each
    // value head's decay exp(g) and beta ([head][2]; the alpha and beta matmuls not modelled).
    float* state;
    const float* gb;
};

__constant__ Link kLinks[kMaxLinks];

struct Chain {
    int first, links;  // links [first, first + links) of kLinks
    int base;          // the chain's first link in kLinks (0, or kDeltaBase for form 'D')
    const __half* x0;  // link 0's x [k0]
    unsigned* done;    // [kMaxLinks]: blocks finished with link l of kLinks, zero before a launch
    unsigned* amax;    // [kMaxLinks] after done: link l's x's absmax (float bits) from link l - 1's blocks
    float x0_amax;     // link 0's
    uint64_t* stamps;  // consume_split, when set: [kMaxLinks][blocks][kStamps] thread 32's clock (link_stamp)
    int slots;         // ring depth, 2 .. kMaxSlots
    bool wait;         // false: stage x without waiting (wrong results; the ceiling)
    bool stage;        // false: no x staged (wrong results)
    bool rows;         // false: no rows summed, the slots only freed (with !stage: the ring's own rate)
    bool ilp;          // rows summed by row_dot_ilp (independent chains) instead of row_dot
    bool mma;          // 16-row tiles on the tensor cores (tile_chunk_product), a warp a tile
    bool split;        // with mma: each chunk's K split over all the warps, their sums met in shared memory
    bool tiled;        // with mma: the codes from Link::wt, a bulk copy an 8-row group of a chunk
    bool paired;       // with mma: x staged so each mma's two B words are adjacent (stage_x)
    bool deferred;     // with split: the warps' sums added into a row's shared int, stored at the link's end
    bool local;        // consume_split: as deferred, with each warp staging its own x (nothing block-wide)
    bool by_field;     // with local: the codes from Link::wf, x staged in input order (a load a word)
    bool unrolled;     // with by_field: chunks in 8s of units (TileChunks' whole8), a warp's N units of a
                       // chunk unrolled (tile_chunk_product_n)
    // With unrolled: the share of a link's 16-row tiles (percent) handed out at run time. Each block
    // streams the same number of the others first, then takes one tile after another from the
    // link's count in Chain::next until none is left, so blocks whose bytes come sooner take more.
    int tail;
    int* next;  // [kMaxLinks] after amax: tiles of link l's run-time share taken, zero before a launch
    // consume_split: each warp releases its own rows (done counts a block's warps), with no barrier
    // after the rows' stores; x's sum by link in three shared ints.
    bool warp_release;
    // With a tail: the links of fewer than 4 tiles a block (the 5,120-row ones) in 8-row tiles, each
    // with K in halves: the mma's rows 8-15 are the same 8 rows' second half of K, taken against
    // x's second half in B's column 1 (halved), so a tile streams half the bytes for the same work;
    // those of K at least `halve` (0: none).
    int halve;
    // With a tail (form 'R'): each link's x rotated as the model's ternary inputs are, H_1024 a block of
    // 1,024 channels (MODEL.md, the Hadamard fold; its signs s folded offline into the norms or the
    // rows before), by each warp for the blocks its units touch (stage_rotated), with no barrier;
    // quantised by each block's absmax, the warp's sums kept a block apart and met in floats.
    bool rotate;
    bool skip_transform;  // form 'S': 'R' without H_1024's arithmetic (wrong results: what the rest costs)
    // With rotate (form 'N'): the model's residual stream and RMS norms around the rotation. The links of
    // 5,120 rows (the attention or GDN output, down) add their rows into resid and its new squares into
    // sumsq[l + 1]; the links of 5,120 inputs (q+k+v or qkv+z, gate+up, the head) take x = resid * gamma
    // (gamma: the norm's weight with the rotation's signs folded in), 1 / rms in their output scale.
    bool norms;
    float* resid;  // [kNormWidth], fp32; link 0's x before the launch
    // [kMaxLinks]: link l's resid's sum of squares from link l - 1's rows, zero before a launch; link 0's
    // in x0_sumsq.
    float* sumsq;
    float x0_sumsq;
    const __half* gamma;  // [kNormWidth]
};

// Whether link L is taken in 8-row tiles with K in halves (Chain::halve).
__device__ __forceinline__ bool halved(const Chain& c, const Link& L) {
    return c.halve > 0 && L.k >= c.halve && L.n / 16 < 4 * static_cast<int>(gridDim.x);
}

__host__ __device__ inline int share_begin(int n, int b, int blocks) {
    return static_cast<int>(static_cast<int64_t>(n) * b / blocks);
}

// The first row of block b's share of a link's n rows in the tensor-core form: whole 8-row units, so
// no block has more than 8 rows over another (block b's share ends where block b + 1's begins).
__host__ __device__ inline int tile_share_begin(int n, int b, int blocks) {
    return 8 * share_begin(n / 8, b, blocks);
}

// Rows a slot holds of a row of k inputs.
__host__ __device__ inline int slot_rows(int k) {
    return kSlotBytes / (k / 4);
}

// A link's tiles in the tensor-core form: 16 rows (the last of a block's share may have 8), each in
// `chunks` K chunks of at most `units` 128-input units, one chunk a slot, its rows `stride` bytes
// apart there: 32 bytes of padding a row, so the 8 rows of a fragment load meet different banks.
struct TileChunks {
    int chunks, units, stride;
    // whole8: chunks of the most units a slot holds, all but the last, in 8s (so each of the eight
    // warps takes the same units of a chunk when K is a multiple of 1,024).
    __host__ __device__ explicit TileChunks(int k, bool whole8 = false) {
        const int all = k / 128;
        chunks = (all + kMostUnits - 1) / kMostUnits;
        units = whole8 ? min(all, kMostUnits / 8 * 8) : (all + chunks - 1) / chunks;
        if (whole8) chunks = (all + units - 1) / units;
        stride = 32 * units + 32;
    }
    __host__ __device__ int units_of(int chunk, int k) const { return min(units, k / 128 - chunk * units); }
};

__device__ __forceinline__ unsigned load_acquire(const unsigned* p) {
    unsigned v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ void consumers_sync() {
    asm volatile("bar.sync 1, %0;" ::"n"(32 * kConsumerWarps) : "memory");
}

// The consumers wait until every block (or every warp of every block) has counted link l done: thread 32
// polls, the others wait at the barrier after it (which orders their loads of the link's outputs after its
// acquire).
__device__ void wait_for_link(const Chain& c, int l) {
    if (threadIdx.x == 32) {
        const uint64_t start = globaltimer_ns();
        const unsigned counts = gridDim.x * (c.warp_release ? kConsumerWarps : 1);
        while (load_acquire(&c.done[l]) < counts) {
            if (globaltimer_ns() - start > kWaitTrapNs) __trap();
        }
    }
    consumers_sync();
}

// Counts the block done with link l: a release, after a barrier that ordered every consumer's
// stores of the link's outputs before it.
__device__ __forceinline__ void count_link_done(const Chain& c, int l) {
    asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(&c.done[l]), "r"(1u) : "memory");
}

template <typename T>
__device__ __forceinline__ T warp_sum(T v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

// x of link L into xs as int8 words: word 4 v + s holds inputs 16 v + 4 j + s (j = 0..3) as its
// bytes, the order the weight word v's fields take after a shift by 2 s. Paired, that word is at
// 8 (v / 2) + 2 s + v % 2 instead: field s of words v and v + 1 (v even) side by side, the B
// operand of tile_chunk_product's mma s in one 8-byte load. Returns the scale.
__device__ float stage_x(const __half* src, int k, int8_t* xs, bool paired, int* sum_x, float* red_f,
                         int* red_i) {
    const int t = static_cast<int>(threadIdx.x) - 32, words = k / 4;
    __half v[kMaxWordsPerThread][4];
    float m = 0.0f;
#pragma unroll
    for (int i = 0; i < kMaxWordsPerThread; ++i) {
        const int word = t + i * 32 * kConsumerWarps;
        if (word < words) {
            const int base = 16 * (word >> 2) + (word & 3);
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                v[i][j] =
                    __ushort_as_half(__ldcg(reinterpret_cast<const unsigned short*>(src) + base + 4 * j));
                m = fmaxf(m, fabsf(__half2float(v[i][j])));
            }
        }
    }
    m = warp_max(m);
    if ((t & 31) == 0) red_f[t >> 5] = m;
    consumers_sync();
    m = 0.0f;
#pragma unroll
    for (int w = 0; w < kConsumerWarps; ++w) m = fmaxf(m, red_f[w]);
    const float inv = m > 0.0f ? 127.0f / m : 0.0f, scale = m / 127.0f;
    int s = 0;
#pragma unroll
    for (int i = 0; i < kMaxWordsPerThread; ++i) {
        const int word = t + i * 32 * kConsumerWarps;
        if (word < words) {
            uint32_t packed = 0;
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const int q = __float2int_rn(__half2float(v[i][j]) * inv);
                s += q;
                packed |= (static_cast<uint32_t>(q) & 0xffu) << (8 * j);
            }
            const int v = word >> 2, at = paired ? 8 * (v >> 1) + 2 * (word & 3) + (v & 1) : word;
            reinterpret_cast<uint32_t*>(xs)[at] = packed;
        }
    }
    s = warp_sum(s);
    if ((t & 31) == 0) red_i[t >> 5] = s;
    consumers_sync();
    s = 0;
#pragma unroll
    for (int w = 0; w < kConsumerWarps; ++w) s += red_i[w];
    *sum_x = s;
    return scale;
}

// Field s (0..3) of a code word: its codes 4 j + s as the bytes j. Codes 0..2 read as signed bytes
// are themselves; x's bytes are signed.
__device__ __forceinline__ int code_field(uint32_t w, int s) {
    return static_cast<int>((w >> (2 * s)) & 0x03030303u);
}

// One row's sum(code x) over k inputs (a warp; lane l takes words l, l + 32, ...).
__device__ __forceinline__ int row_dot(const uint32_t* row, const uint4* xs, int words, int lane) {
    int acc = 0;
    for (int v = lane; v < words; v += 32) {
        const uint32_t w = row[v];
        const uint4 x = xs[v];
        acc = __dp4a(code_field(w, 0), static_cast<int>(x.x), acc);
        acc = __dp4a(code_field(w, 1), static_cast<int>(x.y), acc);
        acc = __dp4a(code_field(w, 2), static_cast<int>(x.z), acc);
        acc = __dp4a(code_field(w, 3), static_cast<int>(x.w), acc);
    }
    return warp_sum(acc);
}

// row_dot with independent dependency chains: two words a lane an iteration (v and v + 32), four
// accumulators, so the loads of an iteration and its dp4a chains overlap (k / 16 a multiple of 64).
__device__ __forceinline__ int row_dot_ilp(const uint32_t* row, const uint4* xs, int words, int lane) {
    int a0 = 0, a1 = 0, a2 = 0, a3 = 0;
#pragma unroll 2
    for (int v = lane; v < words; v += 64) {
        const uint32_t w0 = row[v], w1 = row[v + 32];
        const uint4 x0 = xs[v], x1 = xs[v + 32];
        a0 = __dp4a(code_field(w0, 0), static_cast<int>(x0.x), a0);
        a1 = __dp4a(code_field(w0, 1), static_cast<int>(x0.y), a1);
        a2 = __dp4a(code_field(w0, 2), static_cast<int>(x0.z), a2);
        a3 = __dp4a(code_field(w0, 3), static_cast<int>(x0.w), a3);
        a0 = __dp4a(code_field(w1, 0), static_cast<int>(x1.x), a0);
        a1 = __dp4a(code_field(w1, 1), static_cast<int>(x1.y), a1);
        a2 = __dp4a(code_field(w1, 2), static_cast<int>(x1.z), a2);
        a3 = __dp4a(code_field(w1, 3), static_cast<int>(x1.w), a3);
    }
    return warp_sum((a0 + a1) + (a2 + a3));
}

// A row's y in the tensor-core forms, from its sum64 (64 times sum(code x), exact) less x's sum (the
// codes' offset: code = weight + 1), times the row's scale.
__device__ __forceinline__ float row_y(int s64, int sum_x, float ys) {
    return static_cast<float>((s64 >> 6) - sum_x) * ys;
}

// 64 times a column's sum(code x) of the tile-chunk sums d (the four fields') at C element i (rows g:
// i = 0, 1; g + 8: 2, 3), exact in int32.
__device__ __forceinline__ int sum64(const int (&d)[4][4], int i) {
    return ((d[0][i] * 4 + d[1][i]) * 4 + d[2][i]) * 4 + d[3][i];
}

// One 128-input unit of a 16-row tile on the tensor cores: d[s] += field s of the lane's codes
// (a: rows g, b: rows g + 8, two words each) times x's B words b0[s], b1[s] for mma s.
__device__ __forceinline__ void unit_product(uint2 a, uint2 b, const uint32_t (&b0)[4],
                                             const uint32_t (&b1)[4], int (&d)[4][4]) {
#pragma unroll
    for (int s = 0; s < 4; ++s) {
        const uint32_t m = 0x03030303u << (2 * s);
        mma_u8s8(d[s], a.x & m, b.x & m, a.y & m, b.y & m, b0[s], b1[s], d[s]);
    }
}

// acc[s] += one K chunk of a 16-row tile times x on the tensor cores (m16n8k32, u8 codes by s8 x):
// mma s takes field s of every code byte (the code times 4^s, kept in place by one AND), so
// sum(code x) = (64 acc[0] + 16 acc[1] + 4 acc[2] + acc[3]) / 64. Lane (g, t) takes words 8 u + 2 t and
// 8 u + 2 t + 1 of unit u of rows g and g + 8 (A: k slots 4 t.. and 16 + 4 t..), and x's words
// 4 (8 u + 2 t) .. + 7 as stage_x lays them out: word 4 v + s holds the x of word v's field s, B's
// column for mma s. Every column of B is x, so each lane's d[0] is row g's sum and d[2] row g + 8's.
// The lane's 8 bytes of rows g and g + 8 of the chunk's first unit are at `wa` and `wb`, the next
// unit's `step` bytes on (32 in the row layout, 256 in the fragment order); x as stage_x laid it
// out, `paired` or not.
template <bool Paired>
__device__ __forceinline__ void tile_chunk_product(const uint8_t* wa, const uint8_t* wb, int step,
                                                   const int8_t* xs, int units, int lane, int (&acc)[4][4]) {
    const int t = lane & 3;
    const uint8_t* xg = reinterpret_cast<const uint8_t*>(xs) + 32 * t;
#pragma unroll 4
    for (int u = 0; u < units; ++u) {
        const uint2 a = *reinterpret_cast<const uint2*>(wa + step * u);
        const uint2 b = *reinterpret_cast<const uint2*>(wb + step * u);
        const uint4 x0 = *reinterpret_cast<const uint4*>(xg + 128 * u);
        const uint4 x1 = *reinterpret_cast<const uint4*>(xg + 128 * u + 16);
        const uint32_t b0[4] = {x0.x, Paired ? x0.z : x0.y, Paired ? x1.x : x0.z, Paired ? x1.z : x0.w};
        const uint32_t b1[4] = {Paired ? x0.y : x1.x, Paired ? x0.w : x1.y, Paired ? x1.y : x1.z, x1.w};
        unit_product(a, b, b0, b1, acc);
    }
}

// tile_chunk_product of exactly N units, paired x, in fragment order, unrolled: every load first,
// then the units' mmas on two sets of sums. By turns (even units into s0, odd ones into s1), so no mma
// waits on the one before it for more than every other unit; or, Split (form 'R'), the units before
// `split` into s0 and the rest into s1, since each 1,024-channel block's x has its own scale there (a
// branch the whole warp takes the same way).
template <int N, bool Split = false>
__device__ __forceinline__ void tile_chunk_product_n(const uint8_t* wa, const uint8_t* wb, const int8_t* xs,
                                                     int lane, int (&s0)[4][4], int (&s1)[4][4],
                                                     int split = 0) {
    const uint8_t* xg = reinterpret_cast<const uint8_t*>(xs) + 32 * (lane & 3);
    uint2 a[N], b[N];
    uint4 x0[N], x1[N];
#pragma unroll
    for (int u = 0; u < N; ++u) {
        a[u] = *reinterpret_cast<const uint2*>(wa + 256 * u);
        b[u] = *reinterpret_cast<const uint2*>(wb + 256 * u);
        x0[u] = *reinterpret_cast<const uint4*>(xg + 128 * u);
        x1[u] = *reinterpret_cast<const uint4*>(xg + 128 * u + 16);
    }
#pragma unroll
    for (int u = 0; u < N; ++u) {
        const uint32_t b0[4] = {x0[u].x, x0[u].z, x1[u].x, x1[u].z},
                       b1[4] = {x0[u].y, x0[u].w, x1[u].y, x1[u].w};
        if (Split ? u < split : u % 2 == 0)
            unit_product(a[u], b[u], b0, b1, s0);
        else
            unit_product(a[u], b[u], b0, b1, s1);
    }
}

// Form 'R''s B fragment of H_16 (m16n8k16, fp16 +-1): K slots 2 t + e and 2 t + 8 + e of lane (g, t) are
// channels 4 t + e and 4 t + 2 + e of a 16-channel group (so a lane loads its four channels with one
// 8-byte load), and output column g of n-tile nt is channel o = 4 (g >> 1) + 2 nt + (g & 1) (so lane (g, t)
// ends with channels 4 t .. 4 t + 3 of the rows g and g + 8). The pair of K slots from channel i: H[i][o],
// H[i + 1][o]. `one`: the fp16 bits of the entries' magnitude (1, or 1 / 32 = 0x2800 to normalise in
// the mma).
__device__ __forceinline__ uint32_t h16_pair(int i, int o, uint32_t one) {
    const uint32_t lo = (__popc(i & o) & 1) ? one | 0x8000u : one,
                   hi = (__popc((i + 1) & o) & 1) ? one | 0x8000u : one;
    return lo | hi << 16;
}

// The lane's B registers of both n-tiles (h16_pair's columns).
__device__ __forceinline__ void h16_fragment(int lane, uint32_t one, uint32_t (&bh)[2][2]) {
    const int g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int nt = 0; nt < 2; ++nt) {
        const int o = 4 * (g >> 1) + 2 * nt + (g & 1);
        bh[nt][0] = h16_pair(4 * t, o, one);
        bh[nt][1] = h16_pair(4 * t + 2, o, one);
    }
}

// The four low bytes of a, b, c, d in one word (q's two's complement, from the bits of z inv + 1.5 * 2^23,
// fused as form 'R' rounds or not as quantise4 does).
__device__ __forceinline__ uint32_t low_bytes(uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
    return __byte_perm(__byte_perm(a, b, 0x0040), __byte_perm(c, d, 0x0040), 0x5410);
}

// load_blocks: x's channels as the mmas take them, v[m] row g's channels 4 t, 4 t + 1 | row g + 8's | row
// g's 4 t + 2, 4 t + 3 | row g + 8's (A's registers); transform_blocks: v rotated, emit(m, z[m]) a group.
__device__ __forceinline__ void load_blocks(const __half* src, const float* resid, const __half* gamma,
                                            int ba, int bb, int lane, uint32_t (&v)[8][4]) {
    const int g = lane >> 2, t = lane & 3;
    auto h2 = [](uint32_t u) { return *reinterpret_cast<__half2*>(&u); };
    auto u32 = [](__half2 h) { return *reinterpret_cast<uint32_t*>(&h); };
    // Channels i .. i + 3 of x as fp16: src's, or with resid (form 'N') resid's times gamma's.
    auto load4 = [&](int i) {
        if (resid == nullptr) return __ldcg(reinterpret_cast<const uint2*>(src + i));
        const float4 r = __ldcg(reinterpret_cast<const float4*>(resid + i));
        const uint2 gw = __ldg(reinterpret_cast<const uint2*>(gamma + i));
        const float2 g01 = __half22float2(h2(gw.x)), g23 = __half22float2(h2(gw.y));
        return make_uint2(u32(__floats2half2_rn(r.x * g01.x, r.y * g01.y)),
                          u32(__floats2half2_rn(r.z * g23.x, r.w * g23.y)));
    };
#pragma unroll
    for (int m = 0; m < 8; ++m) {
        const uint2 a = load4(1024 * ba + 128 * g + 16 * m + 4 * t);
        const uint2 b = bb >= 0 ? load4(1024 * bb + 128 * g + 16 * m + 4 * t) : make_uint2(0u, 0u);
        v[m][0] = a.x;
        v[m][1] = b.x;
        v[m][2] = a.y;
        v[m][3] = b.y;
    }
}

// H_8 over the 16-channel groups (registers) and over the units (shuffles) of v, in place: all of
// H_1024 but H_16 within each group.
__device__ __forceinline__ void mix_blocks(uint32_t (&v)[8][4], int lane) {
    auto h2 = [](uint32_t u) { return *reinterpret_cast<__half2*>(&u); };
    auto u32 = [](__half2 h) { return *reinterpret_cast<uint32_t*>(&h); };
    // H_8 over the group: pairs m, m | d in registers.
#pragma unroll
    for (int d = 1; d < 8; d <<= 1) {
#pragma unroll
        for (int m = 0; m < 8; ++m) {
            if (m & d) continue;
#pragma unroll
            for (int r = 0; r < 4; ++r) {
                const __half2 lo = h2(v[m][r]), hi = h2(v[m | d][r]);
                v[m][r] = u32(__hadd2(lo, hi));
                v[m | d][r] = u32(__hsub2(lo, hi));
            }
        }
    }
    // H_8 over the unit: lanes 4 d apart; the lower keeps its value plus the partner's, the upper the
    // partner's less its own.
#pragma unroll
    for (int d = 4; d <= 16; d <<= 1) {
        const __half2 sign = __float2half2_rn((lane & d) ? -1.0f : 1.0f);
#pragma unroll
        for (int m = 0; m < 8; ++m)
#pragma unroll
            for (int r = 0; r < 4; ++r)
                v[m][r] = u32(__hfma2(sign, h2(v[m][r]), h2(__shfl_xor_sync(0xffffffffu, v[m][r], d))));
    }
}

template <typename Emit>
__device__ __forceinline__ void transform_blocks(uint32_t (&v)[8][4], int lane, bool transform, Emit&& emit) {
    auto h2 = [](uint32_t u) { return *reinterpret_cast<__half2*>(&u); };
    if (transform) mix_blocks(v, lane);
    // H_16 within each group on the tensor cores.
    uint32_t bh[2][2];
    h16_fragment(lane, 0x3c00u, bh);
    // Group m's H_16 into z: rows g's channels 4 t .. + 3 in z[0..3], rows g + 8's in z[4..7].
    auto group = [&](int m, float(&z)[8]) {
        if (!transform) {
            const float2 a0 = __half22float2(h2(v[m][0])), a1 = __half22float2(h2(v[m][2]));
            const float2 b0 = __half22float2(h2(v[m][1])), b1 = __half22float2(h2(v[m][3]));
            z[0] = a0.x, z[1] = a0.y, z[2] = a1.x, z[3] = a1.y, z[4] = b0.x, z[5] = b0.y, z[6] = b1.x,
            z[7] = b1.y;
            return;
        }
        float d[2][4] = {};
#pragma unroll
        for (int nt = 0; nt < 2; ++nt)
            mma_f16(d[nt], v[m][0], v[m][1], v[m][2], v[m][3], bh[nt][0], bh[nt][1]);
        z[0] = d[0][0], z[1] = d[0][1], z[2] = d[1][0], z[3] = d[1][1];
        z[4] = d[0][2], z[5] = d[0][3], z[6] = d[1][2], z[7] = d[1][3];
    };
#pragma unroll
    for (int m = 0; m < 8; ++m) {
        float z[8];
        group(m, z);
        emit(m, z);
    }
}

// Blocks ba and bb (-1: none) of x (1,024 fp16 channels each at src + 1,024 b, or with resid the
// residual's times gamma's) rotated by H_1024 (unnormalised) by one warp, into z: z[m][0..3] unit g of
// ba's channels 16 m + 4 t .. + 3, z[m][4..7] unit g of bb's. Rows g of the mmas below are unit g of ba,
// rows g + 8 unit g of bb; H_1024 = H_8 over the unit (lanes' g, shuffles) x H_8 over the 16-channel
// group m (registers) x H_16 within the group (an fp16 mma a group and n-tile, fp32 sums), as
// popcount(r & c) splits over the bit fields. Without `transform` (form 'S', wrong results: what the
// rest of the staging costs), x as loaded.
__device__ __forceinline__ void rotate_blocks(const __half* src, const float* resid, const __half* gamma,
                                              int ba, int bb, int lane, bool transform, float (&z)[8][8]) {
    uint32_t v[8][4];
    load_blocks(src, resid, gamma, ba, bb, lane, v);
    transform_blocks(v, lane, transform, [&](int m, const float(&zm)[8]) {
#pragma unroll
        for (int i = 0; i < 8; ++i) z[m][i] = zm[i];
    });
}

// Form 'R''s staging by one warp, nothing shared with the others: blocks ba and bb of x rotated
// (rotate_blocks; the link's output scale takes H_1024's 1 / 32) and quantised to int8 by each block's
// absmax, into xw as consume_split lays x out (word 32 u + 8 t + m of unit u holds channels 16 m + 4 t ..
// + 3). Every warp that stages a block computes the same bytes, so two may store them. Out: each
// block's scale (absmax / 127) and its q-sum over the units at positions [pa0, pa1) of ba and [0, pb1)
// of bb (the codes' offset: code = weight + 1).
__device__ void stage_rotated(const __half* src, const float* resid, const __half* gamma, int ba, int bb,
                              int pa0, int pa1, int pb1, uint32_t* xw, int lane, float& sa, float& sb,
                              int& oa, int& ob, bool transform) {
    const int g = lane >> 2, t = lane & 3;
    float ma = 0.0f, mb = 0.0f, z[8][8];
    rotate_blocks(src, resid, gamma, ba, bb, lane, transform, z);
#pragma unroll
    for (int m = 0; m < 8; ++m) {
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            ma = fmaxf(ma, fabsf(z[m][i]));
            mb = fmaxf(mb, fabsf(z[m][4 + i]));
        }
    }
    ma = warp_max(ma);
    mb = warp_max(mb);
    // q = rint(z 127 / absmax) in the low byte of fmaf(z, inv, 1.5 * 2^23)'s bits (|q| <= 127).
    const float ia = ma > 0.0f ? 127.0f / ma : 0.0f, ib = mb > 0.0f ? 127.0f / mb : 0.0f;
    constexpr float kRound = 12582912.0f;
    uint32_t wa[8], wb[8];
    int qa = 0, qb = 0;
#pragma unroll
    for (int m = 0; m < 8; ++m) {
        auto q = [&](float x, float inv) { return __float_as_uint(fmaf(x, inv, kRound)); };
        wa[m] = low_bytes(q(z[m][0], ia), q(z[m][1], ia), q(z[m][2], ia), q(z[m][3], ia));
        wb[m] = low_bytes(q(z[m][4], ib), q(z[m][5], ib), q(z[m][6], ib), q(z[m][7], ib));
        qa = __dp4a(static_cast<int>(wa[m]), 0x01010101, qa);
        qb = __dp4a(static_cast<int>(wb[m]), 0x01010101, qb);
    }
    uint4* da = reinterpret_cast<uint4*>(xw + 32 * (8 * ba + g) + 8 * t);
    da[0] = make_uint4(wa[0], wa[1], wa[2], wa[3]);
    da[1] = make_uint4(wa[4], wa[5], wa[6], wa[7]);
    if (bb >= 0) {
        uint4* db = reinterpret_cast<uint4*>(xw + 32 * (8 * bb + g) + 8 * t);
        db[0] = make_uint4(wb[0], wb[1], wb[2], wb[3]);
        db[1] = make_uint4(wb[4], wb[5], wb[6], wb[7]);
    }
    sa = ma / 127.0f;
    sb = mb / 127.0f;
    oa = warp_sum(g >= pa0 && g < pa1 ? qa : 0);
    ob = warp_sum(g < pb1 ? qb : 0);
}

// Form 'B''s rotation by one warp of blocks ba and bb (-1: none) of x, loaded (load_blocks) into v:
// rotated and normalised (the 1 / 32) into z, z[m] = {row g's channels 16 m + 4 t, + 1 | 16 m + 4 t + 2,
// + 3 (unit g of block ba), the same of row g + 8 (bb's)}, each an fp16 pair. H_16's mmas sum in fp16
// with B +-1 / 32, so each n-tile's pair is already z's word (summed in fp32 and converted, the
// fifty-sixth pass measured 2.4 points less). Without `transform` (form 'F', wrong results), x as
// loaded. Returns the lane's largest |z| of each half of a pair.
__device__ __forceinline__ __half2 rotate_pair(uint32_t (&v)[8][4], int lane, bool transform,
                                               uint32_t (&z)[8][4]) {
    auto h2 = [](uint32_t u) { return *reinterpret_cast<__half2*>(&u); };
    if (transform) mix_blocks(v, lane);
    uint32_t bh[2][2];
    h16_fragment(lane, 0x2800u, bh);
    __half2 mh = __float2half2_rn(0.0f);
#pragma unroll
    for (int m = 0; m < 8; ++m) {
        uint32_t d[2][2] = {{v[m][0], v[m][1]}, {v[m][2], v[m][3]}};
        if (transform)
#pragma unroll
            for (int nt = 0; nt < 2; ++nt)
                mma_f16_sum16(d[nt], v[m][0], v[m][1], v[m][2], v[m][3], bh[nt][0], bh[nt][1]);
        z[m][0] = d[0][0], z[m][1] = d[1][0], z[m][2] = d[0][1], z[m][3] = d[1][1];
#pragma unroll
        for (int i = 0; i < 4; ++i) mh = __hmax2(mh, __habs2(h2(z[m][i])));
    }
    return mh;
}

// Four channels (two fp16 pairs, lo's first) as int8 codes q = rint(x inv) in one word, rounded as the
// oracle rounds (the product, then to the nearest even): the low byte of x inv + 1.5 2^23's bits
// (|q| <= 127).
__device__ __forceinline__ uint32_t quantise4(uint32_t lo, uint32_t hi, float inv) {
    const float2 a = __half22float2(*reinterpret_cast<__half2*>(&lo)),
                 b = __half22float2(*reinterpret_cast<__half2*>(&hi));
    auto q = [&](float x) { return __float_as_uint(__fadd_rn(__fmul_rn(x, inv), 12582912.0f)); };
    return low_bytes(q(a.x), q(a.y), q(b.x), q(b.y));
}

// The tensor-core form's producer: each link's share of the block in tiles (whole 8-row units, so
// a block's share is within 8 rows of the others'), a K chunk a slot, a bulk copy a row (or, tiled,
// an 8-row group: its chunk is contiguous in Link::wt, and lands at group * units * 256 in the slot).
// With a tail (Chain::tail), 16-row tiles: the block's fixed ones, then those it takes from the
// link's count (the next count in flight while a tile streams), each slot's tile in tile_of, and a
// slot with no bytes and tile -1 after the block's last tile of a link.
__device__ void produce_tiles(const Chain& c, uint8_t* ring, uint64_t* full, uint64_t* empty, int* tile_of) {
    const int b = static_cast<int>(blockIdx.x), blocks = static_cast<int>(gridDim.x);
    uint32_t seq = 0;  // chunks so far: slot seq % slots, its round seq / slots
    auto next_slot = [&] {
        const int slot = static_cast<int>(seq % c.slots);
        const uint32_t round = seq / c.slots;
        if (round > 0) mbarrier_wait(&empty[slot], (round - 1) & 1);
        ++seq;
        return slot;
    };
    for (int l = c.first; l < c.first + c.links; ++l) {
        const Link& L = kLinks[l];
        if (L.state != nullptr) {
            // Form 'D': the block's share of the layer's state tiles, one a slot, then the end.
            const int t0 = share_begin(kDeltaTiles, b, blocks), t1 = share_begin(kDeltaTiles, b + 1, blocks);
            for (int t = t0; t < t1; ++t) {
                const int slot = next_slot();
                tile_of[slot] = t;
                mbarrier_arrive_expect_tx(&full[slot], kDeltaTileFloats * 4);
                bulk_copy_async(ring + slot * kMmaSlotBytes,
                                L.state + static_cast<size_t>(t) * kDeltaTileFloats, kDeltaTileFloats * 4,
                                &full[slot]);
            }
            const int slot = next_slot();
            tile_of[slot] = -1;
            mbarrier_arrive(&full[slot]);
            continue;
        }
        // Halved, a tile is an 8-row group's two halves of K, each chunk's units from both.
        const bool hv = halved(c, L);
        const int kt = hv ? L.k / 2 : L.k;
        const TileChunks tc(kt, c.unrolled);
        const uint8_t* w = reinterpret_cast<const uint8_t*>(L.w);
        auto produce_tile = [&](int r, int rows) {
            for (int ch = 0; ch < tc.chunks; ++ch) {
                const int slot = next_slot();
                tile_of[slot] = r;
                const uint32_t bytes = 32 * tc.units_of(ch, kt);
                const int copies = hv ? 2 : rows / 8;
                mbarrier_arrive_expect_tx(&full[slot], (c.tiled ? 8 * copies : rows) * bytes);
                if (c.tiled) {
                    // Copy i: the 8-row group r / 8 + i, or halved group r / 8's units from half i.
                    for (int i = 0; i < copies; ++i)
                        bulk_copy_async(ring + slot * kMmaSlotBytes + i * tc.units * 256,
                                        (c.by_field ? L.wf : L.wt) +
                                            static_cast<int64_t>(r / 8 + (hv ? 0 : i)) * (L.k * 2) +
                                            256 * ((hv ? i * kt / 128 : 0) + ch * tc.units),
                                        8 * bytes, &full[slot]);
                    continue;
                }
                for (int i = 0; i < rows; ++i)
                    bulk_copy_async(ring + slot * kMmaSlotBytes + i * tc.stride,
                                    w + static_cast<int64_t>(r + i) * (L.k / 4) + 32 * ch * tc.units, bytes,
                                    &full[slot]);
            }
        };
        if (c.tail == 0) {
            const int r0 = tile_share_begin(L.n, b, blocks), r1 = tile_share_begin(L.n, b + 1, blocks);
            for (int r = r0; r < r1; r += 16) produce_tile(r, min(16, r1 - r));
            continue;
        }
        const int rows = hv ? 8 : 16, tiles = L.n / rows, fixed = tiles * (100 - c.tail) / 100 / blocks,
                  pool = tiles - fixed * blocks;
        int grab = pool > 0 ? atomicAdd(&c.next[l], 1) : pool, taken = fixed;
        for (int i = 0; i < fixed; ++i) produce_tile(rows * (b * fixed + i), rows);
        while (grab < pool) {
            const int tile = fixed * blocks + grab;
            // A count taken is a tile this block owes: ask for another only while there is room.
            grab = ++taken < kMaxTiles ? atomicAdd(&c.next[l], 1) : pool;
            produce_tile(rows * tile, rows);
        }
        const int slot = next_slot();
        tile_of[slot] = -1;
        mbarrier_arrive(&full[slot]);
    }
}

__device__ __forceinline__ void link_stamp(const Chain& c, int l, LinkStamp at) {
    if (c.stamps && threadIdx.x == 32)
        c.stamps[(static_cast<size_t>(l) * gridDim.x + blockIdx.x) * kStamps + at] = globaltimer_ns();
}

// The SM's clock at `at` (its low 32 bits), once `dep` is in: a shared store of it comes first, so the
// warp waits for it there (a store issues only with its data) and the clock is read after. Kept in
// shared memory (few registers where x is live) and written out with kCycStaged's.
__device__ __forceinline__ void cycle_stamp(const Chain& c, int l, LinkStamp at, uint32_t dep = 0) {
    __shared__ uint32_t cyc[kStamps];
    if (c.stamps && threadIdx.x == 32) {
        asm volatile("st.shared.u32 [%0], %1;" ::"r"(smem_addr(&cyc[kCycSeen - 1])), "r"(dep) : "memory");
        cyc[at] = static_cast<uint32_t>(clock());
        if (at == kCycStaged)
            for (int k = kCycSeen; k <= kCycStaged; ++k) {  // bit 32: stamped this link
                c.stamps[(static_cast<size_t>(l) * gridDim.x + blockIdx.x) * kStamps + k] =
                    cyc[k] != 0 ? cyc[k] | 1ull << 32 : 0;
                cyc[k] = 0;
            }
    }
}

// A consumer warp done with its ring slot: the slot freed once every lane is past its reads, and the
// warp on to the next one (the phase flips at each wrap).
__device__ __forceinline__ void free_slot(uint64_t* empty, int& slot, uint32_t& phase, int slots, int lane) {
    __syncwarp();
    if (lane == 0) mbarrier_arrive(&empty[slot]);
    if (++slot == slots) {
        slot = 0;
        phase ^= 1;
    }
}

// Form 'D''s recurrent step of a GDN layer at one token, by the block's static share of its state tiles
// (16 value channels of a head each, streamed by the producer like weights): per value channel c of
// head h, with q and k L2-normed (q also by 1 / sqrt(128)), S its column of the state,
//   S = exp(g) S;  u = beta (v_c - k . S);  S = S + k u;  o_c = q . S
// (MODEL.md), S stored back and o_c as row 128 h + c of the link's y. A warp takes two channels of each
// tile (lane i: key channels 4 i .. + 3), reading q, k and v of the link before (qkv+z) after its wait;
// the conv1d and SiLU before them, the alpha and beta matmuls, and the gated RMS norm after are not
// modelled.
__device__ void consume_delta(const Chain& c, const Link& L, int l, const uint8_t* ring, uint64_t* full,
                              uint64_t* empty, const int* tile_of, int& slot, uint32_t& phase) {
    const int lane = static_cast<int>(threadIdx.x) & 31, cw = (static_cast<int>(threadIdx.x) >> 5) - 1;
    const int b = static_cast<int>(blockIdx.x), blocks = static_cast<int>(gridDim.x);
    const __half* qkv = kLinks[l - 1].y;
    const int t0 = share_begin(kDeltaTiles, b, blocks), t1 = share_begin(kDeltaTiles, b + 1, blocks);
    const int h0 = t0 / kDeltaTilesPerHead;  // the share's first head; it spans two at most
    // q and k of heads h0 and h0 + 1's key heads, each lane its four channels.
    float q[2][4], k[2][4];
#pragma unroll
    for (int hs = 0; hs < 2; ++hs) {
        const int kh = min(h0 + hs, kDeltaHeads - 1) % kDeltaKeyHeads;
        const uint2 qw = __ldcg(reinterpret_cast<const uint2*>(qkv + 128 * kh + 4 * lane));
        const uint2 kw = __ldcg(reinterpret_cast<const uint2*>(qkv + 128 * (kDeltaKeyHeads + kh) + 4 * lane));
        const __half* qh = reinterpret_cast<const __half*>(&qw);
        const __half* khv = reinterpret_cast<const __half*>(&kw);
        float nq = 0.0f, nk = 0.0f;
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            q[hs][i] = __half2float(qh[i]);
            k[hs][i] = __half2float(khv[i]);
            nq += q[hs][i] * q[hs][i];
            nk += k[hs][i] * k[hs][i];
        }
        const float sq = rsqrtf(warp_sum(nq) + 1e-6f) * 0.08838834764831845f,
                    sk = rsqrtf(warp_sum(nk) + 1e-6f);
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            q[hs][i] *= sq;
            k[hs][i] *= sk;
        }
    }
    // v of the warp's channels: lane 2 i + j holds tile t0 + i's channel 2 cw + j. A tile's 16 channels
    // take eight warps; any more only pass the slots on.
    const bool active = cw < kDeltaTileCols / 2;
    float v = 0.0f;
    if (active && lane < 2 * (t1 - t0)) {
        const int t = t0 + lane / 2;
        v = __half2float(qkv[2 * 128 * kDeltaKeyHeads + 128 * (t / kDeltaTilesPerHead) +
                             kDeltaTileCols * (t % kDeltaTilesPerHead) + 2 * cw + (lane & 1)]);
    }
    link_stamp(c, l, kStaged);
    for (int i = 0;; ++i) {
        mbarrier_wait(&full[slot], phase);
        const int t = tile_of[slot];
        if (t < 0) break;
        if (!active) {
            free_slot(empty, slot, phase, c.slots, lane);
            continue;
        }
        const int h = t / kDeltaTilesPerHead, col = kDeltaTileCols * (t % kDeltaTilesPerHead) + 2 * cw;
        const float4* tile = reinterpret_cast<const float4*>(ring + slot * kMmaSlotBytes);
        float4 st[2] = {tile[(2 * cw) * 32 + lane], tile[(2 * cw + 1) * 32 + lane]};
        free_slot(empty, slot, phase, c.slots, lane);  // the columns are in registers
        const float decay = __ldg(&L.gb[2 * h]), beta = __ldg(&L.gb[2 * h + 1]);
        const bool second = h != h0;
        float kv[4], qv[4];
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            kv[e] = second ? k[1][e] : k[0][e];
            qv[e] = second ? q[1][e] : q[0][e];
        }
        // The warp's sums of both channels' lane parts, their shuffles interleaved.
        auto warp_sum2 = [](float(&p)[2]) {
#pragma unroll
            for (int o = 16; o > 0; o >>= 1) {
                p[0] += __shfl_xor_sync(0xffffffffu, p[0], o);
                p[1] += __shfl_xor_sync(0xffffffffu, p[1], o);
            }
        };
        float ks[2];
#pragma unroll
        for (int j = 0; j < 2; ++j) {
            st[j].x *= decay, st[j].y *= decay, st[j].z *= decay, st[j].w *= decay;
            ks[j] = kv[0] * st[j].x + kv[1] * st[j].y + kv[2] * st[j].z + kv[3] * st[j].w;
        }
        warp_sum2(ks);
        float os[2];
#pragma unroll
        for (int j = 0; j < 2; ++j) {
            const float u = beta * (__shfl_sync(0xffffffffu, v, 2 * i + j) - ks[j]);
            st[j].x += kv[0] * u, st[j].y += kv[1] * u, st[j].z += kv[2] * u, st[j].w += kv[3] * u;
            os[j] = qv[0] * st[j].x + qv[1] * st[j].y + qv[2] * st[j].z + qv[3] * st[j].w;
            reinterpret_cast<float4*>(L.state + static_cast<size_t>(t) *
                                                    kDeltaTileFloats)[(2 * cw + j) * 32 + lane] = st[j];
        }
        warp_sum2(os);
        if (lane < 2) L.y[128 * h + col + lane] = __float2half_rn(lane ? os[1] : os[0]);
    }
    free_slot(empty, slot, phase, c.slots, lane);  // the end's slot
}

// The flags consume_split reads, fixed at compile time for the forms measured most (FixedForm: each
// compiles to its own code, with no branch or register of the others'; all of them take every tile at
// run time with K by field, unrolled), or read from Chain (RunTimeForm: every other form, one kernel).
// Coop (forms 'B', 'E', 'F', 'H', fixed forms only): x rotated as 'R' does, each of its blocks by one warp
// (rotate_pair) and kept in its registers, the link's absmax over all of them met at a barrier, and each
// warp's blocks quantised by that one scale into x's tile layout, published at a second barrier, so
// the tiles' sums are ints again, as in form 'a'.
struct RunTimeForm {
    static constexpr bool kFixed = false, kRotate = false, kCoop = false, kNorms = false,
                          kSkipTransform = false;
};
template <bool Rotate, bool Coop, bool Norms, bool SkipTransform>
struct FixedForm {
    static constexpr bool kFixed = true, kRotate = Rotate, kCoop = Coop, kNorms = Norms,
                          kSkipTransform = SkipTransform;
};
using FormA = FixedForm<false, false, false, false>;  // 'a'
using FormB = FixedForm<true, true, false, false>;    // 'B'
using FormF = FixedForm<true, true, false, true>;     // 'F'
using FormE = FixedForm<true, true, true, false>;     // 'E' and 'H'

// The split tiles in fragment order with nothing block-wide inside a link: each warp stages just
// the x of its own units (the link's absmax known beforehand: link l - 1's blocks left it in
// Chain::amax), adds its part of x's sum and of each tile's rows into shared ints, and the block
// meets once at the link's end to store its rows and their |y| max. The ring's slot and phase
// are counted, not divided out.
template <class F>
__device__ void consume_split(const Chain& c, const uint8_t* ring, int8_t* xs, uint64_t* full,
                              uint64_t* empty, int* sums, int* sumx, const int* tile_of, int* tile_rows,
                              float* rmeta, unsigned* zmax) {
    const int lane = static_cast<int>(threadIdx.x) & 31, cw = (static_cast<int>(threadIdx.x) >> 5) - 1;
    const int b = static_cast<int>(blockIdx.x), blocks = static_cast<int>(gridDim.x);
    // The form's flags (a fixed form's are constants: every tile at run time, K by field, unrolled).
    constexpr bool kFixed = F::kFixed;
    const bool rotate = kFixed ? F::kRotate : c.rotate, coop = F::kCoop, norms = kFixed ? F::kNorms : c.norms,
               skip_transform = kFixed ? F::kSkipTransform : c.skip_transform,
               by_field = kFixed || c.by_field, unrolled = kFixed || c.unrolled,
               warp_release = !kFixed && c.warp_release;
    const int tail = kFixed ? 100 : c.tail;
    unsigned* ymax = reinterpret_cast<unsigned*>(sumx + 2);
    uint32_t* xw = reinterpret_cast<uint32_t*>(xs);
    int slot = 0;
    uint32_t phase = 0;
    for (int l = c.first; l < c.first + c.links; ++l) {
        const Link& L = kLinks[l];
        const bool hv = !kFixed && halved(c, L);
        const int kt = hv ? L.k / 2 : L.k,
                  half_units = kt / 128;  // halved: K's second half from unit half_units
        const TileChunks tc(kt, unrolled);
        if (l > c.first && c.wait) wait_for_link(c, l - 1);
        link_stamp(c, l, kSeen);
        cycle_stamp(c, l, kCycSeen);
        if (L.state != nullptr) {
            consume_delta(c, L, l, ring, full, empty, tile_of, slot, phase);
            consumers_sync();
            link_stamp(c, l, kTiles);
            if (threadIdx.x == 32) {
                link_stamp(c, l, kStored);
                count_link_done(c, l);
                link_stamp(c, l, kReleased);
            }
            continue;
        }
        // x: the warp's units of every chunk, lane 4 i + s taking field s of word 8 u + i (inputs
        // 16 (8 u + i) + 4 j + s), quantised by the link's absmax, laid out paired (stage_x).
        // (Thread 32's acquire and the barrier after it order the absmax's load after its writers.)
        // (The rotated forms take their own scales: no absmax from the link before, nor to the next.)
        float m = rotate ? 0.0f : l == c.base ? c.x0_amax : __uint_as_float(__ldcg(&c.amax[l]));
        const unsigned short* src =
            reinterpret_cast<const unsigned short*>(l == c.base ? c.x0 : kLinks[l - 1].y);
        int sx = 0;
        // Form 'N': the links of the residual's width in take it normed, those of its width out add into it.
        const bool normed = norms && L.k == kNormWidth, adds = norms && L.n == kNormWidth;
        // Form 'B': warp w of W rotates blocks w and w + W (a pass), and with eight warps w + 16 (a second:
        // down's 17 blocks, warp 0), keeping them in zr; the link's absmax in zmax[l % 3] (thread 32 zeroes
        // those of links l + 1 and l + 2 past the barrier: links l - 2's and l - 1's, read before it; two, as
        // form 'H''s recurrent links take none). Past it, each warp quantises its blocks into x's tile
        // layout, and a second barrier publishes them to the warps whose units they are.
        const int nb = kt / 1024;
        uint32_t zr[kRotPasses][8][4];
        if (coop) {
            const __half* xh = reinterpret_cast<const __half*>(src);
            const float* rs = normed ? c.resid : nullptr;
            __half2 mh = __float2half2_rn(0.0f);
#pragma unroll
            for (int p = 0; p < kRotPasses; ++p)
                if (cw + 2 * kConsumerWarps * p < nb) {
                    const int ba = cw + 2 * kConsumerWarps * p;
                    uint32_t v[8][4];
                    load_blocks(xh, rs, c.gamma, ba, ba + kConsumerWarps < nb ? ba + kConsumerWarps : -1,
                                lane, v);
                    mh = __hmax2(mh, rotate_pair(v, lane, !skip_transform, zr[p]));
                }
            const float mz = warp_max(fmaxf(__low2float(mh), __high2float(mh)));
            cycle_stamp(c, l, kCycRotated, __float_as_uint(mz));
            if (lane == 0) atomicMax(&zmax[l % 3], __float_as_uint(mz));
            consumers_sync();
            cycle_stamp(c, l, kCycMet);
            if (threadIdx.x == 32) zmax[(l + 1) % 3] = zmax[(l + 2) % 3] = 0;
            m = __uint_as_float(zmax[l % 3]);
        }
        const float inv = m > 0.0f ? 127.0f / m : 0.0f, scale = m / 127.0f;
        const bool per_block = rotate && !coop;  // form 'R''s sums, a block's each
        if (coop) {
            // Word 32 u + 8 t + m of unit u (its channels 16 m + 4 t .. + 3) as the K-by-field staging
            // below lays it out: a lane's eight words of a block's unit g in two stores.
            const int g = lane >> 2, t = lane & 3;
#pragma unroll
            for (int p = 0; p < kRotPasses; ++p)
#pragma unroll
                for (int h = 0; h < 2; ++h) {
                    const int bk = cw + 2 * kConsumerWarps * p + kConsumerWarps * h;
                    if (bk >= nb) continue;  // past the warp's passes too
                    uint32_t w[8];
#pragma unroll
                    for (int i = 0; i < 8; ++i) {
                        w[i] = quantise4(zr[p][i][2 * h], zr[p][i][2 * h + 1], inv);
                        sx = __dp4a(static_cast<int>(w[i]), 0x01010101, sx);
                    }
                    uint4* d = reinterpret_cast<uint4*>(xw + 32 * (8 * bk + g) + 8 * t);
                    d[0] = make_uint4(w[0], w[1], w[2], w[3]);
                    d[1] = make_uint4(w[4], w[5], w[6], w[7]);
                }
        }
        // Form 'R': each chunk's blocks that the warp's units touch, rotated; each block's scale and the
        // warp's units' split between them in rmeta (kRotChunks a warp, three words a chunk), the codes'
        // offset over all of them in corr (in x's units).
        float corr = 0.0f;
        for (int ch = 0; ch < tc.chunks && per_block; ++ch) {
            const int all = tc.units_of(ch, kt), u0 = ch * tc.units + all * cw / kConsumerWarps,
                      u1 = ch * tc.units + all * (cw + 1) / kConsumerWarps;
            const int ba = u0 / 8, bb = (u1 - 1) / 8 != ba ? (u1 - 1) / 8 : -1;
            float sa, sb;
            int oa, ob;
            stage_rotated(reinterpret_cast<const __half*>(src), normed ? c.resid : nullptr, c.gamma, ba, bb,
                          u0 - 8 * ba, min(u1, 8 * ba + 8) - 8 * ba, bb >= 0 ? u1 - 8 * bb : 0, xw, lane, sa,
                          sb, oa, ob, !skip_transform);
            corr += static_cast<float>(oa) * sa + static_cast<float>(ob) * sb;
            if (lane == 0) {
                float* mt = rmeta + 3 * (kRotChunks * cw + ch);
                mt[0] = sa;
                mt[1] = sb;
                mt[2] = __int_as_float(min(u1, 8 * ba + 8) - u0);
            }
        }
        // Halved, the warp's units of each chunk in both halves of K.
        for (int part = 0; part < (hv ? 2 * tc.chunks : tc.chunks) && by_field && !per_block && !coop;
             ++part) {
            // By field: mma s of unit u takes inputs 128 u + 32 s + q at its K slot q, so lane w
            // quantises inputs 128 u + 4 w .. + 3 (one 8-byte load) into the word that is B's
            // register h (q = 16 h + 4 t ..) of lane t for mma s = w / 8, paired as stage_x does.
            constexpr int kMost = (kMostUnits + kConsumerWarps - 1) / kConsumerWarps;  // a warp's of a chunk
            const int ch = hv ? part % tc.chunks : part, at = hv ? part / tc.chunks * half_units : 0;
            const int all = tc.units_of(ch, kt), u0 = at + ch * tc.units + all * cw / kConsumerWarps;
            const int nu = at + ch * tc.units + all * (cw + 1) / kConsumerWarps - u0;
            uint2 raw[kMost];
#pragma unroll
            for (int i = 0; i < kMost; ++i)
                if (i < nu) raw[i] = __ldcg(reinterpret_cast<const uint2*>(src + 128 * (u0 + i) + 4 * lane));
            if (c.stamps && part == 0) {
                uint32_t all = 0;
#pragma unroll
                for (int i = 0; i < kMost; ++i)
                    if (i < nu) all |= raw[i].x | raw[i].y;
                cycle_stamp(c, l, kCycLoaded, all);
            }
            const int f = lane >> 3, t = lane & 3, h = (lane >> 2) & 1;
#pragma unroll
            for (int i = 0; i < kMost; ++i)
                if (i < nu) {
                    const uint32_t packed = quantise4(raw[i].x, raw[i].y, inv);
                    sx = __dp4a(static_cast<int>(packed), 0x01010101, sx);
                    xw[32 * (u0 + i) + 8 * t + 2 * f + h] = packed;
                }
        }
        for (int ch = 0; ch < tc.chunks && !by_field; ++ch) {
            const int all = tc.units_of(ch, L.k), base = ch * tc.units;
#pragma unroll 4
            for (int u = base + all * cw / kConsumerWarps; u < base + all * (cw + 1) / kConsumerWarps; ++u) {
                const int v = 8 * u + (lane >> 2), f = lane & 3;
                uint32_t packed = 0;
#pragma unroll
                for (int j = 0; j < 4; ++j) {
                    const int q = __float2int_rn(
                        __half2float(__ushort_as_half(__ldcg(src + 16 * v + 4 * j + f))) * inv);
                    sx += q;
                    packed |= (static_cast<uint32_t>(q) & 0xffu) << (8 * j);
                }
                xw[8 * (v >> 1) + 2 * f + (v & 1)] = packed;
            }
        }
        sx = warp_sum(sx);
        const int sum_at = warp_release ? l % 3 : l & 1;  // x's sum's shared int
        if (lane == 0) atomicAdd(&sumx[sum_at], sx);
        // Form 'B': every warp's blocks in before any warp's tiles read them.
        if (coop) consumers_sync();
        __syncwarp();
        cycle_stamp(c, l, kCycStaged);  // before the global clock's read, which is slow
        link_stamp(c, l, kStaged);

        // A tile's chunks from the current slot on: body(ch, u0, u1, wa, xu) takes the warp's units u0 .. u1
        // - 1 of chunk ch, their codes (rows g) at wa (rows g + 8 a chunk's units on) and x at xu.
        auto tile_chunks = [&](auto&& body) {
            for (int ch = 0; ch < tc.chunks; ++ch) {
                mbarrier_wait(&full[slot], phase);
                const int all = tc.units_of(ch, kt);
                const int u0 = all * cw / kConsumerWarps, u1 = all * (cw + 1) / kConsumerWarps;
                const uint8_t* wa = ring + slot * kMmaSlotBytes + 256 * u0 + 8 * lane;
                // Halved, B's column 1 (lanes 4-7) is x's second half of K.
                const int8_t* xu =
                    xs + 128 * (ch * tc.units + u0 + (hv && (lane >> 2) == 1 ? half_units : 0));
                body(ch, u0, u1, wa, xu);
                free_slot(empty, slot, phase, c.slots, lane);
            }
        };
        // Form 'R''s tile: a block's sums each (the warp's first na units of a chunk are one block's, the
        // rest the next's), met in floats by their blocks' scales; every column of B is x, so column 0's
        // rows, less the warp's offset, go into the rows' float sums.
        auto consume_tile_rotated = [&](int rows, int at) {
            float fg = 0.0f, fh = 0.0f;  // 64 times rows g's and g + 8's sums, in x's units
            tile_chunks([&](int ch, int u0, int u1, const uint8_t* wa, const int8_t* xu) {
                const float* mt = rmeta + 3 * (kRotChunks * cw + ch);
                const int na = __float_as_int(mt[2]);
                int sa[4][4] = {}, sb[4][4] = {};
                if (u1 - u0 == 5)
                    tile_chunk_product_n<5, true>(wa, wa + 256 * tc.units, xu, lane, sa, sb, na);
                else if (u1 - u0 == 6)
                    tile_chunk_product_n<6, true>(wa, wa + 256 * tc.units, xu, lane, sa, sb, na);
                else
                    __trap();  // every link of the probe gives a warp 5 or 6 units of a chunk
                fg += static_cast<float>(sum64(sa, 0)) * mt[0] + static_cast<float>(sum64(sb, 0)) * mt[1];
                fh += static_cast<float>(sum64(sa, 2)) * mt[0] + static_cast<float>(sum64(sb, 2)) * mt[1];
            });
            const int g = lane >> 2;
            if ((lane & 3) == 0) {
                float* fs = reinterpret_cast<float*>(sums);
                atomicAdd(&fs[at + g], fg * (1.0f / 64.0f) - corr);
                if (g + 8 < rows) atomicAdd(&fs[at + g + 8], fh * (1.0f / 64.0f) - corr);
            }
        };
        // A tile of `rows` rows from row r, its chunks from the current slot on, its rows' sums added
        // into sums[at ..].
        auto consume_tile = [&](int r, int rows, int at) {
            if (per_block) {
                consume_tile_rotated(rows, at);
                return;
            }
            int acc[4][4] = {}, odd[4][4] = {};
            tile_chunks([&](int, int u0, int u1, const uint8_t* wa, const int8_t* xu) {
                // A chunk's 40-48 units give each of 8 warps 5 or 6, of 12 warps 3 or 4, of 16 warps 2 or 3.
                constexpr int kFew = 40 / kConsumerWarps;
                if (unrolled && u1 - u0 == kFew)
                    tile_chunk_product_n<kFew>(wa, wa + 256 * tc.units, xu, lane, acc, odd);
                else if (unrolled && u1 - u0 == kFew + 1)
                    tile_chunk_product_n<kFew + 1>(wa, wa + 256 * tc.units, xu, lane, acc, odd);
                else
                    tile_chunk_product<true>(wa, wa + 256 * tc.units, 256, xu, u1 - u0, lane, acc);
            });
            const int g = lane >> 2;
#pragma unroll
            for (int s = 0; s < 4; ++s)
#pragma unroll
                for (int i = 0; i < 4; ++i) acc[s][i] += odd[s][i];
            if ((lane & 3) == 0) {
                if (hv) {
                    // Row g: its first half against column 0, its second (the mma's row g + 8) against 1.
                    atomicAdd(&sums[at + g], sum64(acc, 0) + sum64(acc, 3));
                } else {
#pragma unroll
                    for (int h = 0; h < 2; ++h)
                        if (g + 8 * h < rows) atomicAdd(&sums[at + g + 8 * h], sum64(acc, 2 * h));
                }
            }
        };
        // The block's rows of the link: r0 .. r1 - 1, or with a tail the 16 (halved 8) rows from
        // tile_rows[i] of each of its tiles i < taken, as the producer's slots name them.
        int r0 = 0, r1 = 0, taken = 0;
        if (tail == 0) {
            r0 = tile_share_begin(L.n, b, blocks), r1 = tile_share_begin(L.n, b + 1, blocks);
            for (int r = r0; r < r1; r += 16) consume_tile(r, min(16, r1 - r), r - r0);
        } else {
            for (;; ++taken) {
                mbarrier_wait(&full[slot], phase);
                const int r = tile_of[slot];
                if (r < 0) break;
                if (cw == 0 && lane == 0) tile_rows[taken] = r;
                consume_tile(r, hv ? 8 : 16, (hv ? 8 : 16) * taken);
            }
            free_slot(empty, slot, phase, c.slots, lane);  // the end's slot
        }
        const int sh = hv ? 3 : 4, stored = tail == 0 ? r1 - r0 : taken << sh;
        auto row_of = [&](int i) { return tail == 0 ? r0 + i : tile_rows[i >> sh] + (i & ((1 << sh) - 1)); };

        const int kn = l + 1 < kMaxLinks ? kLinks[l + 1].k : 0;
        const float ys = scale * L.rk;
        // The link's end: every warp's sums are in. The block's rows stored (their sums zeroed for
        // the next link), the largest |y| of those the next link takes as x added to its absmax.
        consumers_sync();
        link_stamp(c, l, kTiles);
        // A release a warp: link l - 1's sum was read by every warp before this barrier, and the next
        // to add into its int is link l + 2, after the next link's end's barrier.
        if (warp_release && threadIdx.x == 32) sumx[(l + 2) % 3] = 0;
        const int sum_x = sumx[sum_at];
        float mx = 0.0f;
        // Form 'N': the norm's 1 / rms (eps 1e-6) in the row scale. Form 'R': the sums are floats in x's
        // units, H_1024's 1 / 32 with the row scale ('B' took it at staging).
        const float rn =
            normed ? rsqrtf((l == c.base ? c.x0_sumsq : __ldcg(&c.sumsq[l])) / kNormWidth + 1e-6f) : 1.0f;
        const float yr = L.rk / 32.0f * rn, yi = ys * rn;
        float ss = 0.0f;  // form 'N': the squares of the residual's rows this block adds into
        for (int i = static_cast<int>(threadIdx.x) - 32; i < stored; i += 32 * kConsumerWarps) {
            const __half y =
                __float2half_rn(per_block ? __int_as_float(sums[i]) * yr : row_y(sums[i], sum_x, yi));
            const int row = row_of(i);
            L.y[row] = y;
            sums[i] = 0;
            if (row < kn) mx = fmaxf(mx, fabsf(__half2float(y)));
            if (adds) {
                const float r = __ldcg(&c.resid[row]) + __half2float(y);
                c.resid[row] = r;
                ss += r * r;
            }
        }
        if (adds) {
            // Before the release below (its barrier and fence order every warp's adds before the count).
            ss = warp_sum(ss);
            if (lane == 0) atomicAdd(&c.sumsq[l + 1], ss);
        }
        mx = warp_max(mx);
        if (warp_release) {
            // The warp's rows' largest |y| and its count, after its lanes' stores (__syncwarp orders
            // them before lane 0's release).
            if (lane == 0 && kn > 0) atomicMax(&c.amax[l + 1], __float_as_uint(mx));
            __syncwarp();
            link_stamp(c, l, kStored);
            if (lane == 0) count_link_done(c, l);
            link_stamp(c, l, kReleased);
            // The next link's adds into sums wait for every warp's stores here at the barrier of the
            // next wait; without the waits, at this one.
            if (!c.wait) consumers_sync();
            continue;
        }
        if (lane == 0) atomicMax(ymax, __float_as_uint(mx));  // non-negative floats order as their bits
        consumers_sync();
        if (threadIdx.x == 32) {
            sumx[l & 1] = 0;  // the link after next is its next user, past two more barriers
            if (kn > 0 && !rotate) atomicMax(&c.amax[l + 1], *ymax);
            *ymax = 0;
            link_stamp(c, l, kStored);
            count_link_done(c, l);
            link_stamp(c, l, kReleased);
        }
    }
}

template <class F>
__global__ void __launch_bounds__(kThreads, 1) chain_kernel(const __grid_constant__ Chain c) {
    extern __shared__ __align__(128) uint8_t smem[];
    uint8_t* ring = smem;
    int8_t* xs = reinterpret_cast<int8_t*>(smem + kMaxSlots * kSlotBytes);
    uint64_t* full = reinterpret_cast<uint64_t*>(smem + kMaxSlots * kSlotBytes + kMaxK);
    uint64_t* empty = full + kMaxSlots;
    float* red_f = reinterpret_cast<float*>(empty + kMaxSlots);
    int* red_i = reinterpret_cast<int*>(red_f + kConsumerWarps);
    int* partial = red_i + kConsumerWarps;  // split tiles: [tile & 1][warp][16 rows] partial sums
    int* sums =
        partial + 2 * kConsumerWarps * 16;  // deferred: [a block's rows of a link] sums, zero between links
    int* sumx = sums + kMaxShareRows;       // local: x's sum by link parity, and the block's |y| max
    int* tile_of = sumx + 3;                // with a tail: each slot's tile's first row (-1: the link's end)
    int* tile_rows = tile_of + kMaxSlots;   // and the block's tiles of a link, their first rows
    unsigned* zmax = reinterpret_cast<unsigned*>(tile_rows + kMaxTiles);  // form 'B': x's absmax, by l % 3
    const int warp = static_cast<int>(threadIdx.x) >> 5, lane = static_cast<int>(threadIdx.x) & 31;
    const int b = static_cast<int>(blockIdx.x), blocks = static_cast<int>(gridDim.x);
    for (int i = static_cast<int>(threadIdx.x); i < kMaxShareRows + 3; i += kThreads) sums[i] = 0;
    if (threadIdx.x < 3) zmax[threadIdx.x] = 0;
    if (threadIdx.x == 0) {
        for (int i = 0; i < c.slots; ++i) {
            mbarrier_init(&full[i]);
            mbarrier_init<kConsumerWarps>(&empty[i]);
        }
    }
    __syncthreads();

    if (warp == 0) {
        // The producer: every link's share, slot after slot, waiting only for a free slot.
        if (lane != 0) return;
        if (c.mma) {
            produce_tiles(c, ring, full, empty, tile_of);
            return;
        }
        int slot = 0;
        uint32_t round = 0;
        for (int l = c.first; l < c.first + c.links; ++l) {
            const Link& L = kLinks[l];
            const int r0 = share_begin(L.n, b, blocks), r1 = share_begin(L.n, b + 1, blocks);
            const int per = slot_rows(L.k), row_bytes = L.k / 4;
            for (int r = r0; r < r1; r += per) {
                if (round > 0) mbarrier_wait(&empty[slot], (round - 1) & 1);
                const int nr = min(per, r1 - r);
                bulk_copy_to_shared(
                    ring + slot * kSlotBytes,
                    reinterpret_cast<const uint8_t*>(L.w) + static_cast<int64_t>(r) * row_bytes,
                    static_cast<uint32_t>(nr * row_bytes), &full[slot]);
                if (++slot == c.slots) {
                    slot = 0;
                    ++round;
                }
            }
        }
        return;
    }

    // The consumers.
    if (F::kFixed || c.local) {
        consume_split<F>(c, ring, xs, full, empty, sums, sumx, tile_of, tile_rows,
                         reinterpret_cast<float*>(partial), zmax);
        return;
    }
    if constexpr (!F::kFixed) {  // the other consumers: a fixed form is consume_split's
        const int cw = warp - 1;
        const uint4* x4 = reinterpret_cast<const uint4*>(xs);
        int slot = 0;
        uint32_t round = 0;
        uint32_t seq = 0;  // the tensor-core form: chunks so far, as produce_tiles counts them
        int tile = 0;      // and tiles so far, round robin over the warps
        for (int l = c.first; l < c.first + c.links; ++l) {
            const Link& L = kLinks[l];
            if (l > c.first && c.wait) wait_for_link(c, l - 1);
            int sum_x = 0;
            const float scale = c.stage ? stage_x(l == c.base ? c.x0 : kLinks[l - 1].y, L.k, xs, c.paired,
                                                  &sum_x, red_f, red_i)
                                        : 0.0f;
            const float ys = scale * L.rk;
            if (c.mma) {
                const TileChunks tc(L.k);
                const int r0 = tile_share_begin(L.n, b, blocks), r1 = tile_share_begin(L.n, b + 1, blocks);
                for (int r = r0; r < r1; r += 16, ++tile) {
                    // Every warp waits for every chunk and frees it (the owner once it has its sums), as
                    // in the row forms: so no warp waits on a slot's phase more than one round ahead,
                    // and none frees a slot before its owner is done with it.
                    const bool mine = tile % kConsumerWarps == cw;
                    int acc[4][4] = {};
                    for (int ch = 0; ch < tc.chunks; ++ch, ++seq) {
                        const int s = static_cast<int>(seq % c.slots);
                        mbarrier_wait(&full[s], (seq / c.slots) & 1);
                        if (c.rows && (mine || c.split)) {
                            // Split: warp cw takes its eighth of the chunk's units, all 16 rows.
                            const int all = tc.units_of(ch, L.k);
                            const int u0 = c.split ? all * cw / kConsumerWarps : 0;
                            const int u1 = c.split ? all * (cw + 1) / kConsumerWarps : all;
                            const uint8_t* slot = ring + s * kMmaSlotBytes;
                            const int g = lane >> 2, step = c.tiled ? 256 : 32;
                            const uint8_t* wa =
                                slot + step * u0 + (c.tiled ? 8 * lane : g * tc.stride + 8 * (lane & 3));
                            const uint8_t* wb = wa + (c.tiled ? 256 * tc.units : 8 * tc.stride);
                            const int8_t* xu = xs + 128 * (ch * tc.units + u0);
                            if (c.paired)
                                tile_chunk_product<true>(wa, wb, step, xu, u1 - u0, lane, acc);
                            else
                                tile_chunk_product<false>(wa, wb, step, xu, u1 - u0, lane, acc);
                        }
                        __syncwarp();
                        if (lane == 0) mbarrier_arrive(&empty[s]);
                    }
                    if (!c.rows) continue;
                    const int g = lane >> 2, rows = min(16, r1 - r);
                    if (c.deferred) {
                        // Added into the rows' shared sums without waiting for the other warps: the
                        // link's end (below) stores them once every warp is done.
                        if ((lane & 3) == 0)
                            for (int h = 0; h < 2; ++h)
                                if (g + 8 * h < rows) atomicAdd(&sums[r - r0 + g + 8 * h], sum64(acc, 2 * h));
                        continue;
                    }
                    if (c.split) {
                        // The warps' partial sums meet in shared memory, in two buffers by turns: a
                        // tile's are read before the next tile's barrier, so the tile after may reuse them.
                        int* part = partial + (tile & 1) * kConsumerWarps * 16;
                        if ((lane & 3) == 0) {
                            part[cw * 16 + g] = sum64(acc, 0);
                            part[cw * 16 + g + 8] = sum64(acc, 2);
                        }
                        consumers_sync();
                        if (mine && lane < rows) {
                            int d = 0;
#pragma unroll
                            for (int w = 0; w < kConsumerWarps; ++w) d += part[w * 16 + lane];
                            L.y[r + lane] = __float2half_rn(row_y(d, sum_x, ys));
                        }
                        continue;
                    }
                    if (mine && (lane & 3) == 0)
                        for (int h = 0; h < 2; ++h)
                            if (g + 8 * h < rows)
                                L.y[r + g + 8 * h] = __float2half_rn(row_y(sum64(acc, 2 * h), sum_x, ys));
                }
            } else {
                const int r0 = share_begin(L.n, b, blocks), r1 = share_begin(L.n, b + 1, blocks);
                const int per = slot_rows(L.k), words = L.k / 16;
                int turn = 0;  // rows of the link's share so far, round robin over the warps
                for (int r = r0; r < r1; r += per) {
                    mbarrier_wait(&full[slot], round & 1);
                    const int nr = c.rows ? min(per, r1 - r) : 0;
                    const uint32_t* rows = reinterpret_cast<const uint32_t*>(ring + slot * kSlotBytes);
                    for (int j = 0; j < nr; ++j, ++turn) {
                        if (turn % kConsumerWarps != cw) continue;
                        const int dot = (c.ilp ? row_dot_ilp(rows + j * words, x4, words, lane)
                                               : row_dot(rows + j * words, x4, words, lane)) -
                                        sum_x;
                        if (lane == 0) L.y[r + j] = __float2half_rn(static_cast<float>(dot) * ys);
                    }
                    __syncwarp();
                    if (lane == 0) mbarrier_arrive(&empty[slot]);
                    if (++slot == c.slots) {
                        slot = 0;
                        ++round;
                    }
                }
            }
            if (c.deferred) {
                // Every warp's sums are in: the block's rows of the link stored, their sums zeroed for
                // the next (its first adds come after stage_x's barriers).
                consumers_sync();
                const int r0 = tile_share_begin(L.n, b, blocks),
                          rows = tile_share_begin(L.n, b + 1, blocks) - r0;
                for (int i = static_cast<int>(threadIdx.x) - 32; i < rows; i += 32 * kConsumerWarps) {
                    L.y[r0 + i] = __float2half_rn(row_y(sums[i], sum_x, ys));
                    sums[i] = 0;
                }
            }
            // The block's rows of link l are stored: one release for all of them (the barrier orders
            // every warp's stores before thread 32's count), and x's staging buffer is free again.
            consumers_sync();
            if (threadIdx.x == 32) count_link_done(c, l);
        }
    }
}

// Random ternary codes (0, 1, 2: weight code - 1) into n words, from a seed: a 32-bit mix of the
// word's index, then an LCG step a field, its top 16 bits scaled to 0..2 (32-bit arithmetic only:
// 64-bit division would take the GPU over a minute for the 27B layout's 1.6 G words).
__global__ void fill_codes(uint32_t* w, size_t n, uint32_t seed) {
    for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<size_t>(gridDim.x) * blockDim.x) {
        uint32_t h = static_cast<uint32_t>(i) ^ static_cast<uint32_t>(i >> 32) ^ seed;
        h ^= h >> 16;
        h *= 0x7feb352du;
        h ^= h >> 15;
        h *= 0x846ca68bu;
        h ^= h >> 16;
        uint32_t word = 0;
        for (int f = 0; f < 16; ++f) {
            h = h * 1664525u + 1013904223u;
            word |= (((h >> 16) * 3u) >> 16) << (2 * f);
        }
        w[i] = word;
    }
}

// As tile_codes, with K by field: byte q (K slot q of a lane's piece: 4 t .. and 16 + 4 t ..) of unit u
// holds in field s the code of input 128 u + 32 s + q, so mma s takes inputs 128 u + 32 s .. + 31.
__global__ void tile_codes_by_field(const uint32_t* w, uint8_t* wf, int k, int n) {
    const size_t pieces = static_cast<size_t>(n) * k / 32, units = k / 128;
    for (size_t e = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; e < pieces;
         e += static_cast<size_t>(gridDim.x) * blockDim.x) {
        const size_t lane = e % 32, unit = (e / 32) % units, group = e / 32 / units;
        // Input i is field i % 4 of byte i % 16 / 4 of the row's word i / 16: for K slot q = 16 h + 4 t + f,
        // word 8 unit + 2 s + h, byte t, field f.
        const uint32_t* words = w + (8 * group + lane / 4) * (k / 16) + 8 * unit;
        const int t = static_cast<int>(lane % 4);
        uint8_t out[8];
        for (int b = 0; b < 8; ++b) {
            uint32_t byte = 0;
            for (int s = 0; s < 4; ++s)
                byte |= ((words[2 * s + b / 4] >> (8 * t + 2 * (b % 4))) & 3u) << (2 * s);
            out[b] = static_cast<uint8_t>(byte);
        }
        reinterpret_cast<uint2*>(wf)[e] = *reinterpret_cast<const uint2*>(out);
    }
}

// A link's codes in fragment order: 8-byte piece e of wt is lane e % 32 = (g, t)'s piece of unit
// (e / 32) % (k / 128) of the 8-row group e / (8 k): bytes 32 unit + 8 t .. + 7 of the group's row g.
__global__ void tile_codes(const uint8_t* w, uint8_t* wt, int k, int n) {
    const size_t pieces = static_cast<size_t>(n) * k / 32, units = k / 128;
    for (size_t e = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; e < pieces;
         e += static_cast<size_t>(gridDim.x) * blockDim.x) {
        const size_t lane = e % 32, unit = (e / 32) % units, group = e / 32 / units;
        const size_t row = 8 * group + lane / 4;
        reinterpret_cast<uint2*>(wt)[e] =
            *reinterpret_cast<const uint2*>(w + row * (k / 4) + 32 * unit + 8 * (lane % 4));
    }
}

// Row r's sum over its k codes of (code - bias) times x (the packed layout of Link::w), in T.
template <typename T, typename X>
T codes_dot(const std::vector<uint32_t>& w, int r, int k, const X* x, int bias) {
    T dot = 0;
    for (int v = 0; v < k / 16; ++v) {
        const uint32_t word = w[static_cast<size_t>(r) * (k / 16) + v];
        for (int j = 0; j < 4; ++j)
            for (int s = 0; s < 4; ++s)
                dot += (static_cast<int>((word >> (8 * j + 2 * s)) & 3u) - bias) * x[16 * v + 4 * j + s];
    }
    return dot;
}

// The CPU oracle of one link: the same quantisation, sums and roundings.
std::vector<__half> cpu_link(const std::vector<uint32_t>& w, const std::vector<__half>& src, int k, int n,
                             float rk) {
    std::vector<int8_t> q(k);
    float m = 0.0f;
    for (int i = 0; i < k; ++i) m = std::max(m, std::fabs(__half2float(src[i])));
    const float inv = m > 0.0f ? 127.0f / m : 0.0f, scale = m / 127.0f;
    int sum_x = 0;
    for (int i = 0; i < k; ++i) {
        q[i] = static_cast<int8_t>(std::nearbyint(__half2float(src[i]) * inv));
        sum_x += q[i];
    }
    std::vector<__half> y(n);
    const float ys = scale * rk;
    for (int r = 0; r < n; ++r)
        y[r] = __float2half_rn(static_cast<float>(codes_dot<int>(w, r, k, q.data(), 0) - sum_x) * ys);
    return y;
}

// Form 'R''s oracle, in doubles: x (its first k values) rotated exactly (H_1024 / 32 a block of 1,024
// channels) times the weights (code - 1), by the row scale; the GPU's int8 x departs from it by its
// quantisation.
std::vector<double> cpu_link_rotated(const std::vector<uint32_t>& w, std::vector<double> x, int k, int n,
                                     float rk) {
    for (int b = 0; b < k; b += 1024)
        for (int d = 1; d < 1024; d <<= 1)
            for (int i = b; i < b + 1024; ++i)
                if (!((i - b) & d)) {
                    const double lo = x[i], hi = x[i + d];
                    x[i] = lo + hi;
                    x[i + d] = lo - hi;
                }
    std::vector<double> y(n);
    for (int r = 0; r < n; ++r) y[r] = codes_dot<double>(w, r, k, x.data(), 1) / 32.0 * rk;
    return y;
}

// Form 'D''s oracle for a recurrent step, in doubles: o from the qkv+z link's rows (fp16, as the GPU
// left them), the state before the step ([head][value channel][key channel]) and each head's decay and
// beta, as consume_delta.
std::vector<double> cpu_delta(const std::vector<__half>& qkv, const std::vector<float>& state,
                              const std::vector<float>& gb) {
    std::vector<double> o(kDeltaHeads * 128);
    for (int h = 0; h < kDeltaHeads; ++h) {
        const int kh = h % kDeltaKeyHeads;
        double q[128], k[128], nq = 0, nk = 0;
        for (int i = 0; i < 128; ++i) {
            q[i] = __half2float(qkv[128 * kh + i]);
            k[i] = __half2float(qkv[128 * (kDeltaKeyHeads + kh) + i]);
            nq += q[i] * q[i];
            nk += k[i] * k[i];
        }
        for (int i = 0; i < 128; ++i) {
            q[i] /= std::sqrt(nq + 1e-6) * std::sqrt(128.0);
            k[i] /= std::sqrt(nk + 1e-6);
        }
        for (int c = 0; c < 128; ++c) {
            double st[128], ks = 0, oc = 0;
            for (int i = 0; i < 128; ++i) {
                st[i] = gb[2 * h] * static_cast<double>(state[(static_cast<size_t>(h) * 128 + c) * 128 + i]);
                ks += k[i] * st[i];
            }
            const double u = gb[2 * h + 1] * (__half2float(qkv[2 * 128 * kDeltaKeyHeads + 128 * h + c]) - ks);
            for (int i = 0; i < 128; ++i) oc += q[i] * (st[i] + k[i] * u);
            o[128 * h + c] = oc;
        }
    }
    return o;
}

// The rows' form of a check's `parts` (main's launch), as its JSON names it.
const char* row_form(char parts) {
    switch (parts) {
        case 'i':
            return "ilp";
        case 'm':
            return "mma";
        case 'k':
            return "mma split";
        case 't':
            return "mma split, fragment order";
        case 'q':
            return "mma split, fragment order, x paired";
        case 'p':
            return "mma split, fragment order, x paired, sums deferred";
        case 'x':
            return "mma split, warp-local x";
        case 'y':
            return "mma split, warp-local x, K by field";
        case 'u':
            return "mma split, K by field, unrolled";
        case 'd':
            return "mma split, K by field, unrolled, a quarter's tiles taken at run time";
        case 'a':
            return "mma split, K by field, unrolled, every tile taken at run time";
        case 'w':
            return "mma split, K by field, unrolled, every tile taken at run time, a release a warp";
        case 'g':
            return "mma split, K by field, unrolled, every tile taken at run time, halved down tiles";
        case 'h':
            return "mma split, K by field, unrolled, every tile taken at run time, halved 5,120-row tiles";
        case 'R':
            return "mma split, K by field, unrolled, every tile taken at run time, x rotated";
        case 'N':
            return "mma split, K by field, unrolled, every tile taken at run time, x rotated, normed, "
                   "residual";
        case 'S':
            return "mma split, K by field, unrolled, every tile taken at run time, x staged as rotated, "
                   "no transform";
        case 'D':
            return "mma split, K by field, unrolled, every tile taken at run time, x rotated, normed, "
                   "residual, GDN recurrent steps";
        case 'B':
            return "mma split, K by field, unrolled, every tile taken at run time, x rotated a block a warp";
        case 'E':
            return "mma split, K by field, unrolled, every tile taken at run time, x rotated a block a warp, "
                   "normed, residual";
        case 'H':
            return "mma split, K by field, unrolled, every tile taken at run time, x rotated a block a warp, "
                   "normed, residual, GDN recurrent steps";
        case 'F':
            return "mma split, K by field, unrolled, every tile taken at run time, x staged a block a warp, "
                   "no transform";
        default:
            return "plain";
    }
}

// Where a link's time goes in an unrolled form with its waits (Chain::stamps, LinkStamp): one run
// stamped (the second of two), means over the links that have a next one and over the blocks, in
// microseconds: a link from the last block's release before it to the last block's release of it,
// its tiles (staged to tiles done), the spread of the blocks' tiles-done times, the end (tiles done
// to stored), the release, the wait (the last release of the link before to seen), and staging;
// the spreads of seen and staged as well. Whether a block is late link after link or by turns: the
// blocks' tiles-done times less their link's mean, their spread within a link (its standard
// deviation, averaged over the links) against the spread of each block's mean over the links (the
// part a block keeps), and how many blocks were ever a link's last. And a link by its kind (q+k+v
// or qkv+z, the attention or GDN output, gate+up, down: l % 4) against its bytes at the copy rate.
// Staging's steps in SM cycles (LinkStamp), and the clock's rate over staging.
// Means, not medians: the GPU clock may tick in steps near a microsecond, and a mean of such stamps
// still converges on the true one. `run` launches the chain once, its counts zeroed.
template <typename Run>
void link_times(Chain& c, int blocks, const std::vector<Link>& links, double copy, char parts, int slots,
                Run&& run) {
    const size_t n = static_cast<size_t>(kMaxLinks) * blocks * kStamps;
    CHECK(cudaMalloc(&c.stamps, n * sizeof(uint64_t)));
    for (int i = 0; i < 2; ++i) {
        CHECK(cudaMemset(c.stamps, 0, n * sizeof(uint64_t)));
        run();
        CHECK(cudaDeviceSynchronize());
    }
    std::vector<uint64_t> t(n);
    CHECK(cudaMemcpy(t.data(), c.stamps, n * sizeof(uint64_t), cudaMemcpyDeviceToHost));
    CHECK(cudaFree(c.stamps));
    c.stamps = nullptr;
    // Relative to the earliest stamp: the clock's nanoseconds since its epoch (~1.8e18) would keep
    // only a quarter of a microsecond in a double, and their sums far less.
    uint64_t base = UINT64_MAX;
    for (size_t i = 0; i < n; ++i)
        if (t[i] && i % kStamps < kCycSeen) base = std::min(base, t[i]);
    auto at = [&](int l, int b, int k) {
        return static_cast<double>(t[(static_cast<size_t>(l) * blocks + b) * kStamps + k] - base);
    };
    auto last = [&](int l, int k) {
        double m = 0;
        for (int b = 0; b < blocks; ++b) m = std::max(m, at(l, b, k));
        return m;
    };
    auto first = [&](int l, int k) {
        double m = 1e300;
        for (int b = 0; b < blocks; ++b) m = std::min(m, at(l, b, k));
        return m;
    };
    auto mean = [](const std::vector<double>& v) {
        double sum = 0;
        for (double x : v) sum += x;
        return sum / static_cast<double>(v.size());
    };
    auto sd = [&](const std::vector<double>& v) {
        const double m = mean(v);
        double sum = 0;
        for (double x : v) sum += (x - m) * (x - m);
        return std::sqrt(sum / static_cast<double>(v.size()));
    };
    std::vector<double> link, tiles, spread, end, release, wait, staging, seen_spread, staged_spread;
    // Staging's steps in SM cycles: seen to loaded and on to staged, or (form 'B' and its kin) seen to
    // rotated (the loads with it), met and staged; staging's cycles and nanoseconds summed for the clock
    // rate.
    std::vector<double> load_cyc, rotate_cyc, meet_cyc, quantise_cyc;
    double stage_cyc = 0, stage_ns = 0;
    std::vector<double> link_sd, block_late(blocks, 0.0), kind_link[4], kind_stream[4];
    std::vector<int> last_count(blocks, 0);
    for (int l = 1; l + 1 < c.links; ++l) {
        const double released_before = last(l - 1, kReleased),
                     us = (last(l, kReleased) - released_before) / 1e3;
        link.push_back(us);
        if (l < 256) {
            kind_link[l % 4].push_back(us);
            kind_stream[l % 4].push_back(static_cast<double>(links[l].n) * links[l].k / 4 / (copy * 1e3));
        }
        std::vector<double> done(blocks);
        for (int b = 0; b < blocks; ++b) {
            done[b] = at(l, b, kTiles) / 1e3;
            tiles.push_back((at(l, b, kTiles) - at(l, b, kStaged)) / 1e3);
            end.push_back((at(l, b, kStored) - at(l, b, kTiles)) / 1e3);
            release.push_back((at(l, b, kReleased) - at(l, b, kStored)) / 1e3);
            wait.push_back((at(l, b, kSeen) - released_before) / 1e3);
            staging.push_back((at(l, b, kStaged) - at(l, b, kSeen)) / 1e3);
            const uint64_t* cyc = &t[(static_cast<size_t>(l) * blocks + b) * kStamps];
            if (cyc[kCycStaged] != 0) {
                // The clock's low 32 bits: differences modulo 2^32.
                auto d = [&](int a, int b) {
                    return static_cast<double>(static_cast<uint32_t>(cyc[a] - cyc[b]));
                };
                if (cyc[kCycLoaded] != 0) {
                    load_cyc.push_back(d(kCycLoaded, kCycSeen));
                    quantise_cyc.push_back(d(kCycStaged, kCycLoaded));
                }
                if (cyc[kCycMet] != 0) {
                    rotate_cyc.push_back(d(kCycRotated, kCycSeen));
                    meet_cyc.push_back(d(kCycMet, kCycRotated));
                    quantise_cyc.push_back(d(kCycStaged, kCycMet));
                }
                stage_cyc += d(kCycStaged, kCycSeen);
                stage_ns += at(l, b, kStaged) - at(l, b, kSeen);
            }
        }
        const double done_mean = mean(done);
        link_sd.push_back(sd(done));
        int latest = 0;
        for (int b = 0; b < blocks; ++b) {
            block_late[b] += done[b] - done_mean;
            if (done[b] > done[latest]) latest = b;
        }
        ++last_count[latest];
        spread.push_back((last(l, kTiles) - first(l, kTiles)) / 1e3);
        seen_spread.push_back((last(l, kSeen) - first(l, kSeen)) / 1e3);
        staged_spread.push_back((last(l, kStaged) - first(l, kStaged)) / 1e3);
    }
    for (double& v : block_late) v /= static_cast<double>(link.size());
    int ever_last = 0, most_last = 0;
    for (int v : last_count) {
        ever_last += v > 0;
        most_last = std::max(most_last, v);
    }
    std::printf(
        "{\"form\": \"%s\", \"slots\": %d, \"link_us\": %.2f, \"tiles_us\": %.2f, \"tiles_spread_us\": %.2f, "
        "\"end_us\": %.2f, \"release_us\": %.2f, \"wait_us\": %.2f, \"staging_us\": %.2f, "
        "\"seen_spread_us\": %.2f, \"staged_spread_us\": %.2f, \"tiles_done_sd_us\": %.2f, "
        "\"block_mean_sd_us\": %.2f, \"blocks_ever_last\": %d, \"most_last\": %d, \"links\": %d, "
        "\"kinds\": [",
        (std::string(row_form(parts)) + ", stamped").c_str(), slots, mean(link), mean(tiles), mean(spread),
        mean(end), mean(release), mean(wait), mean(staging), mean(seen_spread), mean(staged_spread),
        mean(link_sd), sd(block_late), ever_last, most_last, static_cast<int>(link.size()));
    for (int k = 0; k < 4; ++k)
        std::printf("%s{\"kind\": %d, \"link_us\": %.2f, \"stream_us\": %.2f}", k ? ", " : "", k,
                    mean(kind_link[k]), mean(kind_stream[k]));
    std::printf("]");
    if (stage_ns > 0)
        std::printf(", \"ghz\": %.3f, \"quantise_cycles\": %.0f", stage_cyc / stage_ns, mean(quantise_cyc));
    if (!load_cyc.empty()) std::printf(", \"load_cycles\": %.0f", mean(load_cyc));
    if (!rotate_cyc.empty())
        std::printf(", \"rotate_cycles\": %.0f, \"meet_cycles\": %.0f", mean(rotate_cyc), mean(meet_cyc));
    std::printf("}\n");
}

double copy_gb_s() {
    const size_t bytes = size_t(1) << 30;
    void *a, *b;
    CHECK(cudaMalloc(&a, bytes));
    CHECK(cudaMalloc(&b, bytes));
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    CHECK(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice));
    float best = 1e30f;
    for (int i = 0; i < 10; ++i) {
        CHECK(cudaEventRecord(e0));
        CHECK(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice));
        CHECK(cudaEventRecord(e1));
        CHECK(cudaEventSynchronize(e1));
        float ms;
        CHECK(cudaEventElapsedTime(&ms, e0, e1));
        best = std::min(best, ms);
    }
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
    return 2.0 * bytes / (best * 1e-3) / 1e9;
}

// The kernel a form runs: the fixed forms' own (FixedForm; 'a' with `generic`, NIWA_DATAFLOW_GENERIC, the
// one that reads the flags from Chain, to measure what fixing them gains), the other forms' that one.
const void* kernel_of(char parts, bool generic) {
    switch (parts) {
        case 'a':
            if (!generic) return reinterpret_cast<const void*>(chain_kernel<FormA>);
            break;
        case 'B':
            return reinterpret_cast<const void*>(chain_kernel<FormB>);
        case 'F':
            return reinterpret_cast<const void*>(chain_kernel<FormF>);
        case 'E':
        case 'H':
            return reinterpret_cast<const void*>(chain_kernel<FormE>);
    }
    return reinterpret_cast<const void*>(chain_kernel<RunTimeForm>);
}

}  // namespace

int main() {
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    const double copy = copy_gb_s();
    const bool generic = std::getenv("NIWA_DATAFLOW_GENERIC") != nullptr;
    std::printf(
        "{\"gpu\": \"%s\", \"sms\": %d, \"copy_gb_s\": %.1f, \"generic\": %s, \"consumer_warps\": %d}\n",
        prop.name, prop.multiProcessorCount, copy, generic ? "true" : "false", kConsumerWarps);

    // The 27B layout's one-row matmuls in step order (kernels/../MODEL.md: 64 layers, every
    // fourth full attention; q+k+v stacked at one token as since e48e381).
    std::vector<std::pair<int, int>> shapes;  // (k, n)
    // MODEL.md: layer i is full attention iff (i + 1) % 4 == 0, the others Gated DeltaNet.
    auto attention_layer = [](int layer) { return (layer + 1) % 4 == 0; };
    for (int layer = 0; layer < 64; ++layer) {
        const bool attention = attention_layer(layer);
        shapes.push_back({5120, attention ? 14336 : 16384});
        shapes.push_back({6144, 5120});
        shapes.push_back({5120, 34816});
        shapes.push_back({17408, 5120});
    }
    shapes.push_back({5120, 248320});
    Chain c{};
    c.links = static_cast<int>(shapes.size());
    size_t weight_bytes = 0, y_elems = 0;
    for (const auto& [k, n] : shapes) {
        weight_bytes += static_cast<size_t>(n) * k / 4;
        y_elems += n;
    }
    uint8_t *w, *wt, *wf;
    __half *y, *x0;
    CHECK(cudaMalloc(&w, weight_bytes));
    CHECK(cudaMalloc(&wt, weight_bytes));
    CHECK(cudaMalloc(&wf, weight_bytes));
    CHECK(cudaMalloc(&y, y_elems * sizeof(__half)));
    CHECK(cudaMalloc(&x0, shapes[0].first * sizeof(__half)));
    CHECK(cudaMalloc(&c.done, 4 * kMaxLinks * sizeof(unsigned)));
    c.amax = c.done + kMaxLinks;
    c.next = reinterpret_cast<int*>(c.amax + kMaxLinks);
    c.sumsq = reinterpret_cast<float*>(c.next + kMaxLinks);
    size_t wo = 0, yo = 0;
    std::vector<Link> links(c.links);
    for (int l = 0; l < c.links; ++l) {
        const auto [k, n] = shapes[l];
        links[l] = Link{reinterpret_cast<const uint32_t*>(w + wo), wt + wo, wf + wo, y + yo, k, n,
                        std::sqrt(1.5f / static_cast<float>(k))};
        wo += static_cast<size_t>(n) * k / 4;
        yo += n;
    }
    CHECK(cudaMemcpyToSymbol(kLinks, links.data(), links.size() * sizeof(Link)));
    // Form 'D''s chain: the same matmuls (their weights and outputs), each GDN layer's recurrent step
    // after its qkv+z link; the states random (|S| ~ 11 rms, so o keeps x's size), each head's decay in
    // [0.9, 1) and beta in [0.3, 0.8).
    constexpr int kGdnLayers = 48;
    const size_t state_floats = static_cast<size_t>(kDeltaHeads) * 128 * 128;
    std::vector<Link> dlinks;
    float *dstate, *dstate0, *dgb;
    __half* dy;
    CHECK(cudaMalloc(&dstate, kGdnLayers * state_floats * sizeof(float)));
    CHECK(cudaMalloc(&dstate0, kGdnLayers * state_floats * sizeof(float)));
    CHECK(cudaMalloc(&dgb, kGdnLayers * 2 * kDeltaHeads * sizeof(float)));
    CHECK(cudaMalloc(&dy, kGdnLayers * 128 * kDeltaHeads * sizeof(__half)));
    std::vector<float> hstate(state_floats), hgb(2 * kDeltaHeads);  // layer 0's, for the check
    {
        std::vector<float> all_state(kGdnLayers * state_floats), all_gb(kGdnLayers * 2 * kDeltaHeads);
        uint32_t r = 99;
        for (float& v : all_state) {
            r = r * 1664525u + 1013904223u;
            v = (static_cast<float>(r >> 8) / 16777216.0f - 0.5f) * 38.0f;
        }
        for (size_t i = 0; i < all_gb.size(); ++i) {
            r = r * 1664525u + 1013904223u;
            const float f = static_cast<float>(r >> 8) / 16777216.0f;
            all_gb[i] = i % 2 ? 0.3f + 0.5f * f : 0.9f + 0.1f * f;
        }
        std::copy(all_state.begin(), all_state.begin() + state_floats, hstate.begin());
        std::copy(all_gb.begin(), all_gb.begin() + 2 * kDeltaHeads, hgb.begin());
        CHECK(
            cudaMemcpy(dstate0, all_state.data(), all_state.size() * sizeof(float), cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(dgb, all_gb.data(), all_gb.size() * sizeof(float), cudaMemcpyHostToDevice));
    }
    for (int l = 0, gdn = 0; l < c.links; ++l) {
        dlinks.push_back(links[l]);
        if (l + 1 < c.links && l % 4 == 0 && !attention_layer(l / 4)) {
            Link d{};
            d.y = dy + static_cast<size_t>(gdn) * 128 * kDeltaHeads;
            d.n = 128 * kDeltaHeads;
            d.rk = 1.0f;
            d.state = dstate + gdn * state_floats;
            d.gb = dgb + gdn * 2 * kDeltaHeads;
            dlinks.push_back(d);
            ++gdn;
        }
    }
    CHECK(cudaMemcpyToSymbol(kLinks, dlinks.data(), dlinks.size() * sizeof(Link), kDeltaBase * sizeof(Link)));
    const size_t state_bytes = 2 * kGdnLayers * state_floats * sizeof(float);  // read and written a step
    fill_codes<<<4 * prop.multiProcessorCount, 256>>>(reinterpret_cast<uint32_t*>(w), weight_bytes / 4,
                                                      12345u);
    CHECK(cudaGetLastError());
    for (const Link& L : links)
        tile_codes<<<4 * prop.multiProcessorCount, 256>>>(reinterpret_cast<const uint8_t*>(L.w),
                                                          const_cast<uint8_t*>(L.wt), L.k, L.n);
    for (const Link& L : links)
        tile_codes_by_field<<<4 * prop.multiProcessorCount, 256>>>(L.w, const_cast<uint8_t*>(L.wf), L.k, L.n);
    CHECK(cudaGetLastError());
    std::vector<__half> hx(shapes[0].first);
    uint32_t s = 7;
    for (auto& v : hx) {
        s = s * 1664525u + 1013904223u;
        v = __float2half(static_cast<float>(static_cast<int>(s >> 8) % 2001 - 1000) / 250.0f);
    }
    CHECK(cudaMemcpy(x0, hx.data(), hx.size() * sizeof(__half), cudaMemcpyHostToDevice));
    c.x0 = x0;
    for (const __half& v : hx) c.x0_amax = std::max(c.x0_amax, std::fabs(__half2float(v)));
    // Form 'N': the residual stream starts as link 0's x, its norm's weight (with the rotation's signs)
    // random in +-[0.5, 1.5].
    std::vector<float> hr(kNormWidth);
    std::vector<__half> hg(kNormWidth);
    for (int i = 0; i < kNormWidth; ++i) {
        hr[i] = __half2float(hx[i]);
        c.x0_sumsq += hr[i] * hr[i];
        s = s * 1664525u + 1013904223u;
        hg[i] = __float2half((s >> 31 ? -1.0f : 1.0f) *
                             (0.5f + static_cast<float>((s >> 8) & 0xffff) / 65536.0f));
    }
    float* resid0;
    __half* gamma;
    CHECK(cudaMalloc(&c.resid, kNormWidth * sizeof(float)));
    CHECK(cudaMalloc(&resid0, kNormWidth * sizeof(float)));
    CHECK(cudaMalloc(&gamma, kNormWidth * sizeof(__half)));
    CHECK(cudaMemcpy(resid0, hr.data(), kNormWidth * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(gamma, hg.data(), kNormWidth * sizeof(__half), cudaMemcpyHostToDevice));
    c.gamma = gamma;

    const size_t smem = kMaxSlots * kSlotBytes + kMaxK + 2 * kMaxSlots * sizeof(uint64_t) +
                        2 * kConsumerWarps * 4 + 2 * kConsumerWarps * 16 * 4 + (kMaxShareRows + 3) * 4 +
                        (kMaxSlots + kMaxTiles + 3) * 4;
    // Every kernel kernel_of gives its shared memory: asked for every letter, as several share one.
    for (int parts = 'A'; parts <= 'z'; ++parts)
        for (bool g : {false, true})
            CHECK(cudaFuncSetAttribute(kernel_of(static_cast<char>(parts), g),
                                       cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
    const int blocks = prop.multiProcessorCount;
    const int all = c.links;
    // The links' counts, absmaxes, run-time tiles and sums of squares zeroed, and the residual stream
    // back at link 0's x, as every chain's first launch needs them.
    // Form 'D' (`states`): the GDN states back as well.
    auto reset_counts = [&](bool states = false) {
        CHECK(cudaMemsetAsync(c.done, 0, 4 * kMaxLinks * sizeof(unsigned)));
        CHECK(cudaMemcpyAsync(c.resid, resid0, kNormWidth * sizeof(float), cudaMemcpyDeviceToDevice));
        if (states)
            CHECK(cudaMemcpyAsync(dstate, dstate0, kGdnLayers * state_floats * sizeof(float),
                                  cudaMemcpyDeviceToDevice));
    };
    // `parts`: 'f' the full link (x staged, rows summed), 's' x staged only, 'r' the ring only; 'i'
    // the full link with row_dot_ilp; 'm' the full link in tiles on the tensor cores, 'M' their ring
    // only, 'k' the tiles with each chunk's K split over the warps; 't' and 'T' as 'k' and 'M' with
    // the codes in fragment order (a bulk copy an 8-row group of a chunk); 'q' as 't' with x paired,
    // 'p' as 'q' with the sums deferred to the link's end; 'x' as 'p' by consume_split, 'y' as 'x' with
    // K by field, 'u' as 'y' with a warp's units of a chunk unrolled; 'd' as 'u' with a quarter of a
    // link's tiles taken at run time (Chain::tail), 'a' with all of them. The rotated forms are 'a'
    // with x rotated (below, at their timings), 'B' and its kin rotating a block a warp.
    auto one_of = [](char parts, const char* forms) { return std::strchr(forms, parts) != nullptr; };
    auto rotated = [&](char parts) { return one_of(parts, "RNDSBEFH"); };
    auto with_norms = [&](char parts) { return one_of(parts, "NDEH"); };  // the residual and its norms
    auto recurrent = [&](char parts) { return one_of(parts, "DH"); };     // with the GDN recurrent links
    auto on_tensor_cores = [&](char parts) { return one_of(parts, "mMktTqpxyudawhg") || rotated(parts); };
    auto launch = [&](int slots, bool wait, int first = 0, int count = -1, char parts = 'f') {
        c.slots = slots;
        c.wait = wait;
        c.stage = !one_of(parts, "rMT");
        c.rows = one_of(parts, "fimktqpxyudawhg") || rotated(parts);
        c.ilp = parts == 'i';
        c.mma = on_tensor_cores(parts);
        c.split = one_of(parts, "ktqp");
        c.tiled = one_of(parts, "tTqpxyudawhg") || rotated(parts);
        c.local = one_of(parts, "xyudawhg") || rotated(parts);
        c.by_field = one_of(parts, "yudawhg") || rotated(parts);
        c.unrolled = one_of(parts, "udawhg") || rotated(parts);
        c.tail = parts == 'd' ? 25 : one_of(parts, "awhg") || rotated(parts) ? 100 : 0;
        c.rotate = rotated(parts);
        c.skip_transform = one_of(parts, "SF");
        c.norms = with_norms(parts);
        c.halve = parts == 'h' ? 1 : parts == 'g' ? 8192 : 0;
        c.warp_release = parts == 'w';
        c.paired = one_of(parts, "qp");
        c.deferred = parts == 'p';
        c.base = recurrent(parts) ? kDeltaBase : 0;
        c.first = c.base + first;
        c.links = count >= 0 ? count : recurrent(parts) ? static_cast<int>(dlinks.size()) : all;
        void* args[] = {&c};
        CHECK(cudaLaunchCooperativeKernel(kernel_of(parts, generic), dim3(blocks), dim3(kThreads), args, smem,
                                          0));
    };

    // NIWA_DATAFLOW_FORMS=<letters>: only the forms (and the checks) whose parts are among the letters,
    // 'L' for a launch a link (all of them when unset).
    const char* forms = std::getenv("NIWA_DATAFLOW_FORMS");
    const char* only = std::getenv("NIWA_DATAFLOW_ONLY");
    constexpr const char* kAnyWarps = "aTBFEH";  // the forms every build runs
    if (kConsumerWarps != 8 &&
        (only != nullptr ? std::strchr(kAnyWarps, only[0]) == nullptr
                         : forms == nullptr || forms[std::strspn(forms, kAnyWarps)] != 0)) {
        std::fprintf(stderr,
                     "built for %d consumer warps: only forms 'a', 'B', 'F', 'E', 'H' and the ring alone run "
                     "(NIWA_DATAFLOW_FORMS=%s)\n",
                     kConsumerWarps, kAnyWarps);
        return 2;
    }
    auto wanted = [&](char parts) { return forms == nullptr || std::strchr(forms, parts) != nullptr; };

    // NIWA_DATAFLOW_ONLY=<parts>[0]: that form alone, launched twice (at its deepest ring, with the
    // waits, or without them after a 0), and nothing else: for a profiler (run.sh dataflow_stalls).
    // NIWA_DATAFLOW_LAUNCHES=n launches it n times instead, and prints (on stderr) the wall-clock span
    // of the launches in ms since the epoch, for a sampler of the card's clock and power (run.sh
    // dataflow_clocks).
    if (only != nullptr) {
        const char* n_env = std::getenv("NIWA_DATAFLOW_LAUNCHES");
        const int launches = n_env != nullptr ? std::max(1, std::atoi(n_env)) : 2;
        auto epoch_ms = [] {
            return std::chrono::duration<double, std::milli>(
                       std::chrono::system_clock::now().time_since_epoch())
                .count();
        };
        const double from_ms = epoch_ms();
        for (int i = 0; i < launches; ++i) {
            reset_counts(recurrent(only[0]));
            const int deepest = on_tensor_cores(only[0]) ? kMmaSlots : kMaxSlots;
            launch(deepest, only[1] != '0', 0, -1, only[0]);
            CHECK(cudaDeviceSynchronize());
        }
        if (n_env != nullptr)
            std::fprintf(stderr, "{\"form\": \"%s\", \"launches\": %d, \"from_ms\": %.1f, \"to_ms\": %.1f}\n",
                         row_form(only[0]), launches, from_ms, epoch_ms());
        return 0;
    }

    // Exactness: the first links against the CPU oracle, at the deepest ring and the shallowest, and
    // with row_dot_ilp.
    const int checked = 6;
    int wrong = 0;  // forms whose check failed: still timed, and the probe fails at its end
    const std::pair<int, char> checks[] = {
        {kMaxSlots, 'f'}, {2, 'f'},         {kMaxSlots, 'i'}, {kMmaSlots, 'm'}, {2, 'm'},
        {kMmaSlots, 'k'}, {2, 'k'},         {kMmaSlots, 't'}, {2, 't'},         {kMmaSlots, 'q'},
        {kMmaSlots, 'p'}, {2, 'p'},         {kMmaSlots, 'x'}, {2, 'x'},         {kMmaSlots, 'y'},
        {2, 'y'},         {kMmaSlots, 'u'}, {2, 'u'},         {kMmaSlots, 'd'}, {2, 'd'},
        {kMmaSlots, 'a'}, {2, 'a'},         {kMmaSlots, 'w'}, {2, 'w'},         {kMmaSlots, 'h'},
        {2, 'h'},         {kMmaSlots, 'g'}, {2, 'g'},         {kMmaSlots, 'R'}, {2, 'R'},
        {kMmaSlots, 'N'}, {2, 'N'},         {kMmaSlots, 'D'}, {2, 'D'},         {kMmaSlots, 'B'},
        {2, 'B'},         {kMmaSlots, 'E'}, {2, 'E'},         {kMmaSlots, 'H'}, {2, 'H'},
    };
    for (const auto& [slots, parts] : checks) {
        if (!wanted(parts)) continue;
        reset_counts(recurrent(parts));
        launch(slots, true, 0, -1, parts);
        CHECK(cudaDeviceSynchronize());
        std::vector<__half> src = hx, prev;  // the next link's x; the last link's rows (form 'D')
        std::vector<float> resid = hr;       // form 'N': the residual stream as the GPU's links leave it
        const std::vector<Link>& chain = recurrent(parts) ? dlinks : links;
        int bad = 0;
        for (int l = 0; l < checked && !bad; ++l) {
            const Link& L = chain[l];
            if (L.state != nullptr) {
                // A recurrent step against its oracle: fp32 on the GPU, fp16 out (~3e-4).
                std::vector<__half> got(L.n);
                CHECK(cudaMemcpy(got.data(), L.y, L.n * sizeof(__half), cudaMemcpyDeviceToHost));
                const std::vector<double> want = cpu_delta(prev, hstate, hgb);
                double e2 = 0, r2 = 0;
                for (int r = 0; r < L.n; ++r) {
                    const double e = __half2float(got[r]) - want[r];
                    e2 += e * e;
                    r2 += want[r] * want[r];
                }
                const double rel = std::sqrt(e2 / r2);
                bad += rel > 2e-3;
                std::printf(
                    "{\"check\": \"link %d\", \"slots\": %d, \"rows\": \"%s\", \"recurrent\": true, "
                    "\"n\": %d, \"rel_rms\": %.6f, \"y0\": %g, \"want0\": %g}\n",
                    l, slots, row_form(parts), L.n, rel, __half2float(got[0]), want[0]);
                src.assign(got.begin(), got.begin() + chain[l + 1].k);
                prev = got;
                continue;
            }
            std::vector<uint32_t> hw(static_cast<size_t>(L.n) * L.k / 16);
            CHECK(cudaMemcpy(hw.data(), L.w, hw.size() * 4, cudaMemcpyDeviceToHost));
            std::vector<__half> got(L.n);
            CHECK(cudaMemcpy(got.data(), L.y, L.n * sizeof(__half), cudaMemcpyDeviceToHost));
            if (rotated(parts)) {
                // Against x rotated exactly: the rows' error relative to their rms (int8 x by a block's
                // absmax: ~1 %), and rows off by more than a tenth of the rms counted as wrong. Form 'N':
                // the links of 5,120 inputs take the residual normed, those of 5,120 rows add into it.
                const bool normed = with_norms(parts) && L.k == kNormWidth;
                std::vector<double> x(L.k);
                double ss = 0;
                for (int i = 0; i < L.k; ++i) {
                    x[i] =
                        normed ? static_cast<double>(resid[i]) * __half2float(hg[i]) : __half2float(src[i]);
                    if (normed) ss += static_cast<double>(resid[i]) * resid[i];
                }
                std::vector<double> want = cpu_link_rotated(hw, x, L.k, L.n, L.rk);
                if (normed)
                    for (double& v : want) v /= std::sqrt(ss / kNormWidth + 1e-6);
                if (with_norms(parts) && L.n == kNormWidth)
                    for (int i = 0; i < L.n; ++i) resid[i] += __half2float(got[i]);
                double e2 = 0, r2 = 0, emax = 0;
                for (int r = 0; r < L.n; ++r) {
                    const double e = __half2float(got[r]) - want[r];
                    e2 += e * e;
                    r2 += want[r] * want[r];
                    emax = std::max(emax, std::fabs(e));
                }
                const double rms = std::sqrt(r2 / L.n), rel = std::sqrt(e2 / r2);
                for (int r = 0; r < L.n; ++r)
                    if (std::fabs(__half2float(got[r]) - want[r]) > 0.1 * rms && bad++ < 3)
                        std::printf("link %d row %d: %g, the CPU %g\n", l, r, __half2float(got[r]), want[r]);
                bad += rel > 0.02;
                std::printf(
                    "{\"check\": \"link %d\", \"slots\": %d, \"rows\": \"%s\", \"k\": %d, \"n\": %d, "
                    "\"off_rows\": %d, \"rel_rms\": %.5f, \"max_err_over_rms\": %.4f, \"y0\": %g}\n",
                    l, slots, row_form(parts), L.k, L.n, bad, rel, emax / rms, __half2float(got[0]));
                src.assign(got.begin(), got.begin() + chain[l + 1].k);
                prev = got;
                continue;
            }
            const std::vector<__half> want = cpu_link(hw, src, L.k, L.n, L.rk);
            for (int r = 0; r < L.n; ++r)
                if (__half_as_ushort(got[r]) != __half_as_ushort(want[r])) {
                    if (bad++ < 3)
                        std::printf("link %d row %d: %g, the CPU %g\n", l, r, __half2float(got[r]),
                                    __half2float(want[r]));
                }
            std::printf(
                "{\"check\": \"link %d\", \"slots\": %d, \"rows\": \"%s\", \"k\": %d, \"n\": %d, "
                "\"mismatches\": %d, \"y0\": %g}\n",
                l, slots, row_form(parts), L.k, L.n, bad, __half2float(got[0]));
            src.assign(got.begin(), got.begin() + chain[l + 1].k);
            prev = got;
        }
        wrong += bad > 0;
    }

    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    // Runs `chain` six times (the counters zeroed before each, outside the timing) and prints its
    // median and best time, the first run left out. Form 'D' (`states`): its GDN states reset as well,
    // and their bytes (read and written) in its bound.
    auto time_chain = [&](const char* form, int slots, auto&& chain, bool states = false) {
        const size_t bytes = weight_bytes + (states ? state_bytes : 0);
        const double bound_us = bytes / (copy * 1e9) * 1e6;
        std::vector<float> ms;
        for (int i = 0; i < 6; ++i) {
            reset_counts(states);
            CHECK(cudaEventRecord(e0));
            chain();
            CHECK(cudaEventRecord(e1));
            CHECK(cudaEventSynchronize(e1));
            float t;
            CHECK(cudaEventElapsedTime(&t, e0, e1));
            if (i > 0) ms.push_back(t);
        }
        std::sort(ms.begin(), ms.end());
        const double us = ms[ms.size() / 2] * 1e3;
        std::printf(
            "{\"links\": %d, \"form\": \"%s\", \"slots\": %d, \"bytes\": %zu, \"us\": %.1f, "
            "\"best_us\": %.1f, \"bound_us\": %.1f, \"fraction\": %.4f}\n",
            states ? static_cast<int>(dlinks.size()) : all, form, slots, bytes, us, ms[0] * 1e3, bound_us,
            bound_us / us);
    };
    // A form with the waits and then without them ("..., no waits"), at each ring depth given.
    auto time_form = [&](const std::string& form, char parts, std::initializer_list<int> depths) {
        for (bool wait : {true, false})
            for (int slots : depths)
                time_chain((wait ? form : form + ", no waits").c_str(), slots,
                           [&] { launch(slots, wait, 0, -1, parts); }, recurrent(parts));
    };
    if (wanted('f')) time_form("one kernel", 'f', {kMaxSlots, 6, 4, 2});
    // The ring alone: the consumers free each slot as it lands, no x and no sums (what the producer's
    // bulk copies reach through the slots' barriers, the ceiling of the forms above).
    if (wanted('r'))
        for (int slots : {kMaxSlots, 2})
            time_chain("ring only", slots, [&] { launch(slots, true, 0, -1, 'r'); });
    // Where the consumers' time goes: x staged a link without the rows (no waits), and the rows on
    // independent chains, with and without the waits.
    if (wanted('s'))
        time_chain("x staged only, no waits", kMaxSlots, [&] { launch(kMaxSlots, false, 0, -1, 's'); });
    if (wanted('i')) time_form("one kernel, ilp rows", 'i', {kMaxSlots});
    // The rows in 16-row tiles on the tensor cores (a K chunk a slot, a bulk copy a row): with and
    // without the waits, by ring depth, and their ring alone.
    if (wanted('m')) time_form("mma tiles", 'm', {kMmaSlots, 4});
    // The same tiles with each chunk's K split over all eight warps (a slot frees after an eighth of
    // a chunk's work, as the row forms' slots do), their sums met in shared memory a tile.
    if (wanted('k')) time_form("mma tiles, K split", 'k', {kMmaSlots, 4});
    if (wanted('M')) time_chain("mma ring only", kMmaSlots, [&] { launch(kMmaSlots, true, 0, -1, 'M'); });
    // The split tiles with the codes in fragment order: two bulk copies a chunk instead of sixteen.
    if (wanted('t')) time_form("mma split, fragment order", 't', {kMmaSlots, 4});
    if (wanted('T'))
        time_chain("mma ring only, fragment order", kMmaSlots, [&] { launch(kMmaSlots, true, 0, -1, 'T'); });
    // And with x paired (no register moves for the mma's B), then with the sums deferred to the
    // link's end (no barrier a tile).
    if (wanted('q')) time_form("mma split, x paired", 'q', {kMmaSlots});
    if (wanted('p')) time_form("mma split, x paired, sums deferred", 'p', {kMmaSlots});
    // consume_split: each warp stages its own x, nothing block-wide until the link's end; and with K
    // by field, x staged with a load a word, straight into place.
    if (wanted('x')) time_form("mma split, warp-local x", 'x', {kMmaSlots, 4});
    if (wanted('y')) time_form("mma split, K by field", 'y', {kMmaSlots, 4});
    // And with a warp's 5 or 6 units of a chunk unrolled, on two sets of sums; and with x's absmax
    // from the block's own loads of x (a barrier at staging instead of the maxima at a link's end).
    if (wanted('u')) time_form("mma split, K by field, unrolled", 'u', {kMmaSlots, 4});
    // And with a quarter of a link's tiles, or all of them, taken by the blocks at run time.
    if (wanted('d')) time_form(row_form('d'), 'd', {kMmaSlots, 5, 4, 3});
    if (wanted('a')) time_form(row_form('a'), 'a', {kMmaSlots, 5, 4, 3});
    // And with the 5,120-row links in 8-row tiles, K in halves (Chain::halve), or only the down links.
    if (wanted('h')) time_form(row_form('h'), 'h', {kMmaSlots, 4});
    if (wanted('g')) time_form(row_form('g'), 'g', {kMmaSlots, 4});
    // And with x rotated by H_1024 as the model's inputs are, each warp the blocks its units touch.
    if (wanted('R')) time_form(row_form('R'), 'R', {kMmaSlots, 4});
    // And the same with the transform's arithmetic left out (wrong results): what the rotation's
    // staging and sums cost besides it.
    if (wanted('S')) time_form(row_form('S'), 'S', {4});
    // And with the residual stream and its RMS norms (the sum of squares from the rows' writers).
    if (wanted('N')) time_form(row_form('N'), 'N', {kMmaSlots, 4});
    // And with each GDN layer's recurrent step as a link of its own, its state streamed like weights.
    if (wanted('D')) time_form(row_form('D'), 'D', {kMmaSlots, 4});
    // And 'R' and 'N' with each block of x rotated once by one warp, one scale a link met at a barrier.
    if (wanted('B')) time_form(row_form('B'), 'B', {kMmaSlots, 4});
    if (wanted('E')) time_form(row_form('E'), 'E', {kMmaSlots, 4});
    // And 'B' without the transform's arithmetic (wrong results): what the rest of its staging costs.
    if (wanted('F')) time_form(row_form('F'), 'F', {4});
    // And 'E' with each GDN layer's recurrent step as a link ('D''s chain).
    if (wanted('H')) time_form(row_form('H'), 'H', {kMmaSlots, 4});
    // And with each warp releasing its own rows: no barrier after the rows' stores but the next
    // wait's (without the waits it keeps one, so only with them).
    if (wanted('w'))
        for (int slots : {kMmaSlots, 4})
            time_chain(row_form('w'), slots, [&] { launch(slots, true, 0, -1, 'w'); });
    if (wanted('L'))
        time_chain("a launch a link", kMaxSlots, [&] {
            for (int l = 0; l < all; ++l) launch(kMaxSlots, true, l, 1);
        });
    // Stamped at 4 slots, and every tile taken at run time at 2 and 7 as well (does a link's release
    // or staging take longer with more bytes in flight?).
    const std::pair<char, int> stamped[] = {
        {'u', 4}, {'d', 4}, {'a', 4}, {'a', 2}, {'a', kMmaSlots}, {'w', 4}, {'h', 4},
        {'g', 4}, {'R', 4}, {'S', 4}, {'N', 4}, {'B', 4},         {'E', 4}, {'F', 4},
    };
    for (const auto& form : stamped)
        if (wanted(form.first))
            link_times(c, blocks, links, copy, form.first, form.second, [&] {
                reset_counts();
                launch(form.second, true, 0, -1, form.first);
            });
    return wrong > 0;
}
