// Ternary matmul at decode sizes (n <= 32 rows of x, Precision::Mixed): bandwidth-bound, so
// every packed weight byte is read once per call and decoded straight into tensor-core
// fragments.
//
// The grid is groups of output rows x slices of K (1024 inputs). A block stages its slice
// of x once, as fp16, in shared memory; its warps (16 on an H200) then stream 16-row tiles of
// the weight through per-warp cp.async rings (2 deep on an H200; 16-byte copies, rows
// aligned down to 16 bytes). A tile is 8 quant blocks; per block a warp decodes its codes
// into fp16 A fragments, runs 8 mma.sync m16n8k16 steps per 8 rows of x into a block
// accumulator, and multiplies that by the block's fp16 scale once. Inside a block the order
// of the 128 inputs is free, so each thread takes two whole code words and x is stored
// pre-permuted to match; the codes go into fp16 as 1024 + q 4^s with one logic op (s = 0..2 by
// the code's bit position), x is stored times 4^-s, and the offset, the same for every weight
// row, is removed as one precomputed sum per block and x row: decoding costs 2 shifts and 8
// logic ops per 16 weights, all exact. Slices write partial sums; the last block of a row
// group to finish (a counter per group) adds them in slice order, so the result does not
// depend on scheduling.
#include <algorithm>
#include <atomic>
#include <mutex>
#include <vector>

#include "kernels/cuda/dequant.cuh"
#include "kernels/cuda/matmul.cuh"
#include "kernels/cuda/mma.cuh"
#include "kernels/cuda/pdl.cuh"

namespace niwa::kernels::cuda {

namespace {

// Warps per block and quant blocks per K slice (compile-time; -D overrides them for experiments).
#ifndef NIWA_DECODE_MAX_WARPS
#define NIWA_DECODE_MAX_WARPS 16
#endif
#ifndef NIWA_DECODE_SLICE_BLOCKS
#define NIWA_DECODE_SLICE_BLOCKS 8
#endif
constexpr int kMaxWarps = NIWA_DECODE_MAX_WARPS;
constexpr int kSliceBlocks = NIWA_DECODE_SLICE_BLOCKS;
constexpr int kTileRows = 16;  // weight rows per warp tile (one mma M)
// 16-byte chunks of a row's slice: up to 15 bytes ahead of it (rows are staged from 16-byte
// aligned starts) and its kSliceBlocks PQ2_0 blocks, one chunk of slack.
constexpr int kRowChunks = (15 + kSliceBlocks * kPq2BlockBytes + 15) / 16 + 1;
constexpr int kRowBytes = kRowChunks * 16;
constexpr int kStageBytes = kTileRows * kRowBytes;  // one tile in flight
constexpr int kXWords = kSliceBlocks * 64 + 2;      // fp16 pairs per x row; + 2 spreads the banks
constexpr int kMaxGroups = 4096;
constexpr int kCounterRing = 1 << 16;  // per device: calls take consecutive ranges

struct DecodeParams {
    MatmulArgs a;
    float* partial = nullptr;      // [slices][n][out] when slices > 1
    unsigned* counters = nullptr;  // [groups], zero between calls
    int slices = 1;
    int groups = 1;
    int64_t tiles = 0;
    int stages = 3;  // tiles in each warp's ring (2 or 3)
};

// Shared memory of a block: x's slice, its per-block bias sums, one ring of `stages` tiles per
// warp, a flag.
__host__ __device__ constexpr size_t decode_x_bytes(int nt) {
    return static_cast<size_t>(nt) * 8 * (kXWords + kSliceBlocks) * 4;
}
constexpr size_t decode_smem_bytes(int nt, int warps, int stages) {
    return decode_x_bytes(nt) + static_cast<size_t>(warps) * stages * kStageBytes + 16;
}

// Copies one tile's slice (rows tile*16 .. +16, quant blocks qb0 .. qb0 + nqb) into buf, each
// row from its 16-byte aligned start; row r's bytes begin at r * kRowBytes + (start & 15).
template <int BB>
__device__ __forceinline__ void stage_tile(const MatmulArgs& a, int64_t tile, int qb0, int nqb, uint8_t* buf,
                                           int lane) {
    const int len = nqb * BB;
    for (int idx = lane; idx < kTileRows * kRowChunks; idx += 32) {
        const int r = idx / kRowChunks, c = idx - r * kRowChunks;
        const int64_t row = tile * kTileRows + r;
        if (row >= a.out) continue;
        const auto s = reinterpret_cast<uintptr_t>(a.w + static_cast<size_t>(row) * a.stride +
                                                   static_cast<size_t>(qb0) * BB);
        const uintptr_t a0 = s & ~static_cast<uintptr_t>(15);
        const int chunks = static_cast<int>((s + len - a0 + 15) >> 4);
        if (c < chunks) cp_async16(buf + r * kRowBytes + 16 * c, reinterpret_cast<const void*>(a0 + 16 * c));
    }
}

// Where row `row`'s slice begins inside its staged bytes.
template <int BB>
__device__ __forceinline__ int staged_offset(const MatmulArgs& a, int64_t row, int qb0) {
    if (row >= a.out) return 0;
    return static_cast<int>(reinterpret_cast<uintptr_t>(a.w + static_cast<size_t>(row) * a.stride +
                                                        static_cast<size_t>(qb0) * BB) &
                            15);
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

// acc = this warp's 16-row tile times x's slice. Thread (g, tig) decodes code words tig and
// tig + 4 of rows g and g + 8; the B operand reads the matching x pairs.
template <DType T, int NT>
__device__ __forceinline__ void tile_product(const MatmulArgs& a, int64_t tile, int qb0, int nqb,
                                             const uint8_t* buf, const uint32_t* xs, const float* bias, int g,
                                             int tig, float (&acc)[NT][4]) {
    using F = TernaryFormat<T>;
    const int64_t r0 = tile * kTileRows + g;
    const uint8_t* b0 = buf + g * kRowBytes + staged_offset<F::kBytes>(a, r0, qb0);
    const uint8_t* b1 = buf + (g + 8) * kRowBytes + staged_offset<F::kBytes>(a, r0 + 8, qb0);
    const uint32_t* xw = xs + g * kXWords + 8 * tig;
#pragma unroll 2
    for (int qb = 0; qb < nqb; ++qb, b0 += F::kBytes, b1 += F::kBytes, xw += 64, bias += NT * 8) {
        const float d0 = F::scale(b0), d1 = F::scale(b1);
        const uint32_t wa0 = F::word(b0, tig), wb0 = F::word(b1, tig);
        const uint32_t wa1 = F::word(b0, tig + 4), wb1 = F::word(b1, tig + 4);
        // Two independent accumulator chains (one per code word) halve the mma dependency.
        float lo[NT][4] = {}, hi[NT][4] = {};
        mma_step<0, NT>(wa0, wb0, xw, lo);
        mma_step<0, NT>(wa1, wb1, xw + 32, hi);
        mma_step<2, NT>(wa0, wb0, xw, lo);
        mma_step<2, NT>(wa1, wb1, xw + 32, hi);
        mma_step<4, NT>(wa0, wb0, xw, lo);
        mma_step<4, NT>(wa1, wb1, xw + 32, hi);
        mma_step<6, NT>(wa0, wb0, xw, lo);
        mma_step<6, NT>(wa1, wb1, xw + 32, hi);
#pragma unroll
        for (int nt = 0; nt < NT; ++nt) {
            const float2 k = *reinterpret_cast<const float2*>(bias + nt * 8 + 2 * tig);  // x columns 2tig, +1
            acc[nt][0] += d0 * ((lo[nt][0] + hi[nt][0]) - k.x);
            acc[nt][1] += d0 * ((lo[nt][1] + hi[nt][1]) - k.y);
            acc[nt][2] += d1 * ((lo[nt][2] + hi[nt][2]) - k.x);
            acc[nt][3] += d1 * ((lo[nt][3] + hi[nt][3]) - k.y);
        }
    }
}

template <DType T, int NT>
__global__ void __launch_bounds__(kMaxWarps * 32) ternary_decode_kernel(DecodeParams p) {
    using F = TernaryFormat<T>;
    extern __shared__ __align__(16) uint8_t smem[];
    auto* xs = reinterpret_cast<uint32_t*>(smem);
    auto* bias = reinterpret_cast<float*>(xs + NT * 8 * kXWords);  // [quant block][x row]
    uint8_t* wbuf = smem + decode_x_bytes(NT);
    const MatmulArgs& a = p.a;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, warps = blockDim.x >> 5;
    const int g = lane >> 2, tig = lane & 3;
    const int stages = p.stages;
    const int group = blockIdx.x, slice = blockIdx.y;
    const int qb0 = slice * kSliceBlocks;
    const int nqb = min(kSliceBlocks, static_cast<int>(a.in / kQuantBlock) - qb0);
    const int64_t t0 = p.tiles * group / p.groups, t1 = p.tiles * (group + 1) / p.groups;
    uint8_t* ring = wbuf + warp * stages * kStageBytes;

    pdl_release();
    // The weight starts streaming before x is staged, and before the kernel that writes x
    // has finished when this one was launched to overlap it (pdl.cuh).
    int64_t next = t0 + warp;
    for (int s = 0; s < stages - 1; ++s, next += warps) {
        if (next < t1) stage_tile<F::kBytes>(a, next, qb0, nqb, ring + s * kStageBytes, lane);
        cp_async_commit();
    }
    pdl_wait();
    // x's slice as fp16 pairs (inputs 16w + e, 16w + e + 8 of each quant block), zero past n.
    const int words = nqb * 64;
#pragma unroll 4
    for (int idx = threadIdx.x; idx < NT * 8 * words; idx += blockDim.x) {
        const int r = idx / words, wd = idx - r * words;
        float lo = 0.0f, hi = 0.0f;
        if (r < a.n) {
            const float* xr = a.x + r * a.ldx + static_cast<int64_t>(qb0) * kQuantBlock +
                              (wd >> 6) * kQuantBlock + 16 * ((wd >> 3) & 7) + (wd & 7);
            lo = xr[0];
            hi = xr[8];
        }
        const float sc = pair_x_scale(wd & 7);
        xs[r * kXWords + wd] = f16x2_bits(lo * sc, hi * sc);
    }
    __syncthreads();
    // Per quant block and x row: the sum of (1024 4^-s + 1) x over the fp16 values just stored
    // (= (1024 + 4^s) times the stored x 4^-s), which biased_code_pair's offset adds.
    for (int pr = warp; pr < NT * 8 * nqb; pr += warps) {
        const int r = pr / nqb, qb = pr - r * nqb;
        float sum = 0.0f;
        for (int j = lane; j < 64; j += 32) {
            const uint32_t bits = xs[r * kXWords + qb * 64 + j];
            const float2 v = __half22float2(*reinterpret_cast<const __half2*>(&bits));
            sum += (1024.0f + 1.0f / pair_x_scale(j & 7)) * (v.x + v.y);
        }
        for (int off = 16; off > 0; off >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, off);
        if (lane == 0) bias[qb * NT * 8 + r] = sum;
    }
    __syncthreads();

    int stage = 0;
    for (int64_t t = t0 + warp; t < t1; t += warps, next += warps) {
        if (next < t1)
            stage_tile<F::kBytes>(a, next, qb0, nqb, ring + ((stage + stages - 1) % stages) * kStageBytes,
                                  lane);
        cp_async_commit();
        if (stages == 3)
            cp_async_wait<2>();
        else
            cp_async_wait<1>();
        __syncwarp();
        float acc[NT][4] = {};
        tile_product<T, NT>(a, t, qb0, nqb, ring + stage * kStageBytes, xs, bias, g, tig, acc);
        const int64_t r0 = t * kTileRows + g;
#pragma unroll
        for (int nt = 0; nt < NT; ++nt)
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                const int64_t r = r0 + (i >> 1) * 8, c = nt * 8 + 2 * tig + (i & 1);
                if (r >= a.out || c >= a.n) continue;
                if (p.slices == 1)
                    a.y[c * a.ldy + r] = acc[nt][i];
                else
                    p.partial[(static_cast<int64_t>(slice) * a.n + c) * a.out + r] = acc[nt][i];
            }
        __syncwarp();
        stage = (stage + 1) % stages;
    }
    cp_async_wait<0>();
    if (p.slices == 1) return;

    // The last slice of this row group to finish sums the partials in slice order.
    __threadfence();
    __syncthreads();
    auto* last = reinterpret_cast<unsigned*>(wbuf + warps * stages * kStageBytes);
    if (threadIdx.x == 0) {
        const unsigned prev = atomicAdd(&p.counters[group], 1u);
        *last = prev == static_cast<unsigned>(p.slices - 1);
        if (*last) p.counters[group] = 0;
    }
    __syncthreads();
    if (!*last) return;
    __threadfence();
    const int64_t row0 = t0 * kTileRows, rows = min(t1 * kTileRows, a.out) - row0;
    for (int64_t idx = threadIdx.x; idx < rows * a.n; idx += blockDim.x) {
        const int64_t c = idx / rows, r = row0 + idx % rows;
        float s = 0.0f;
        for (int sl = 0; sl < p.slices; ++sl)
            s += __ldcg(p.partial + (static_cast<int64_t>(sl) * a.n + c) * a.out + r);
        a.y[c * a.ldy + r] = s;
    }
}

// Per device: a ring of group counters, zeroed once; every call takes its own range, and the
// last block of each group sets its counter back to zero.
unsigned* group_counters(CudaOps& ops, int groups) {
    struct Ring {
        unsigned* p = nullptr;
        int cursor = 0;
    };
    static std::mutex mu;
    static std::vector<Ring> rings;
    std::lock_guard<std::mutex> lock(mu);
    const auto device = static_cast<size_t>(ops.device());
    if (rings.size() <= device) rings.resize(device + 1);
    Ring& ring = rings[device];
    if (!ring.p) {
        ring.p = static_cast<unsigned*>(ops.alloc(kCounterRing * sizeof(unsigned)));
        ops.zero(ring.p, kCounterRing * sizeof(unsigned));
        ops.synchronize();  // once: other streams of this device may use the ring next
    }
    if (ring.cursor + groups > kCounterRing) ring.cursor = 0;
    unsigned* p = ring.p + ring.cursor;
    ring.cursor += groups;
    return p;
}

template <DType T, int NT>
void launch(CudaOps& ops, const DecodeParams& p, dim3 grid, int warps, size_t smem) {
    static std::atomic<uint64_t> configured{0};  // one bit per device
    const uint64_t bit = uint64_t{1} << (ops.device() & 63);
    if (!(configured.load() & bit)) {
        NIWA_CUDA_CHECK(cudaFuncSetAttribute(ternary_decode_kernel<T, NT>,
                                             cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             static_cast<int>(ops.props().sharedMemPerBlockOptin)));
        configured.fetch_or(bit);
    }
    NIWA_CUDA_CHECK(launch_overlapping(ops.overlap_launches(), ternary_decode_kernel<T, NT>, grid,
                                       dim3(static_cast<unsigned>(warps * 32)), smem, ops.stream(), p));
}

template <DType T>
void launch_nt(CudaOps& ops, int nt, const DecodeParams& p, dim3 grid, int warps, size_t smem) {
    switch (nt) {
        case 1:
            return launch<T, 1>(ops, p, grid, warps, smem);
        case 2:
            return launch<T, 2>(ops, p, grid, warps, smem);
        case 3:
            return launch<T, 3>(ops, p, grid, warps, smem);
        default:
            return launch<T, 4>(ops, p, grid, warps, smem);
    }
}

// One launch over x rows [0, a.n), a.n <= 8 * nt.
void launch_pass(CudaOps& ops, const MatmulArgs& a, int nt, int warps, int stages) {
    const int nb = static_cast<int>(a.in / kQuantBlock);
    DecodeParams p;
    p.a = a;
    p.stages = stages;
    p.slices = (nb + kSliceBlocks - 1) / kSliceBlocks;
    p.tiles = (a.out + kTileRows - 1) / kTileRows;
    const size_t smem = decode_smem_bytes(nt, warps, stages);
    const cudaDeviceProp& prop = ops.props();
    const int per_sm = std::max<int>(1, static_cast<int>(prop.sharedMemPerMultiprocessor / (smem + 1024)));
    const int target = prop.multiProcessorCount * per_sm;
    p.groups = static_cast<int>(
        std::clamp<int64_t>(target / p.slices, 1, std::min<int64_t>(p.tiles, kMaxGroups)));  // one wave
    if (p.slices > 1) {
        const size_t partial_bytes = static_cast<size_t>(p.slices) * a.n * a.out * sizeof(float);
        p.partial = static_cast<float*>(ops.workspace(CudaOps::Workspace::Matmul, partial_bytes));
        p.counters = group_counters(ops, p.groups);
    }
    const dim3 grid(static_cast<unsigned>(p.groups), static_cast<unsigned>(p.slices));
    if (a.type == DType::PQ2_0)
        launch_nt<DType::PQ2_0>(ops, nt, p, grid, warps, smem);
    else
        launch_nt<DType::PTQ1_0>(ops, nt, p, grid, warps, smem);
}

}  // namespace

// The widest x tile and the most warps that fit the GPU's shared memory (an H200 takes all 32
// rows and 16 warps with 2-deep rings; a 99 KiB consumer part fewer), then as many passes as
// x needs. Warps, not ring depth, are what hides the decode and mma latencies.
void launch_ternary_decode(CudaOps& ops, const MatmulArgs& a) {
    const size_t limit = ops.props().sharedMemPerBlockOptin;
    struct Shape {
        int warps, stages;
    };
    constexpr Shape kShapes[] = {{32, 2}, {16, 2}, {8, 3}, {8, 2}, {4, 3}, {4, 2}};
    const int need = static_cast<int>((a.n + 7) / 8);
    for (int nt = need; nt >= 1; --nt)
        for (const Shape s : kShapes) {
            if (s.warps > kMaxWarps || decode_smem_bytes(nt, s.warps, s.stages) > limit) continue;
            for_each_row_group(a, 8 * nt, [&](const MatmulArgs& pass) {
                launch_pass(ops, pass, static_cast<int>((pass.n + 7) / 8), s.warps, s.stages);
            });
            return;
        }
    require(false, "matmul", "the GPU's shared memory is too small for the decode kernel");
}

}  // namespace niwa::kernels::cuda
