// MatmulChain (matmul_chain.h): one-row PQ2_0T matmuls in order in one persistent kernel.
//
// A grid of one wave of resident blocks (a cooperative launch) runs every link: a block takes the
// (row group, K slice) share the register kernel's launch would give it (plan_decode's rule over
// the same number of blocks), and between links it
//   1. arrives at a grid-wide barrier (one counter, a release at the GPU's scope) once its tiles
//      are stored,
//   2. issues the loads of its first weight unit of the next link (weights: nothing writes them),
//   3. waits for the barrier (an acquire): every block has finished the link before,
//   4. stages its slice of x in int8 (x8_quantize), x being the link before's partial sums, summed
//      there in slice order (each block sums its own slice's 1024 channels; the blocks of row
//      group 0 also store them, the link before's y), or a vector of the link's own (the link
//      before's y then summed by the grid's threads, in the same trip to the L2).
// So no slice sum runs as a tail of its own, and no block waits for a launch. The arithmetic
// (units, mma, scales, each tile's order) is split_decode_kernel's X8 form, and the sums are
// sum_outputs' (from 0, slice by slice): each y is bit for bit the separate kernel's.
//
// Measured (docs/BENCHMARKS.md, thirtieth pass): the 273 matmuls of a 27B step take as long this
// way as launched one by one (2.73 ms, 58 % of the copy rate); the barriers cost ~1.65 µs a link
// (NIWA_CHAIN_WAIT=0, below); the weights of the next link loaded ahead into shared memory or the
// L2 before the barrier measured slower, as did waiting for the producing row groups only.
#include "kernels/cuda/matmul_chain.h"

#include <algorithm>
#include <string>

#include "kernels/cuda/cuda_ops.h"
#include "kernels/cuda/decode_units.cuh"
#include "kernels/cuda/matmul_decode.cuh"
#include "kernels/cuda/matmul_decode_x8.cuh"
#include "kernels/cuda/wait_bound.cuh"

namespace niwa::kernels::cuda {

namespace {

constexpr int kWarps = 8, kThreads = kWarps * 32;

// A link as the kernel reads it (host-planned).
struct LinkArgs {
    const uint8_t* w;
    int64_t in, out, tiles;
    int slices, groups;
    const float* x;  // nullptr: the link before's partials (prev_partial, prev_slices, in == its out)
    float* y;
    float* partial;  // [slices][out]; y itself when slices == 1
    const float* prev_partial;
    float* prev_y;  // the link before's y where it has several slices (else nullptr: written)
    int64_t prev_out;
    int prev_slices;
    int sum_prev;  // the link before has several slices and this link does not read them:
                   // the grid's threads sum its y after the barrier
};

// A block's share of a link: row group `group`'s tiles [t0, t1) in K slice `slice`.
struct Share {
    bool active;
    int group, slice;
    int64_t t0, t1;
};

__device__ __forceinline__ Share share_of(const LinkArgs& l) {
    Share s;
    const int b = static_cast<int>(blockIdx.x);
    s.active = b < l.groups * l.slices;
    s.group = b % l.groups;
    s.slice = b / l.groups;
    s.t0 = l.tiles * s.group / l.groups;
    s.t1 = l.tiles * (s.group + 1) / l.groups;
    return s;
}

__device__ __forceinline__ const uint8_t* run_at(const LinkArgs& l, int64_t tile, int slice) {
    return l.w + tiled_run_at(l.in, tile * kTileRows, static_cast<int64_t>(slice) * kSplitRunElems);
}

// A grid-wide barrier in two halves, so a block's loads of the next link's weights go out between
// them: arriving orders the block's writes before it (a release at the GPU's scope, which also
// waits for the thread's loads in flight, so none are issued before it), and waiting until arrival
// number `target` (counting from 0 at the launch) makes every block's writes before its arrival
// visible after it. Bounded like sum_slices' wait: a grid that cannot all be resident fails after
// kWaitTrapNs rather than hanging.
__device__ __forceinline__ void grid_arrive(unsigned* count) {
    __syncthreads();
    if (threadIdx.x == 0) asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(count) : "memory");
}

__device__ __forceinline__ void grid_wait(unsigned* count, unsigned target, bool wait = true) {
    if (threadIdx.x == 0 && wait) {
        const uint64_t start = globaltimer_ns();
        unsigned now;
        for (;;) {
            asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(now) : "l"(count) : "memory");
            if (now >= target) break;
            if (globaltimer_ns() - start > kWaitTrapNs) __trap();
        }
    }
    __syncthreads();
}

// v[b] = sum over `slices` partial rows (stride apart) of channel c[b], from 0 in slice order,
// C slices' loads in flight at once.
__device__ __forceinline__ void sum_partials(const float* part, int64_t stride, int slices,
                                             const int64_t (&c)[4], float (&v)[4]) {
    constexpr int C = 6;
#pragma unroll
    for (int b = 0; b < 4; ++b) v[b] = 0.0f;
    for (int s0 = 0; s0 < slices; s0 += C) {
        float t[C][4];
#pragma unroll
        for (int j = 0; j < C; ++j)
#pragma unroll
            for (int b = 0; b < 4; ++b)
                t[j][b] = s0 + j < slices ? __ldcg(part + (s0 + j) * stride + c[b]) : 0.0f;
#pragma unroll
        for (int j = 0; j < C; ++j)
            if (s0 + j < slices)
#pragma unroll
                for (int b = 0; b < 4; ++b) v[b] += t[j][b];
    }
}

// y[i] = the sum of a link's slices' partials, i over the grid's threads: the last link's, and
// one read by no link (LinkArgs::sum_prev).
__device__ __forceinline__ void sum_into_y(const float* part, int slices, int64_t out, float* y) {
    const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
    for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < out; i += step) {
        float s = 0.0f;
        for (int k = 0; k < slices; ++k) s += __ldcg(part + k * out + i);
        y[i] = s;
    }
}

// The link before's y where link l does not read its partials (l.sum_prev), after the barrier.
__device__ __forceinline__ void sum_prev_output(const LinkArgs& l) {
    if (l.sum_prev) sum_into_y(l.prev_partial, l.prev_slices, l.prev_out, l.prev_y);
}

// The block's slice of x (8 quant blocks, warp w the w-th) into the x8 staging; see the file's
// comment for where x comes from. Ends with the block synchronised.
__device__ __forceinline__ void stage_link_x(const LinkArgs& l, const Share& s, uint8_t* xs) {
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int64_t c0 = (static_cast<int64_t>(s.slice) * kSliceBlocks + warp) * kQuantBlock;
    int64_t c[4];
    float v[4];
#pragma unroll
    for (int b = 0; b < 4; ++b) c[b] = c0 + x8_input(lane, b);
    if (l.x) {
#pragma unroll
        for (int b = 0; b < 4; ++b) v[b] = l.x[c[b]];
        sum_prev_output(l);  // its loads in the same trip to the L2 as x's
    } else {
        sum_partials(l.prev_partial, l.in, l.prev_slices, c, v);
        if (l.prev_y && s.group == 0)
#pragma unroll
            for (int b = 0; b < 4; ++b) l.prev_y[c[b]] = v[b];
    }
    uint8_t* col = xs + warp * kQuantBlock;
    x8_quantize(v, lane, col, col + kX8RowBytes, reinterpret_cast<float*>(xs + kX8ScaleAt) + warp * 8,
                reinterpret_cast<int*>(xs + kX8BiasAt) + warp * 8);
    __syncthreads();
}

// The warp's first unit of a share (tile t0 + warp, the slice's first half) into registers, and
// that tile's run.
__device__ __forceinline__ const uint8_t* first_unit(const LinkArgs& l, const Share& s, int warp, int g,
                                                     int tig, Unit& u) {
    const int64_t t = s.t0 + warp;
    const uint8_t* run = run_at(l, min(t, l.tiles - 1), s.slice);
    if (s.active && t < s.t1) load_tiled_unit(run, 0, g, tig, u);
    return run;
}

// wait == false (NIWA_CHAIN_WAIT=0, a measurement): the barriers are passed without waiting, so
// the results are wrong; what is left is the time of the links' own work.
__global__ void __launch_bounds__(kThreads, 2)
    matmul_chain_kernel(const LinkArgs* __restrict__ links, int count, unsigned* barrier, bool wait) {
    extern __shared__ __align__(16) uint8_t smem[];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, tig = lane & 3;
    const uint8_t* xg = smem + g * kX8RowBytes + 32 * tig;
    const unsigned blocks = gridDim.x;

    LinkArgs l = links[0];
    Share s = share_of(l);
    Unit cur;
    const uint8_t* run = first_unit(l, s, warp, g, tig, cur);
    for (int i = 0;;) {
        if (!s.active) {
            sum_prev_output(l);
        } else {
            stage_link_x(l, s, smem);
            float* out = l.slices == 1 ? l.y : l.partial + s.slice * l.out;
            float acc[1][4] = {};
            for (int64_t t = s.t0 + warp; t < s.t1; t += kWarps) {
                Unit second;
                load_tiled_unit(run, 1, g, tig, second);
                unit_product_x8(cur, kUnitBlocks, 0, smem, xg, tig, acc);
                if (t + kWarps < s.t1) {
                    run = run_at(l, t + kWarps, s.slice);
                    load_tiled_unit(run, 0, g, tig, cur);
                }
                unit_product_x8(second, kUnitBlocks, kUnitBlocks, smem, xg, tig, acc);
                if (tig == 0) {
                    float* o = out + t * kTileRows + g;
                    o[0] = acc[0][0];
                    o[8] = acc[0][2];
                }
#pragma unroll
                for (int j = 0; j < 4; ++j) acc[0][j] = 0.0f;
            }
        }
        if (++i == count) break;
        grid_arrive(barrier);
        l = links[i];
        s = share_of(l);
        run = first_unit(l, s, warp, g, tig, cur);
        grid_wait(barrier, static_cast<unsigned>(i) * blocks, wait);
    }
    const LinkArgs& last = links[count - 1];
    if (last.slices > 1) {
        grid_arrive(barrier);
        grid_wait(barrier, static_cast<unsigned>(count) * blocks);
        sum_into_y(last.partial, last.slices, last.out, last.y);
    }
}

std::string at_link(size_t i) {
    return "link " + std::to_string(i) + ": ";
}

}  // namespace

MatmulChain::MatmulChain(CudaOps& ops, const std::vector<ChainLink>& links) : ops_(ops) {
    require(!links.empty(), "matmul_chain", "a chain needs at least one link");
    int per_sm = 0;
    NIWA_CUDA_CHECK(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, matmul_chain_kernel, kThreads, kX8Bytes));
    require(per_sm > 0, "matmul_chain", "the chain kernel does not fit an SM of this GPU");
    blocks_ = ops.props().multiProcessorCount * per_sm;
    count_ = static_cast<int>(links.size());
    wait_ = !env_switched_off("NIWA_CHAIN_WAIT");
    std::vector<LinkArgs> args(links.size());
    size_t partial_floats = 0;
    for (size_t i = 0; i < links.size(); ++i) {
        const ChainLink& c = links[i];
        const std::string at = at_link(i);
        require(c.w.type == DType::PQ2_0T, "matmul_chain",
                at + "the chain takes PQ2_0T weights (CudaOps::matmul_layout's layout), not " +
                    dtype_name(c.w.type));
        require(c.w.data && c.w.in > 0 && c.w.in % kSplitRunElems == 0 && c.w.out > 0 &&
                    c.w.out % kTiledRows == 0,
                "matmul_chain", at + "a PQ2_0T weight has whole runs of 1024 inputs and tiles of 16 rows");
        require(c.y != nullptr, "matmul_chain", at + "y is missing");
        require(c.x || (i > 0 && links[i - 1].w.out == c.w.in), "matmul_chain",
                at + (i == 0 ? std::string("the first link needs its own x")
                             : "x from the link before needs its output width (" +
                                   std::to_string(links[i - 1].w.out) +
                                   ") to equal this link's input width (" + std::to_string(c.w.in) + ")"));
        LinkArgs& a = args[i];
        a = LinkArgs{};
        a.w = static_cast<const uint8_t*>(c.w.data);
        a.in = c.w.in;
        a.out = c.w.out;
        a.tiles = c.w.out / kTileRows;
        a.slices = static_cast<int>(c.w.in / kSplitRunElems);
        require(a.slices <= blocks_, "matmul_chain", at + "more K slices than the grid has blocks");
        a.groups = static_cast<int>(
            std::clamp<int64_t>(blocks_ / a.slices, 1, std::min<int64_t>(a.tiles, kMaxGroups)));
        a.x = c.x;
        a.y = c.y;
        weight_bytes_ += static_cast<size_t>(a.out) * dtype_row_bytes(DType::PQ2_0T, a.in);
        if (a.slices > 1) partial_floats = std::max(partial_floats, static_cast<size_t>(a.slices * a.out));
    }
    const size_t bytes = 2 * partial_floats * sizeof(float);
    if (bytes > 0) partial_ = static_cast<float*>(ops.alloc(bytes));
    for (size_t i = 0; i < args.size(); ++i) {
        LinkArgs& a = args[i];
        a.partial = a.slices == 1 ? a.y : partial_ + (i % 2) * partial_floats;
        if (i == 0) continue;
        const LinkArgs& p = args[i - 1];
        a.prev_partial = p.partial;
        a.prev_slices = p.slices;
        a.prev_out = p.out;
        a.prev_y = p.slices > 1 ? p.y : nullptr;
        a.sum_prev = a.x != nullptr && p.slices > 1;
    }
    args_ = ops.alloc(args.size() * sizeof(LinkArgs));
    ops.upload(args_, args.data(), args.size() * sizeof(LinkArgs));
    barrier_ = static_cast<unsigned*>(ops.alloc(sizeof(unsigned)));
}

MatmulChain::~MatmulChain() {
    ops_.free(barrier_);
    ops_.free(args_);
    if (partial_) ops_.free(partial_);
}

void MatmulChain::run() {
    NIWA_CUDA_CHECK(cudaMemsetAsync(barrier_, 0, sizeof(unsigned), ops_.stream()));
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = dim3(static_cast<unsigned>(blocks_));
    cfg.blockDim = dim3(kThreads);
    cfg.dynamicSmemBytes = kX8Bytes;
    cfg.stream = ops_.stream();
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeCooperative;
    attr[0].val.cooperative = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    NIWA_CUDA_CHECK(cudaLaunchKernelEx(&cfg, matmul_chain_kernel, static_cast<const LinkArgs*>(args_), count_,
                                       barrier_, wait_));
}

}  // namespace niwa::kernels::cuda
