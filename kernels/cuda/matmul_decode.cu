// Ternary matmul at decode sizes (n <= 32 rows of x, Precision::Mixed), rows staged through
// shared memory: the files' layouts (PQ2_0, PTQ1_0) and PQ2_0S matrices under 32 MiB at 2-32
// rows of x (the rest load straight into registers, matmul_decode_split.cu; CudaOps::DecodeGemm). Bandwidth-
// bound, so every packed weight byte is read once per call and decoded straight into tensor-core
// fragments. The grid, x's staging and the arithmetic are matmul_decode.cuh's; here the warps
// (16 on an H200) stream their 16-row tiles through per-warp cp.async rings (2 deep on an H200;
// 16-byte copies, rows aligned down to 16 bytes, as the files' blocks are only 2-byte aligned).
#include <algorithm>
#include <atomic>
#include <mutex>
#include <vector>

#include "kernels/cuda/matmul_decode.cuh"
#include "kernels/cuda/pdl.cuh"

namespace niwa::kernels::cuda {

namespace {

// Warps per block (compile-time; -D overrides it for experiments).
#ifndef NIWA_DECODE_MAX_WARPS
#define NIWA_DECODE_MAX_WARPS 16
#endif
constexpr int kMaxWarps = NIWA_DECODE_MAX_WARPS;
// 16-byte chunks of a row's slice: up to 15 bytes ahead of it (rows are staged from 16-byte
// aligned starts) and its kSliceBlocks blocks, one chunk of slack.
constexpr int kRowChunks = (15 + kSliceBlocks * kPq2BlockBytes + 15) / 16 + 1;
static_assert(kSplitRunBytes <= kSliceBlocks * kPq2BlockBytes, "a PQ2_0S run fits where 8 PQ2_0 blocks do");
constexpr int kRowBytes = kRowChunks * 16;
constexpr int kStageBytes = kTileRows * kRowBytes;  // one tile in flight
constexpr int kCounterRing = 1 << 16;               // per device: calls take consecutive ranges

// Shared memory of a block: x's slice and its bias sums, one ring of `stages` tiles per warp, a
// flag.
constexpr size_t decode_smem_bytes(int nt, int warps, int stages) {
    return decode_x_bytes(nt) + static_cast<size_t>(warps) * stages * kStageBytes + 16;
}

// Where a K slice of a row lives for each layout: the files' blocks back to back (PQ2_0, PTQ1_0:
// 2-byte aligned), or one PQ2_0S run (its scales, then its blocks' codes; 16-byte aligned).
template <DType T>
struct StagedSlice {
    using F = TernaryFormat<T>;
    __device__ static size_t offset(int qb0) { return static_cast<size_t>(qb0) * F::kBytes; }
    __device__ static int bytes(int nqb) { return nqb * F::kBytes; }
    __device__ static float scale(const uint8_t* s, int qb) { return F::scale(s + qb * F::kBytes); }
    __device__ static uint32_t word(const uint8_t* s, int qb, int w) {
        return F::word(s + qb * F::kBytes, w);
    }
};

template <>
struct StagedSlice<DType::PQ2_0S> {
    __device__ static size_t offset(int qb0) {
        return static_cast<size_t>(qb0 / kSplitRunBlocks) * kSplitRunBytes;
    }
    __device__ static int bytes(int nqb) { return kSplitScaleBytes + 32 * nqb; }
    __device__ static float scale(const uint8_t* s, int qb) {
        return half_bits_to_float(load_u16(s + 2 * qb));
    }
    __device__ static uint32_t word(const uint8_t* s, int qb, int w) {
        return *reinterpret_cast<const uint32_t*>(s + kSplitScaleBytes + 32 * qb + 4 * w);
    }
};

// Copies one tile's slice (rows tile*16 .. +16, quant blocks qb0 .. qb0 + nqb) into buf, each
// row from its 16-byte aligned start; row r's bytes begin at r * kRowBytes + (start & 15). A
// PQ2_0T tile's slice is one run, copied as it is.
template <DType T>
__device__ __forceinline__ void stage_tile(const MatmulArgs& a, int64_t tile, int qb0, int nqb, uint8_t* buf,
                                           int lane) {
    if constexpr (T == DType::PQ2_0T) {
        (void)nqb;
        const uint8_t* run = tiled_run(a.w, a.in, tile * kTileRows, static_cast<int64_t>(qb0) * kQuantBlock);
        for (int c = lane; c < kTiledRunBytes / 16; c += 32) cp_async16(buf + 16 * c, run + 16 * c);
    } else {
        const int len = StagedSlice<T>::bytes(nqb);
        for (int idx = lane; idx < kTileRows * kRowChunks; idx += 32) {
            const int r = idx / kRowChunks, c = idx - r * kRowChunks;
            const int64_t row = tile * kTileRows + r;
            if (row >= a.out) continue;
            const auto s = reinterpret_cast<uintptr_t>(a.w + static_cast<size_t>(row) * a.stride +
                                                       StagedSlice<T>::offset(qb0));
            const uintptr_t a0 = s & ~static_cast<uintptr_t>(15);
            const int chunks = static_cast<int>((s + len - a0 + 15) >> 4);
            if (c < chunks)
                cp_async16(buf + r * kRowBytes + 16 * c, reinterpret_cast<const void*>(a0 + 16 * c));
        }
    }
}

// Where row `row`'s slice begins inside its staged bytes.
template <DType T>
__device__ __forceinline__ int staged_offset(const MatmulArgs& a, int64_t row, int qb0) {
    static_assert(T != DType::PQ2_0T, "a staged PQ2_0T slice is one run (tile_product)");
    if (row >= a.out) return 0;
    return static_cast<int>(
        reinterpret_cast<uintptr_t>(a.w + static_cast<size_t>(row) * a.stride + StagedSlice<T>::offset(qb0)) &
        15);
}

// acc = this warp's 16-row tile times x's slice.
template <DType T, int NT>
__device__ __forceinline__ void tile_product(const MatmulArgs& a, int64_t tile, int qb0, int nqb,
                                             const uint8_t* buf, const uint32_t* xs, const float* bias, int g,
                                             int tig, float (&acc)[NT][4]) {
    if constexpr (T == DType::PQ2_0T) {
        // Block qb's codes and scale of rows g and g + 8 where formats.h says.
        (void)a, (void)tile, (void)qb0;
        const uint32_t* xw = xs + g * kXWords + 8 * tig;
#pragma unroll 2
        for (int qb = 0; qb < nqb; ++qb, xw += 64, bias += NT * 8) {
            const uint8_t *c0 = buf + tiled_codes_at(qb, g) + 4 * tig,
                          *c1 = buf + tiled_codes_at(qb, g + 8) + 4 * tig;
            const auto word = [](const uint8_t* p) { return *reinterpret_cast<const uint32_t*>(p); };
            const BlockWords w[1] = {{word(c0), word(c1), word(c0 + 16), word(c1 + 16),
                                      half_bits_to_float(load_u16(buf + tiled_scale_at(qb, g))),
                                      half_bits_to_float(load_u16(buf + tiled_scale_at(qb, g + 8)))}};
            blocks_product<NT, 1>(w, xw, 64, bias, tig, acc);
        }
    } else {
        using S = StagedSlice<T>;
        const int64_t r0 = tile * kTileRows + g;
        const uint8_t* b0 = buf + g * kRowBytes + staged_offset<T>(a, r0, qb0);
        const uint8_t* b1 = buf + (g + 8) * kRowBytes + staged_offset<T>(a, r0 + 8, qb0);
        const uint32_t* xw = xs + g * kXWords + 8 * tig;
#pragma unroll 2
        for (int qb = 0; qb < nqb; ++qb, xw += 64, bias += NT * 8) {
            const BlockWords w[1] = {{S::word(b0, qb, tig), S::word(b1, qb, tig), S::word(b0, qb, tig + 4),
                                      S::word(b1, qb, tig + 4), S::scale(b0, qb), S::scale(b1, qb)}};
            blocks_product<NT, 1>(w, xw, 64, bias, tig, acc);
        }
    }
}

template <DType T, int NT>
__global__ void __launch_bounds__(kMaxWarps * 32) ternary_decode_kernel(DecodeParams p) {
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
        if (next < t1) stage_tile<T>(a, next, qb0, nqb, ring + s * kStageBytes, lane);
        cp_async_commit();
    }
    pdl_wait();
    stage_x<NT, WordPairs::Apart>(a, qb0, nqb, xs, bias);

    int stage = 0;
    const TileStores<NT> stores(p, slice, tig);
    for (int64_t t = t0 + warp; t < t1; t += warps, next += warps) {
        if (next < t1)
            stage_tile<T>(a, next, qb0, nqb, ring + ((stage + stages - 1) % stages) * kStageBytes, lane);
        cp_async_commit();
        if (stages == 3)
            cp_async_wait<2>();
        else
            cp_async_wait<1>();
        __syncwarp();
        float acc[NT][4] = {};
        tile_product<T, NT>(a, t, qb0, nqb, ring + stage * kStageBytes, xs, bias, g, tig, acc);
        stores.store(t, g, acc);
        __syncwarp();
        stage = (stage + 1) % stages;
    }
    cp_async_wait<0>();
    sum_slices(p, group, t0, t1, reinterpret_cast<unsigned*>(wbuf + warps * stages * kStageBytes));
}

template <DType T>
void launch_nt(CudaOps& ops, int nt, const DecodeParams& p, dim3 grid, int warps, size_t smem) {
    with_x_tiles(nt, [&](auto tiles) {
        constexpr int NT = decltype(tiles)::value;
        static std::atomic<uint64_t> configured{0};
        allow_max_smem(ops, ternary_decode_kernel<T, NT>, configured);
        NIWA_CUDA_CHECK(launch_overlapping(ops.overlap_launches(), ternary_decode_kernel<T, NT>, grid,
                                           dim3(static_cast<unsigned>(warps * 32)), smem, ops.stream(), p));
    });
}

// One launch over x rows [0, a.n), a.n <= 8 * nt.
template <DType T>
void launch_pass(CudaOps& ops, const MatmulArgs& a, int nt, int warps, int stages) {
    const size_t smem = decode_smem_bytes(nt, warps, stages);
    const cudaDeviceProp& prop = ops.props();
    const int per_sm = std::max<int>(1, static_cast<int>(prop.sharedMemPerMultiprocessor / (smem + 1024)));
    DecodeParams p = plan_decode(ops, a, prop.multiProcessorCount * per_sm);
    p.stages = stages;
    const dim3 grid(static_cast<unsigned>(p.groups), static_cast<unsigned>(p.slices));
    launch_nt<T>(ops, nt, p, grid, warps, smem);
}

// The staged kernel's launch shape for a's matmul: the widest x tile and the most warps that fit
// the GPU's shared memory (an H200 takes all 32 rows and 16 warps with 2-deep rings; a 99 KiB
// consumer part fewer). Warps, not ring depth, are what hides the decode and mma latencies. A
// block's dynamic shared memory may take the opt-in size less the kernel's static shared memory.
// nt 0: none fits.
struct StagedShape {
    int nt = 0, warps = 0, stages = 0;
};

template <DType T>
StagedShape staged_shape(const CudaOps& ops, const MatmulArgs& a) {
    struct Shape {
        int warps, stages;
    };
    constexpr Shape kShapes[] = {{32, 2}, {16, 2}, {8, 3}, {8, 2}, {4, 3}, {4, 2}};
    const int need = static_cast<int>((a.n + 7) / 8);
    for (int nt = need; nt >= 1; --nt) {
        size_t limit = 0;
        with_x_tiles(nt, [&](auto tiles) {
            limit = ops.props().sharedMemPerBlockOptin -
                    ops.static_smem(ternary_decode_kernel<T, decltype(tiles)::value>);
        });
        for (const Shape s : kShapes)
            if (s.warps <= kMaxWarps && decode_smem_bytes(nt, s.warps, s.stages) <= limit)
                return {nt, s.warps, s.stages};
    }
    return {};
}

// The staged kernel in as many passes as x needs at its shape.
template <DType T>
void launch_staged(CudaOps& ops, const MatmulArgs& a) {
    const StagedShape s = staged_shape<T>(ops, a);
    require(s.nt > 0, "matmul", "the GPU's shared memory is too small for the decode kernel");
    for_each_row_group(a, 8 * s.nt, [&](const MatmulArgs& pass) {
        launch_pass<T>(ops, pass, static_cast<int>((pass.n + 7) / 8), s.warps, s.stages);
    });
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

}  // namespace

DecodeParams plan_decode(CudaOps& ops, const MatmulArgs& a, int blocks) {
    DecodeParams p;
    p.a = a;
    p.slices = static_cast<int>((a.in / kQuantBlock + kSliceBlocks - 1) / kSliceBlocks);
    p.tiles = (a.out + kTileRows - 1) / kTileRows;
    p.groups =
        static_cast<int>(std::clamp<int64_t>(blocks / p.slices, 1, std::min<int64_t>(p.tiles, kMaxGroups)));
    // TileStores' and sum_outputs' offsets into y are 32-bit.
    require(a.n * a.ldy < (int64_t{1} << 31), "matmul", "a decode matmul's output exceeds 2^31 values");
    plan_slice_sums(ops, p);
    return p;
}

void plan_slice_sums(CudaOps& ops, DecodeParams& p) {
    if (p.slices <= 1) return;
    require(p.slices * p.a.n * p.a.out < (int64_t{1} << 31), "matmul",
            "a decode matmul's partial sums exceed 2^31 values");
    const size_t partial_bytes = static_cast<size_t>(p.slices) * p.a.n * p.a.out * sizeof(float);
    p.partial = static_cast<float*>(ops.workspace(CudaOps::Workspace::Matmul, partial_bytes));
    p.counters = group_counters(ops, 2 * p.groups);
}

void share_sums_in_one_wave(const CudaOps& ops, DecodeParams& p) {
    const int64_t outputs = (p.tiles + p.groups - 1) / p.groups * kTileRows * p.a.n;
    p.shared_sum = p.slices > 1 && outputs >= ops.shared_sum_outputs();
}

bool staged_decode_one_pass(const CudaOps& ops, const MatmulArgs& a) {
    if (!is_ternary(a.type)) return true;  // no staged kernel to choose (decode_kernel's other weights)
    int nt = 0;
    with_ternary_type(a.type, [&](auto tag) { nt = staged_shape<decltype(tag)::value>(ops, a).nt; });
    return 8 * static_cast<int64_t>(nt) >= a.n;
}

void launch_ternary_decode(CudaOps& ops, const MatmulArgs& a) {
    with_ternary_type(a.type, [&](auto tag) { launch_staged<decltype(tag)::value>(ops, a); });
}

}  // namespace niwa::kernels::cuda
