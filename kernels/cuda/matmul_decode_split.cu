// Ternary matmul at decode sizes (n <= 32 rows of x, Precision::Mixed) for PQ2_0S matrices at
// one row of x, of 32 MiB or more (the FFN's gate + up, the output head) or with rows of 16K
// inputs or more (the FFN's down); PQ2_0S is the layout the model loads PQ2_0 files in,
// formats.h. The grid, x's staging and the arithmetic are matmul_decode.cuh's, as for the staged
// kernel (matmul_decode.cu, measured faster on smaller matrices at 8-32 rows, where its whole
// first tile is in flight before x is staged); what differs is how the weight arrives. A PQ2_0S
// slice of a row is one 16-byte aligned run, so thread (g, tig) reads its two code words of a
// quant block of row g as one 8-byte load, and the run's scales as 8 bytes per half slice,
// straight into registers: no shared-memory staging. A warp takes its tiles half a slice (4
// quant blocks, 2 KB of the weight) at a time and loads the next half while it multiplies this
// one.
#include <algorithm>
#include <atomic>

#include "kernels/cuda/matmul_decode.cuh"
#include "kernels/cuda/pdl.cuh"

namespace niwa::kernels::cuda {

namespace {

constexpr int kWarps = 8;
constexpr int kUnitBlocks = 4;  // quant blocks a warp loads at once: half a slice

// One unit for thread (g, tig): code words 2 tig and 2 tig + 1 (x, y) of each block of rows
// g (c0) and g + 8 (c1), and the four blocks' fp16 scales of each row (s0, s1).
struct Unit {
    uint2 c0[kUnitBlocks], c1[kUnitBlocks];
    uint2 s0, s1;
};

// 8 bytes the kernel reads once: not kept in L1. Volatile: it stays where it is written relative
// to the mma, ahead of the work it should overlap.
__device__ __forceinline__ uint2 load_once(const uint8_t* p) {
    uint2 v;
    asm volatile("ld.global.nc.L1::no_allocate.v2.u32 {%0, %1}, [%2];" : "=r"(v.x), "=r"(v.y) : "l"(p));
    return v;
}

// Unit `half` (blocks 4 half .. + nb) of the slice whose runs start at run0 (row g) and run1
// (row g + 8); nb < 4 only in a short last run.
__device__ __forceinline__ void load_unit(const uint8_t* run0, const uint8_t* run1, int half, int nb, int tig,
                                          Unit& u) {
    const int codes = kSplitScaleBytes + 32 * kUnitBlocks * half + 8 * tig;
#pragma unroll
    for (int j = 0; j < kUnitBlocks; ++j)
        if (j < nb) {
            u.c0[j] = load_once(run0 + codes + 32 * j);
            u.c1[j] = load_once(run1 + codes + 32 * j);
        }
    u.s0 = load_once(run0 + 8 * half);
    u.s1 = load_once(run1 + 8 * half);
}

__device__ __forceinline__ float scale_of(uint2 s, int j) {
    const uint32_t w = j < 2 ? s.x : s.y;
    return __half2float(__ushort_as_half(static_cast<unsigned short>(w >> (16 * (j & 1)))));
}

// Block j of a unit as blocks_product takes it.
__device__ __forceinline__ BlockWords block_words(const Unit& u, int j) {
    return {u.c0[j].x, u.c1[j].x, u.c0[j].y, u.c1[j].y, scale_of(u.s0, j), scale_of(u.s1, j)};
}

// acc += the unit's nb blocks times x (xw, bias: the unit's first block's x words and sums); a
// whole unit's blocks interleave, all four with one x tile, two at a time with two (more x
// tiles: their own chains are independent already).
template <int NT>
__device__ __forceinline__ void unit_product(const Unit& u, int nb, const uint32_t* xw, const float* bias,
                                             int tig, float (&acc)[NT][4]) {
    constexpr int B = NT == 1 ? kUnitBlocks : NT == 2 ? 2 : 1;
    if (nb == kUnitBlocks) {
#pragma unroll
        for (int j0 = 0; j0 < kUnitBlocks; j0 += B) {
            BlockWords w[B];
#pragma unroll
            for (int b = 0; b < B; ++b) w[b] = block_words(u, j0 + b);
            blocks_product<NT, B>(w, xw + 64 * j0, 64, bias + j0 * NT * 8, tig, acc);
        }
        return;
    }
#pragma unroll
    for (int j = 0; j < kUnitBlocks; ++j)
        if (j < nb) {
            const BlockWords w[1] = {block_words(u, j)};
            blocks_product<NT, 1>(w, xw + 64 * j, 64, bias + j * NT * 8, tig, acc);
        }
}

template <int NT>
__device__ __forceinline__ void zero(float (&acc)[NT][4]) {
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int i = 0; i < 4; ++i) acc[nt][i] = 0.0f;
}

// Start of row `row`'s run for `slice` (rows past the weight read its last row; their sums are
// never stored).
__device__ __forceinline__ const uint8_t* run_of(const MatmulArgs& a, int64_t row, int slice) {
    return a.w + static_cast<size_t>(min(row, a.out - 1)) * a.stride +
           static_cast<size_t>(slice) * kSplitRunBytes;
}

// Two blocks an SM (up to 128 registers): a unit in flight while the other is multiplied. With
// three (80 registers, as before the two units alternated) the compiler spilled, and earlier kept
// the next unit's loads behind the multiply, so each unit waited a full trip to memory.
template <int NT>
__global__ void __launch_bounds__(kWarps * 32, 2) split_decode_kernel(DecodeParams p) {
    extern __shared__ __align__(16) uint8_t smem[];
    auto* xs = reinterpret_cast<uint32_t*>(smem);
    auto* bias = reinterpret_cast<float*>(xs + NT * 8 * kXWords);  // [quant block][x row]
    const MatmulArgs& a = p.a;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int g = lane >> 2, tig = lane & 3;
    const int group = blockIdx.x, slice = blockIdx.y;
    const int qb0 = slice * kSliceBlocks;
    const int nqb = min(kSliceBlocks, static_cast<int>(a.in / kQuantBlock) - qb0);
    const int64_t t0 = p.tiles * group / p.groups, t1 = p.tiles * (group + 1) / p.groups;
    const uint32_t* xw = xs + g * kXWords + 8 * tig;

    pdl_release();
    // The warp's tiles are t0 + warp + k kWarps, each two units (halves of the slice). The first
    // starts loading before x is staged (and before the kernel writing x has finished, when
    // launched to overlap it: pdl.cuh).
    int64_t t = t0 + warp;
    const uint8_t *run0 = run_of(a, t * kTileRows + g, slice),
                  *run1 = run_of(a, t * kTileRows + g + 8, slice);
    Unit cur;
    if (t < t1) load_unit(run0, run1, 0, min(kUnitBlocks, nqb), tig, cur);
    pdl_wait();
    stage_x<NT, WordPairs::Adjacent>(a, qb0, nqb, xs, bias);

    float acc[NT][4];
    zero(acc);
    if (nqb == kSliceBlocks) {
        // Whole runs (every slice of a row whose length is a multiple of 1024): two units a
        // tile, each loaded while the other is multiplied; the loads are issued in program order
        // ahead of the mma (load_once and mma_f16 are volatile), so nothing waits on a unit just
        // requested. After the last tile the first unit is loaded again: a cached read, never used.
        for (; t < t1; t += kWarps) {
            Unit second;
            load_unit(run0, run1, 1, kUnitBlocks, tig, second);
            unit_product<NT>(cur, kUnitBlocks, xw, bias, tig, acc);
            if (t + kWarps < t1) {
                run0 = run_of(a, (t + kWarps) * kTileRows + g, slice);
                run1 = run_of(a, (t + kWarps) * kTileRows + g + 8, slice);
            }
            load_unit(run0, run1, 0, kUnitBlocks, tig, cur);
            unit_product<NT>(second, kUnitBlocks, xw + 64 * kUnitBlocks, bias + kUnitBlocks * NT * 8, tig,
                             acc);
            store_tile<NT>(p, slice, t, g, tig, acc);
            zero(acc);
        }
    } else {
        // A short last run (nqb < 8 blocks): one or two units a tile, loaded as they go.
        for (; t < t1; t += kWarps) {
            run0 = run_of(a, t * kTileRows + g, slice);
            run1 = run_of(a, t * kTileRows + g + 8, slice);
            for (int h = 0; h * kUnitBlocks < nqb; ++h) {
                const int nb = min(kUnitBlocks, nqb - kUnitBlocks * h);
                load_unit(run0, run1, h, nb, tig, cur);
                unit_product<NT>(cur, nb, xw + 64 * kUnitBlocks * h, bias + kUnitBlocks * h * NT * 8, tig,
                                 acc);
            }
            store_tile<NT>(p, slice, t, g, tig, acc);
            zero(acc);
        }
    }
    sum_slices(p, group, t0, t1, reinterpret_cast<unsigned*>(smem + decode_x_bytes(NT)));
}

// Blocks of the kernel one SM holds, per device and x tile count (asked once).
template <int NT>
int blocks_per_sm(CudaOps& ops, size_t smem) {
    static std::atomic<int> cached[64] = {};
    std::atomic<int>& c = cached[ops.device() & 63];
    int n = c.load();
    if (n == 0) {
        NIWA_CUDA_CHECK(
            cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, split_decode_kernel<NT>, kWarps * 32, smem));
        n = std::max(n, 1);
        c.store(n);
    }
    return n;
}

}  // namespace

void launch_split_decode(CudaOps& ops, const MatmulArgs& a) {
    for_each_row_group(a, kDecodeMaxRows, [&](const MatmulArgs& pass) {
        with_x_tiles(static_cast<int>((pass.n + 7) / 8), [&](auto x_tiles) {
            constexpr int NT = decltype(x_tiles)::value;
            const size_t smem = decode_x_bytes(NT) + 16;
            static std::atomic<uint64_t> configured{0};
            allow_max_smem(ops, split_decode_kernel<NT>, configured);
            // One wave of blocks (measured: fewer, fuller blocks for small matrices are slower).
            const DecodeParams p =
                plan_decode(ops, pass, ops.props().multiProcessorCount * blocks_per_sm<NT>(ops, smem));
            const dim3 grid(static_cast<unsigned>(p.groups), static_cast<unsigned>(p.slices));
            NIWA_CUDA_CHECK(launch_overlapping(ops.overlap_launches(), split_decode_kernel<NT>, grid,
                                               dim3(kWarps * 32), smem, ops.stream(), p));
        });
    });
}

}  // namespace niwa::kernels::cuda
