// Ternary matmul at decode sizes (n <= 32 rows of x, Precision::Mixed) for PQ2_0S and PQ2_0T
// matrices (PQ2_0T: the same units, each read as 256 contiguous bytes a load), where
// matmul.cu's decode_kernel measured it faster than the staged kernel (matmul_decode.cu): one row
// of x, large matrices, long rows; PQ2_0T (whole runs, whole tiles) and PQ2_0S (the rest) are
// the layouts the model loads PQ2_0 files in, formats.h. The grid, x's staging and the
// arithmetic are matmul_decode.cuh's, as for the staged kernel; what differs is how the weight
// arrives. A PQ2_0S slice of a row is one 16-byte aligned run, so thread (g, tig) reads its two
// code words of a quant block of row g as one 8-byte load, and the run's scales as 8 bytes per
// half slice, straight into registers: no shared-memory staging. A warp takes its tiles half a
// slice (4 quant blocks, 2 KB of the weight) at a time and loads the next half while it
// multiplies this one. The ring kernel does the same arithmetic on units that stream through
// shared memory (cp.async), more of them in flight and none in registers: faster in whole steps
// on the large matrices from three rows (decode_kernel in matmul.cu says where), slower at one
// and two rows.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <string>
#include <type_traits>

#include "kernels/cuda/decode_units.cuh"
#include "kernels/cuda/hadamard.cuh"
#include "kernels/cuda/matmul_decode.cuh"
#include "kernels/cuda/matmul_decode_x8.cuh"
#include "kernels/cuda/pdl.cuh"
#include "kernels/cuda/rotate_sources.cuh"

namespace niwa::kernels::cuda {

namespace {

constexpr int kWarps = 8;
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

// Where a warp's tile keeps its slice: the runs of rows g and g + 8 (PQ2_0S), or the tile's run
// (PQ2_0T, r1 unused); and a unit of it for thread (g, tig).
struct TileRuns {
    const uint8_t *r0, *r1;
};

template <bool Tiled>
__device__ __forceinline__ TileRuns runs_of(const MatmulArgs& a, int64_t tile, int slice, int g) {
    if constexpr (Tiled)
        return {tile_run_of(a, tile, slice), nullptr};
    else
        return {run_of(a, tile * kTileRows + g, slice), run_of(a, tile * kTileRows + g + 8, slice)};
}

template <bool Tiled>
__device__ __forceinline__ void load_half(const TileRuns& r, int half, int nb, int g, int tig, Unit& u) {
    if constexpr (Tiled)
        load_tiled_unit(r.r0, half, g, tig, u);
    else
        load_unit(r.r0, r.r1, half, nb, tig, u);
}

// Where a thread of either kernel works: its block's slice of x in shared memory (xs, bias)
// and its group's tiles [t0, t1), its warp and place in the warp, and its x words (xw).
template <int NT>
struct BlockPlace {
    uint32_t* xs;
    float* bias;  // [quant block][x row]
    int warp, lane, g, tig, group, slice, qb0, nqb;
    int64_t t0, t1;
    const uint32_t* xw;
};

template <int NT>
__device__ __forceinline__ BlockPlace<NT> place_of(const DecodeParams& p, uint8_t* smem) {
    BlockPlace<NT> b;
    b.xs = reinterpret_cast<uint32_t*>(smem);
    b.bias = reinterpret_cast<float*>(b.xs + NT * 8 * kXWords);
    b.warp = threadIdx.x >> 5;
    b.lane = threadIdx.x & 31;
    b.g = b.lane >> 2;
    b.tig = b.lane & 3;
    b.group = blockIdx.x;
    b.slice = blockIdx.y;
    b.qb0 = b.slice * kSliceBlocks;
    b.nqb = min(kSliceBlocks, static_cast<int>(p.a.in / kQuantBlock) - b.qb0);
    b.t0 = p.tiles * b.group / p.groups;
    b.t1 = p.tiles * (b.group + 1) / p.groups;
    b.xw = b.xs + b.g * kXWords + 8 * b.tig;
    return b;
}

// Whole runs stream through a ring of units in shared memory per warp (cp.async), so the units
// in flight hold no registers: kRing(NT) slots (decode_units.cuh), kRing - 1 units ahead of the
// one multiplied.
__host__ __device__ constexpr int ring_units(int nt) {
    return nt == 4 ? 2 : 3;  // two blocks an SM fit at 4 x tiles only with two
}
__host__ __device__ constexpr int ring_blocks_per_sm(int nt) {
    return nt == 1 ? 3 : 2;
}
__host__ __device__ constexpr size_t ring_smem_bytes(int nt) {
    return decode_x_bytes(nt) + static_cast<size_t>(kWarps) * ring_units(nt) * kRingSlotBytes + 16;
}

// The ring kernel, for matrices of whole runs (rows of a multiple of 1024 inputs) on devices
// with the shared memory for it: each warp's units (tile t0 + warp + kWarps k, halves 0 and 1)
// stream through its ring, kRing - 1 ahead, the first of them before x is staged (and before the
// kernel writing x has finished, when launched to overlap it: pdl.cuh). ring_blocks_per_sm
// blocks an SM: three at one x tile (80 registers), two at more.
template <int NT, bool Tiled>
__global__ void __launch_bounds__(kWarps * 32, ring_blocks_per_sm(NT)) ring_decode_kernel(DecodeParams p) {
    constexpr int kRing = ring_units(NT);
    extern __shared__ __align__(16) uint8_t smem[];
    const auto [xs, bias, warp, lane, g, tig, group, slice, qb0, nqb, t0, t1, xw] = place_of<NT>(p, smem);
    const MatmulArgs& a = p.a;
    // The warp's units: u = 2 k + half of tile t0 + warp + kWarps k.
    const int64_t first = t0 + warp;
    const int units = first < t1 ? 2 * static_cast<int>((t1 - first + kWarps - 1) / kWarps) : 0;
    auto tile_of = [&](int u) { return first + static_cast<int64_t>(kWarps) * (u >> 1); };
    auto fill = [&, slice = slice, lane = lane](int u, uint8_t* slot) {
        issue_unit<Tiled>(a, tile_of(u), slice, u & 1, slot, lane);
    };
    UnitRing<kRing, decltype(fill)> ring{fill, smem + decode_x_bytes(NT) + warp * kRing * kRingSlotBytes,
                                         units};

    pdl_release();
    ring.prime();
    pdl_wait();
    stage_x<NT, WordPairs::Adjacent>(a, qb0, nqb, xs, bias);

    float acc[NT][4];
    zero(acc);
    const TileStores<NT> stores(p, slice, tig);
    for (int u = 0; u < units; ++u) {
        Unit cur;
        read_unit<Tiled>(ring.acquire(u), g, tig, cur);
        const int half = u & 1;
        unit_product<NT>(cur, kUnitBlocks, xw + 64 * kUnitBlocks * half, bias + kUnitBlocks * half * NT * 8,
                         tig, acc);
        if (half == 1) {
            stores.store(tile_of(u), g, acc);
            zero(acc);
        }
        ring.release();
    }
    cp_async_wait<0>();
    sum_slices(p, group, t0, t1, reinterpret_cast<unsigned*>(smem + ring_smem_bytes(NT) - 16));
}

// The blocks an SM the register kernel's registers are capped for: two, except at four x tiles
// on sm_120, whose 100 KiB an SM holds one block of 66,832 bytes (a cap for a second block only
// spilled: 76 bytes, ptxas; docs/BENCHMARKS.md, thirty-fourth pass).
__host__ __device__ constexpr int split_blocks_per_sm(int nt) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 1200
    return nt == 4 ? 1 : 2;
#else
    return (void)nt, 2;
#endif
}

// Two blocks an SM (up to 128 registers): a unit in flight while the other is multiplied. With
// three (80 registers, as before the two units alternated) the compiler spilled, and earlier kept
// the next unit's loads behind the multiply, so each unit waited a full trip to memory. Src:
// PlainX (x as it is), or a RotatedX the block builds x from (stage_rotated; at most
// kRotatedMaxRows rows, its fp32 rows after the flag in shared memory). Out: where the sums go
// (PlainOut, or through GDN's conv: a ConvStore, with PlainX and several slices). X8: 1-4 rows
// of x as int8 pairs (matmul_decode_x8.cuh), where the fp16 staging would be.
template <int NT, bool Tiled, typename Src, typename Out, bool X8>
__global__ void __launch_bounds__(kWarps * 32, split_blocks_per_sm(NT))
    split_decode_kernel(DecodeParams p, Src src, Out out) {
    constexpr bool kPlain = std::is_same_v<Src, PlainX>;
    static_assert(!X8 || NT == 1, "int8 x is one mma's columns");
    static_assert(!kPlain || !std::is_same_v<Out, ResidualAdd>,
                  "the add's scratch is the rotated rows' room");
    extern __shared__ __align__(16) uint8_t smem[];
    const auto [xs, bias, warp, lane, g, tig, group, slice, qb0, nqb, t0, t1, xw] = place_of<NT>(p, smem);
    const MatmulArgs& a = p.a;
    [[maybe_unused]] float* rows_buf = reinterpret_cast<float*>(smem + decode_x_bytes(NT) + 16);
    [[maybe_unused]] const uint8_t* xg = smem + g * kX8RowBytes + 32 * tig;  // X8: thread (g, tig)'s x
    // acc += nb blocks of unit u (half h of the slice) times x.
    auto product = [&, xw = xw, bias = bias, tig = tig](const Unit& u, int nb, int h, float(&acc)[NT][4]) {
        if constexpr (X8)
            unit_product_x8(u, nb, kUnitBlocks * h, smem, xg, tig, acc);
        else
            unit_product<NT>(u, nb, xw + 64 * kUnitBlocks * h, bias + kUnitBlocks * h * NT * 8, tig, acc);
    };

    pdl_release();
    // The warp's tiles are t0 + warp + k kWarps, each two units (halves of the slice). The first
    // starts loading before x is staged (and before the kernel writing x has finished, when
    // launched to overlap it: pdl.cuh).
    int64_t t = t0 + warp;
    TileRuns runs = runs_of<Tiled>(a, t, slice, g);
    Unit cur;
    if (t < t1) load_half<Tiled>(runs, 0, min(kUnitBlocks, nqb), g, tig, cur);
    float sg[4];
    if constexpr (!kPlain) rotated_signs(src, qb0, nqb, sg);
    pdl_wait();
    if constexpr (X8 && kPlain) {
        stage_x8([&](int r, int64_t c) { return a.x[r * a.ldx + c]; }, a.n, qb0, nqb, smem);
    } else if constexpr (X8) {
        stage_rotated<NT, WordPairs::Adjacent, decltype(src.read), true>(src, sg, a.n, qb0, nqb, xs, bias,
                                                                         rows_buf);
        const int64_t c_first = static_cast<int64_t>(qb0) * kQuantBlock;
        stage_x8([&](int r, int64_t c) { return rows_buf[r * kSliceBlocks * kQuantBlock + (c - c_first)]; },
                 a.n, qb0, nqb, smem);
    } else if constexpr (kPlain) {
        stage_x<NT, WordPairs::Adjacent>(a, qb0, nqb, xs, bias);
    } else {
        stage_rotated<NT, WordPairs::Adjacent>(src, sg, a.n, qb0, nqb, xs, bias, rows_buf);
    }

    float acc[NT][4];
    zero(acc);
    const TileStores<NT> stores(p, slice, tig, X8);
    if (nqb == kSliceBlocks) {
        // Whole runs (every slice of a row whose length is a multiple of 1024): two units a
        // tile, each loaded while the other is multiplied; the loads are issued in program order
        // ahead of the mma (load_once and mma_f16 are volatile), so nothing waits on a unit just
        // requested. After the last tile the first unit is loaded again: a cached read, never used.
        for (; t < t1; t += kWarps) {
            Unit second;
            load_half<Tiled>(runs, 1, kUnitBlocks, g, tig, second);
            product(cur, kUnitBlocks, 0, acc);
            if (t + kWarps < t1) runs = runs_of<Tiled>(a, t + kWarps, slice, g);
            load_half<Tiled>(runs, 0, kUnitBlocks, g, tig, cur);
            product(second, kUnitBlocks, 1, acc);
            stores.store(t, g, acc);
            zero(acc);
        }
    } else if constexpr (!Tiled) {
        // A short last run (nqb < 8 blocks; never PQ2_0T): one or two units a tile, loaded as they go.
        for (; t < t1; t += kWarps) {
            runs = runs_of<Tiled>(a, t, slice, g);
            for (int h = 0; h * kUnitBlocks < nqb; ++h) {
                const int nb = min(kUnitBlocks, nqb - kUnitBlocks * h);
                load_half<Tiled>(runs, h, nb, g, tig, cur);
                product(cur, nb, h, acc);
            }
            stores.store(t, g, acc);
            zero(acc);
        }
    }
    // A ResidualAdd's scratch: the rotated rows' room (a rotated src: launch_pass), used up.
    sum_slices(p, group, t0, t1, reinterpret_cast<unsigned*>(smem + decode_x_bytes(NT)), out, rows_buf);
}

// One pass of at most kDecodeMaxRows rows of x (a RotatedX src: at most kRotatedMaxRows): the
// ring kernel where x is plain, the rows are whole runs, the backend may choose it and the device
// holds it at its full occupancy (an H200: yes; an RTX 5070's 100 KB an SM: no); the register
// kernel otherwise. A ConvStore out: the register kernel, one x tile (split_decode_takes_conv).
// Returns the plan of its launch.
template <typename Src, typename Out = PlainOut>
DecodeParams launch_pass(CudaOps& ops, const MatmulArgs& pass, bool ring, const Src& src,
                         const Out& out = {}) {
    constexpr bool kPlain = std::is_same_v<Src, PlainX>, kConv = std::is_same_v<Out, ConvStore>;
    DecodeParams planned;
    auto tiles = [&](auto x_tiles) {
        constexpr int NT = decltype(x_tiles)::value;
        auto launch = [&](auto layout) {
            constexpr bool Tiled = decltype(layout)::value;
            if constexpr (kPlain && !kConv) {
                if (ring && pass.in % (kSliceBlocks * kQuantBlock) == 0) {
                    auto* kernel = ring_decode_kernel<NT, Tiled>;
                    static std::atomic<uint64_t> configured{0};
                    static std::atomic<int> fits[64] = {};
                    allow_max_smem(ops, kernel, configured);
                    const int n = blocks_per_sm(ops, kernel, kWarps * 32, ring_smem_bytes(NT), fits);
                    if (n >= ring_blocks_per_sm(NT)) {
                        planned = launch_wave(ops, kernel, kWarps * 32, pass, ring_smem_bytes(NT), n);
                        return;
                    }
                }
            }
            const size_t smem = decode_x_bytes(NT) + 16 + (kPlain ? 0 : kRotatedMaxRows * kRotatedRowBytes);
            auto run = [&](auto x8) {
                auto* kernel = split_decode_kernel<NT, Tiled, Src, Out, decltype(x8)::value>;
                static std::atomic<uint64_t> configured{0};
                static std::atomic<int> cached[64] = {};
                allow_max_smem(ops, kernel, configured);
                planned =
                    launch_wave(ops, kernel, kWarps * 32, pass, smem,
                                std::max(1, blocks_per_sm(ops, kernel, kWarps * 32, smem, cached)), src, out);
            };
            if constexpr (NT == 1)
                if (ops.decode_x8() && pass.n <= kX8MaxRows) return run(std::true_type{});
            run(std::false_type{});
        };
        if (pass.type == DType::PQ2_0T)
            launch(std::true_type{});
        else
            launch(std::false_type{});
    };
    if constexpr (kPlain && !kConv)
        with_x_tiles(static_cast<int>((pass.n + 7) / 8), tiles);
    else
        tiles(std::integral_constant<int, 1>{});
    return planned;
}

void check_split_decode(const MatmulArgs& a) {
    const bool tiled = a.type == DType::PQ2_0T;
    require(tiled || a.type == DType::PQ2_0S, "matmul",
            std::string("the split decode kernels take PQ2_0S or PQ2_0T, not ") + dtype_name(a.type));
    require(!tiled || a.in % (kSliceBlocks * kQuantBlock) == 0, "matmul", "a PQ2_0T matrix has whole runs");
}

template <typename Read, typename Out>
DecodeParams launch_rotated(CudaOps& ops, const MatmulArgs& a, const Read& read, const Rotation& r,
                            const Out& out) {
    RotatedX<Read> src{read, r.block ? r.signs : nullptr, r.block,
                       r.block ? 1.0f / std::sqrt(static_cast<float>(r.block)) : 1.0f};
    return launch_pass(ops, a, false, src, out);
}

// The sublayer outputs' inputs (what rotated_matmul_add's matmuls read), into `out`.
template <typename Out>
DecodeParams launch_output_input(CudaOps& ops, const MatmulArgs& a, const RotatedInput& in, const Out& out) {
    const Tensor& x = in.x;
    const Tensor& o = in.other;
    switch (in.kind) {
        case RotatedInput::Kind::Swiglu:
            return launch_rotated(ops, a, ReadSwiglu{x.as<const float>(), o.as<const float>(), x.ld, o.ld},
                                  in.r, out);
        case RotatedInput::Kind::GatedNorm:
            return launch_rotated(ops, a,
                                  ReadNormGated<kFusedNormWidth>{x.as<const float>(), o.as<const float>(),
                                                                 in.w, x.ld, o.ld, in.eps},
                                  in.r, out);
        case RotatedInput::Kind::SigmoidGate: {
            int log_width = 0;
            while ((int64_t{1} << log_width) < in.width) ++log_width;
            return launch_rotated(ops, a,
                                  ReadSigmoidGate{x.as<const float>(), o.as<const float>(), x.ld, o.ld,
                                                  static_cast<int>(x.cols / in.width), log_width},
                                  in.r, out);
        }
        default:
            require(false, "rotated_matmul_add", "the split decode kernels add only a sublayer's output");
            return {};
    }
}

ReadResidualNorm read_residual_norm(const RotatedInput& in) {
    const Tensor& x = in.x;
    return ReadResidualNorm{x.as<const float>(),
                            in.w,
                            in.squares.as<const float>(),
                            x.ld,
                            in.squares.ld,
                            static_cast<int>(in.squares.cols),
                            static_cast<float>(x.cols),
                            in.eps,
                            in.normed.data ? in.normed.as<float>() : nullptr,
                            in.normed.data ? in.normed.ld : 0};
}

}  // namespace

void launch_split_decode(CudaOps& ops, const MatmulArgs& a, bool ring) {
    check_split_decode(a);
    for_each_row_group(a, kDecodeMaxRows,
                       [&](const MatmulArgs& pass) { launch_pass(ops, pass, ring, PlainX{}); });
}

bool split_decode_takes_conv(const MatmulArgs& a, CudaOps::DecodeGemm kernel) {
    return (a.type == DType::PQ2_0S || a.type == DType::PQ2_0T) && kernel == CudaOps::DecodeGemm::Registers &&
           a.n >= 1 && a.n <= kRotatedMaxRows && a.in > kSliceBlocks * kQuantBlock && a.out > 0;
}

void launch_split_decode(CudaOps& ops, const MatmulArgs& a, const ConvStore& conv) {
    check_split_decode(a);
    require(split_decode_takes_conv(a, CudaOps::DecodeGemm::Registers), "matmul_conv1d_silu",
            "the register kernel runs the conv at 1.." + std::to_string(kRotatedMaxRows) +
                " rows of x and rows of more than one slice");
    launch_pass(ops, a, false, PlainX{}, conv);
}

void launch_split_decode(CudaOps& ops, const MatmulArgs& a, const RotatedInput& in, const ConvStore& conv) {
    check_split_decode(a);
    require(split_decode_takes_conv(a, CudaOps::DecodeGemm::Registers) && split_decode_takes(in, a) &&
                in.kind == RotatedInput::Kind::ResidualNorm,
            "matmul_conv1d_silu", "the register kernel runs the conv of a normed input only");
    launch_rotated(ops, a, read_residual_norm(in), in.r, conv);
}

bool split_decode_takes(const RotatedInput& in, const MatmulArgs& a) {
    using K = RotatedInput::Kind;
    const Rotation& r = in.r;
    const bool rotation =
        r.block == 0 || (warp_hadamard_block(r.block) && r.signs &&
                         (kSliceBlocks * kQuantBlock) % r.block == 0 && a.in % r.block == 0);
    const bool kind = in.kind != K::GatedNorm || in.width == kFusedNormWidth;
    const bool heads = in.kind != K::SigmoidGate || (in.width & (in.width - 1)) == 0;
    // A residual norm from the parts of its squares: a row of them for each row of x.
    const bool squares = in.kind != K::ResidualNorm || (in.squares.data && in.squares.rows >= a.n);
    return (a.type == DType::PQ2_0S || a.type == DType::PQ2_0T) && a.n <= kRotatedMaxRows && rotation &&
           kind && heads && squares;
}

bool split_decode_takes_add(const RotatedInput& in, const MatmulArgs& a) {
    using K = RotatedInput::Kind;
    return (in.kind == K::Swiglu || in.kind == K::GatedNorm || in.kind == K::SigmoidGate) &&
           split_decode_takes(in, a) && a.n >= 1 && a.in > kSliceBlocks * kQuantBlock && a.out > 0;
}

void launch_split_decode(CudaOps& ops, const MatmulArgs& a, const RotatedInput& in) {
    check_split_decode(a);
    require(split_decode_takes(in, a), "matmul",
            "this rotated input is not one the split decode kernels build");
    const Tensor& x = in.x;
    switch (in.kind) {
        case RotatedInput::Kind::Rotate:
            launch_rotated(ops, a, ReadX{x.as<const float>(), x.ld}, in.r, PlainOut{});
            return;
        case RotatedInput::Kind::ResidualNorm:
            launch_rotated(ops, a, read_residual_norm(in), in.r, PlainOut{});
            return;
        default:
            launch_output_input(ops, a, in, PlainOut{});
    }
}

Tensor launch_split_decode_add(CudaOps& ops, const MatmulArgs& a, const RotatedInput& in, const Tensor& x) {
    check_split_decode(a);
    require(split_decode_takes_add(in, a), "rotated_matmul_add",
            "this input is not one the split decode kernels add to the residual stream");
    // At most a part a block (sum_slices), and the one wave holds at most as many blocks of
    // kWarps warps as the SMs' threads allow.
    const cudaDeviceProp& prop = ops.props();
    const int64_t lds =
        int64_t{prop.multiProcessorCount} * (prop.maxThreadsPerMultiProcessor / (kWarps * 32));
    auto* squares = static_cast<float*>(
        ops.workspace(CudaOps::Workspace::Squares, static_cast<size_t>(a.n * lds) * sizeof(float)));
    const DecodeParams p = launch_output_input(ops, a, in, ResidualAdd{x.as<float>(), x.ld, squares, lds});
    require(residual_parts(p) <= lds, "rotated_matmul_add", "more parts of the squares than planned");
    return Tensor{squares, DType::F32, a.n, residual_parts(p), lds};
}

}  // namespace niwa::kernels::cuda
