// Ternary matmul at decode sizes on the sm_90a warpgroup mma (wgmma), for PQ2_0T matrices (whole
// runs, whole tiles) and plain x, 1-32 rows of x. The grid, x's values, the quant blocks' code
// and scale arithmetic, the ring of units and the cross-slice sum are the register and ring
// kernels' (matmul_decode.cuh, decode_units.cuh); what differs is the mma. There a warp issues
// an m16n8k16 mma.sync and a shared-memory load of x for every 16 x 16 weights and 8 rows of x;
// tests/gpu/mma_rate.cu measured that mix at ~440-560 a µs per SM against the ~475 that reading
// the weight at the copy rate needs, and at three x tiles it takes three of each. Here the four
// warps of a warpgroup take four tiles (64 rows) of the same slice in lockstep, each decodes its
// tile's fragments as before, and one wgmma m64nNk16 (N = 8 per x tile, up to 32) multiplies all
// four by x, read by the tensor cores from shared memory through a descriptor: no load
// instruction and one mma for all of x's rows (~390-415 a µs per SM at three x tiles, ~530 at
// one: no faster than mma.sync there, so Auto runs it from 9 rows, two x tiles; docs/BENCHMARKS.md,
// sixteenth and seventeenth passes).
//
// A quant block's 8 k16 steps chain into their own accumulators (the first step overwrites them),
// which take the block's scale; by default the 8 blocks' bias sums (x's share of the codes' offset)
// are then subtracted on the tensor cores once a tile-slice, three tf32 wgmma (issue_bias: 96 FADD
// and 24 shared loads fewer a tile-slice at 24 rows, batch 24 +1.4 % as mma.sync, docs/BENCHMARKS.md,
// forty-second pass), else a block at a time as blocks_product does (the register kernel's sums in its
// order, its bits). The wgmma run asynchronously: a block's group is committed, then the block before
// it is waited for and applied, so the tensor cores always hold the next block while the warps decode.
// Its fragments and accumulators alternate between two sets (a set is written again only after the
// group reading it has finished).
//
// x is staged once a call (stage_records_kernel, launched before the matmul: a warp a row's quant
// block, as stage_x stages it) into a record a slice, which each block copies whole into shared
// memory with the bulk copy engine (bulk_copy.cuh): staged by every block, a 24-row call's x cost
// ~6.5 µs of it and 26 blocks converted each slice again (docs/BENCHMARKS.md, seventeenth and
// twenty-first passes). Each block staging its own slice (stage_x) stayed as a switch until the
// forty-eighth pass: 21 of the kernel's 68.5 KB of code; without it (47 KB) batch 24 ran 0.5 %
// faster on an H200, 32 0.7 %, 16 1.1 % slower.
//
// x is staged as the wgmma's B operand, K-major without swizzle: for each quant block qb, code
// word half w (the thread's word 2 tig + w) and pair e, a column of 8 NT rows x 16 bytes (row r:
// the words of positions 4 w + tig, tig = 0..3). A k16 step (pairs E, E + 1 of word w) is then
// two core matrices 128 NT bytes apart along K, and its x tiles 128 bytes apart along N.
#include <algorithm>
#include <atomic>
#include <type_traits>

#include "kernels/cuda/bulk_copy.cuh"
#include "kernels/cuda/decode_units.cuh"
#include "kernels/cuda/matmul_decode.cuh"
#include "kernels/cuda/pdl.cuh"
#include "kernels/cuda/wgmma.cuh"

namespace niwa::kernels::cuda {

namespace {

// Three warpgroups a block, one block an SM from two x tiles: ptxas fits the kernel in 168
// registers a thread (16-40 bytes of spills) where two warpgroups took 187-248, and the third
// warpgroup's latency hiding made batch 24 3.6 % faster (docs/BENCHMARKS.md, twenty-first pass).
constexpr int kWgWarps = 12;
constexpr int kWgRing = 4;  // units in a warp's ring: three in flight ahead of the one decoded

// Where a record holds word 8 p + e of x row r's quant block qb (p = 4 w + tig; stage_x's words).
template <int NT>
struct WgmmaX {
    static constexpr int kRows = 8 * NT;
    __device__ __forceinline__ static int at(int r, int qb, int word) {
        const int p = word >> 3, e = word & 7;
        return (((qb * 2 + (p >> 2)) * 8 + e) * kRows + r) * 4 + (p & 3);
    }
    // Byte offset of the column of (qb, w, e).
    __device__ __forceinline__ static uint32_t column(int qb, int w, int e) {
        return static_cast<uint32_t>(((qb * 2 + w) * 8 + e) * kRows * 16);
    }
};

__host__ __device__ constexpr size_t wg_x_bytes(int nt) {
    return static_cast<size_t>(kSliceBlocks) * kQuantBlock * 8 * nt * 2;
}
__host__ __device__ constexpr size_t wg_bias_bytes(int nt) {
    return static_cast<size_t>(kSliceBlocks) * 8 * nt * 4;
}
// x's slice and its bias sums: the record a block copies (stage_records_kernel writes them).
__host__ __device__ constexpr size_t wg_record_bytes(int nt) {
    return wg_x_bytes(nt) + wg_bias_bytes(nt);
}
static_assert(wg_record_bytes(1) % 16 == 0, "a record is copied in 16-byte units");
// The bias sums as the tf32 wgmma's B operand (bias_operand): three parts of 8 blocks x 8 NT x rows.
__host__ __device__ constexpr size_t wg_bias_operand_bytes(int nt) {
    return static_cast<size_t>(3) * 8 * 8 * nt * 4;
}
__host__ __device__ constexpr size_t wg_rings_bytes() {
    return static_cast<size_t>(kWgWarps) * kWgRing * kRingSlotBytes;
}
// The record, the warps' rings, the bias operand, the copy's three barriers (x's first and
// second half, the bias sums) and sum_slices' flag.
constexpr int kWgTailBytes = 48;
__host__ __device__ constexpr size_t wg_smem_bytes(int nt) {
    return wg_record_bytes(nt) + wg_rings_bytes() + wg_bias_operand_bytes(nt) + kWgTailBytes;
}
__host__ __device__ constexpr int wg_blocks_per_sm(int nt) {
    return nt == 1 ? 2 : 1;
}

// acc += quant block qb's sums (d: its accumulators; d0, d1: its scales of rows g and g + 8) as
// blocks_product adds them; with BiasMma only d0 d, the bias sums' share left to issue_bias.
template <int NT, bool BiasMma>
__device__ __forceinline__ void apply_block(const float (&d)[4 * NT], float d0, float d1, int qb,
                                            const float* bias, int tig, float (&acc)[NT][4]) {
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) {
        if constexpr (BiasMma) {
            acc[nt][0] = fmaf(d0, d[4 * nt + 0], acc[nt][0]);
            acc[nt][1] = fmaf(d0, d[4 * nt + 1], acc[nt][1]);
            acc[nt][2] = fmaf(d1, d[4 * nt + 2], acc[nt][2]);
            acc[nt][3] = fmaf(d1, d[4 * nt + 3], acc[nt][3]);
        } else {
            const float2 k = *reinterpret_cast<const float2*>(bias + qb * NT * 8 + nt * 8 + 2 * tig);
            acc[nt][0] += d0 * (d[4 * nt + 0] - k.x);
            acc[nt][1] += d0 * (d[4 * nt + 1] - k.y);
            acc[nt][2] += d1 * (d[4 * nt + 2] - k.x);
            acc[nt][3] += d1 * (d[4 * nt + 3] - k.y);
        }
    }
}

#ifdef NIWA_WGMMA  // only the sm_90a kernel body calls these (elsewhere nvcc warns they are unused)
// The 8 k16 steps of one quant block (word pair w of the thread, pairs E, E + 1 in order (E, w)
// = (0, 0), (0, 1), (2, 0), ...: blocks_product's order) decoded into f.
__device__ __forceinline__ void decode_block(const BlockWords& w, uint32_t (&f)[8][4]) {
    auto step = [&](auto e) {
        constexpr int E = decltype(e)::value;
        f[E][0] = biased_code_pair<E>(w.wa0);
        f[E][1] = biased_code_pair<E>(w.wb0);
        f[E][2] = biased_code_pair<E + 1>(w.wa0);
        f[E][3] = biased_code_pair<E + 1>(w.wb0);
        f[E + 1][0] = biased_code_pair<E>(w.wa1);
        f[E + 1][1] = biased_code_pair<E>(w.wb1);
        f[E + 1][2] = biased_code_pair<E + 1>(w.wa1);
        f[E + 1][3] = biased_code_pair<E + 1>(w.wb1);
    };
    step(std::integral_constant<int, 0>{});
    step(std::integral_constant<int, 2>{});
    step(std::integral_constant<int, 4>{});
    step(std::integral_constant<int, 6>{});
}

// The bias sums' share of a tile-slice on the tensor cores: acc -= S K, S (64 rows x 8 quant
// blocks) the rows' scales, K (8 blocks x 8 NT x rows) the blocks' bias sums, one m64nNk8 tf32
// wgmma for each of three parts of -K (hi + mid + lo = -K exactly: tf32 keeps 11 significant bits,
// each part takes the next 11 of the fp32 sum's 24, by truncation). The scales are fp16, exact in
// tf32. Instead of one FADD an output a block (and its bias loads): three wgmma a tile-slice,
// issued with the slice's last block, so no warp waits for them (as mma.sync, their 9 an x tile
// waited on the tensor pipe the blocks' wgmma kept busy: 5.7 % of the tile loop's warp samples,
// docs/BENCHMARKS.md, forty-fourth pass).
__device__ __forceinline__ uint32_t tf32_bits(float v) {
    return __float_as_uint(v) & 0xFFFFE000u;
}

// The three parts of -K from the bias sums as staged ([qb][x row]) as the wgmma's B operand:
// K-major without swizzle, part P's element (block k, x row n) at byte P 256 NT + (k / 4) 128 NT +
// (n / 8) 128 + (n % 8) 16 + (k % 4) 4 (core matrices of 8 x rows by 4 blocks, 128 NT bytes apart
// along K, 128 along N). Ends with the stores fenced for the async proxy (a barrier must follow).
template <int NT>
__device__ __forceinline__ void bias_operand(const float* bias, uint8_t* b) {
    for (int t = static_cast<int>(threadIdx.x); t < 8 * 8 * NT; t += static_cast<int>(blockDim.x)) {
        const int k = t / (8 * NT), n = t - k * (8 * NT);
        const float v = -bias[k * NT * 8 + n];
        const uint32_t hi = tf32_bits(v);
        const float rest = v - __uint_as_float(hi);  // exact: the bits hi dropped
        const uint32_t mid = tf32_bits(rest);
        const uint32_t part[3] = {hi, mid, __float_as_uint(rest - __uint_as_float(mid))};  // lo: exact
        const int at = (k >> 2) * 128 * NT + (n >> 3) * 128 + (n & 7) * 16 + (k & 3) * 4;
#pragma unroll
        for (int P = 0; P < 3; ++P) *reinterpret_cast<uint32_t*>(b + P * 256 * NT + at) = part[P];
    }
    fence_async_shared();
}

// Issues acc += S (-K) as one group: s the tile's scales as the A fragment (s[0] rows g, g + 8
// of block tig; s[1] of block tig + 4, from the tile's two units), b_desc the operand's first part.
// The largest part first: it cancels most of acc (~1024 times the result, the codes' offset), which
// then takes the smaller parts with only the result's rounding.
template <int NT>
__device__ __forceinline__ void issue_bias(const uint32_t (&s)[2][2], uint64_t b_desc, float (&acc)[NT][4]) {
    float(&d)[4 * NT] = reinterpret_cast<float(&)[4 * NT]>(acc);
    const uint32_t a[4] = {s[0][0], s[0][1], s[1][0], s[1][1]};
    wgmma_fence_operands(d);
    wgmma_fence();
#pragma unroll
    for (int P = 0; P < 3; ++P) wgmma_tf32<8 * NT>(d, a, b_desc + ((P * 256 * NT) >> 4));
    wgmma_commit();
    wgmma_fence_operands(d);
}
#endif

// Issues quant block qb's 8 wgmma (fragments f, x from the descriptor of x's start) into d and
// commits them as one group.
template <int NT>
__device__ __forceinline__ void issue_block(const uint32_t (&f)[8][4], uint64_t x_desc, int qb,
                                            float (&d)[4 * NT]) {
    // Step s = E + w (E even): pairs E and E + 1 of word w. The descriptors are made before the
    // fence: a register an instruction other than a wgmma defines inside the group serialises it.
    uint64_t desc[8];
#pragma unroll
    for (int s = 0; s < 8; ++s) desc[s] = x_desc + (WgmmaX<NT>::column(qb, s & 1, s & ~1) >> 4);
    wgmma_fence_operands(d);
    wgmma_fence();
    wgmma_f16<8 * NT, false>(d, f[0], desc[0]);
#pragma unroll
    for (int s = 1; s < 8; ++s) wgmma_f16<8 * NT, true>(d, f[s], desc[s]);
    wgmma_commit();
    wgmma_fence_operands(d);
}

constexpr int kRecordWarps = 8;  // a stage_records_kernel block's warps, an item each

// x's rows as the wgmma kernel's records, [slice]: a warp a (x row, quant block), as stage_x
// stages it (the same words and sums), once a call instead of once a block.
template <int NT>
__global__ void __launch_bounds__(kRecordWarps * 32) stage_records_kernel(MatmulArgs a, uint8_t* records) {
#ifdef NIWA_WGMMA
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int per_row = static_cast<int>(a.in / kQuantBlock);
    const int item = static_cast<int>(blockIdx.x) * kRecordWarps + warp;
    pdl_release();
    pdl_wait();
    if (item >= a.n * per_row) return;
    const int r = item / per_row, qb = item - r * per_row;
    const int slice = qb / kSliceBlocks, sqb = qb - slice * kSliceBlocks;
    const StageLane<WordPairs::Adjacent> sl(lane);
    float v[4];
    sl.load(a.x + r * a.ldx + static_cast<int64_t>(qb) * kQuantBlock, v);
    uint32_t w0, w1;
    sl.pack(v, w0, w1);
    const float sum = block_bias(w0, w1, sl.weight);
    uint8_t* rec = records + slice * wg_record_bytes(NT);
    uint32_t* xs = reinterpret_cast<uint32_t*>(rec);
    xs[WgmmaX<NT>::at(r, sqb, lane)] = w0;
    xs[WgmmaX<NT>::at(r, sqb, lane + 32)] = w1;
    if (lane == 0) reinterpret_cast<float*>(rec + wg_x_bytes(NT))[sqb * NT * 8 + r] = sum;
    fence_async_global();  // the records are read by the bulk copy engine
#else
    (void)a, (void)records;
    __trap();  // launched only with the wgmma kernel
#endif
}

// records: x's slices as stage_records_kernel writes them, each block copying its own.
// halves: the record's x copied in two halves (a unit's quant blocks each), the first tile's
// units waiting for their own half only; else whole before the first tile. BiasMma: the bias
// sums subtracted on the tensor cores once a tile-slice (issue_bias), not a block at a time.
template <int NT, bool BiasMma>
__global__ void __launch_bounds__(kWgWarps * 32, wg_blocks_per_sm(NT))
    wgmma_decode_kernel(DecodeParams p, const uint8_t* records, bool halves) {
#ifdef NIWA_WGMMA
    extern __shared__ __align__(128) uint8_t smem[];
    uint32_t* xs = reinterpret_cast<uint32_t*>(smem);
    float* bias = reinterpret_cast<float*>(smem + wg_x_bytes(NT));
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, tig = lane & 3;
    const MatmulArgs& a = p.a;
    const int group = blockIdx.x, slice = blockIdx.y;
    const int64_t t0 = p.tiles * group / p.groups, t1 = p.tiles * (group + 1) / p.groups;
    // Warpgroup wg takes the group's tiles four at a time (t0 + 4 (wg + 3 k), + 4), its warp wq the
    // wq-th; past t1 a warp reads the group's last tile again and stores nothing. Every warp of a
    // warpgroup runs the same units, as its wgmma need.
    const int wg = warp >> 2, wq = warp & 3;
    const int64_t first = t0 + 4 * wg;
    constexpr int kQuad = 4 * (kWgWarps / 4);
    const int units = first < t1 ? 2 * static_cast<int>((t1 - first + kQuad - 1) / kQuad) : 0;
    auto tile_at = [&](int u) { return first + static_cast<int64_t>(kQuad) * (u >> 1) + wq; };
    // Its runs: the first tile's (the group's last past t1), then a quad of tiles' runs further a
    // tile (kQuad tiles' runs of every slice), never past the group's last (32-bit offsets:
    // wgmma_decode_takes).
    const int64_t run_tile = min(first + wq, t1 - 1);
    const uint8_t* run0 = tile_run_of(a, run_tile, slice);
    const uint32_t tile_bytes = static_cast<uint32_t>(tiled_run_at(a.in, kTileRows, 0));  // tile 1's run
    const uint32_t quad_bytes = kQuad * tile_bytes,
                   last = static_cast<uint32_t>(t1 - 1 - run_tile) * tile_bytes;
    auto fill = [&](int u, uint8_t* slot) {
        issue_tiled_unit(run0 + min(static_cast<uint32_t>(u >> 1) * quad_bytes, last), u & 1, slot, lane);
    };
    uint8_t* slots = smem + wg_record_bytes(NT) + warp * kWgRing * kRingSlotBytes;
    UnitRing<kWgRing, decltype(fill)> ring{fill, slots, units};

    uint64_t* copied = reinterpret_cast<uint64_t*>(smem + wg_smem_bytes(NT) - kWgTailBytes);
    if (threadIdx.x == 0)
        for (int i = 0; i < 3; ++i) mbarrier_init(copied + i);
    __syncthreads();

    pdl_release();
    ring.prime();
    pdl_wait();
    const uint8_t* rec = records + slice * wg_record_bytes(NT);
    constexpr uint32_t kHalf = static_cast<uint32_t>(wg_x_bytes(NT) / 2);
    if (threadIdx.x == 0) {
        bulk_copy_to_shared(smem + wg_x_bytes(NT), rec + wg_x_bytes(NT), wg_bias_bytes(NT), copied + 2);
        if (halves) {
            bulk_copy_to_shared(smem, rec, kHalf, copied);
            bulk_copy_to_shared(smem + kHalf, rec + kHalf, kHalf, copied + 1);
        } else {
            bulk_copy_to_shared(smem, rec, wg_x_bytes(NT), copied);
        }
    }
    mbarrier_wait(copied + 2, 0);
    if (!halves) mbarrier_wait(copied, 0);
    uint8_t* const bias_b = smem + wg_record_bytes(NT) + wg_rings_bytes();
    if constexpr (BiasMma) {
        bias_operand<NT>(bias, bias_b);
        __syncthreads();
    }
    [[maybe_unused]] const uint64_t bias_desc = wgmma_desc(bias_b, 128 * NT, 128);
    // Block tig's of a unit's four fp16 scales of a row (two words), as tf32 bits.
    const uint32_t scale_sel = (2 * tig) | ((2 * tig + 1) << 4);  // __byte_perm's selector
    [[maybe_unused]] auto scale_bits = [scale_sel](uint2 s) {
        return __float_as_uint(half_bits_to_float(static_cast<uint16_t>(__byte_perm(s.x, s.y, scale_sel))));
    };

    const uint64_t x_desc = wgmma_desc(xs, WgmmaX<NT>::kRows * 16, 128);
    // The warp's unit u (half u % 2 of its tile u / 2) from the ring.
    auto next_unit = [&](int u, Unit& cur) {
        read_unit<true>(ring.acquire(u), g, tig, cur);
        ring.release();
    };
    // A tile at a time, its 8 blocks in straight-line code with the pipeline drained at its end:
    // ptxas follows which group holds which registers only there (across the loop's back edge it
    // serialises every wgmma).
    const TileStores<NT> stores(p, slice, tig);
    for (int u = 0; u < units; u += 2) {
        float acc[NT][4];
#pragma unroll
        for (int nt = 0; nt < NT; ++nt)
#pragma unroll
            for (int i = 0; i < 4; ++i) acc[nt][i] = 0.0f;
        float d[2][4 * NT];
        uint32_t f[2][8][4];
        float pd0 = 0.0f, pd1 = 0.0f;        // the scales of the block in flight before this one
        [[maybe_unused]] uint32_t sc[2][2];  // issue_bias's A: rows g, g + 8 of blocks tig, tig + 4
        Unit cur;
#pragma unroll
        for (int q = 0; q < kSliceBlocks; ++q) {
            const int j = q % kUnitBlocks;
            if (j == 0) {
                // x's half of these quant blocks, in the first tile (a unit's blocks are a half).
                if (halves && u == 0) mbarrier_wait(copied + q / kUnitBlocks, 0);
                next_unit(u + q / kUnitBlocks, cur);
                if constexpr (BiasMma) {
                    const int h = q / kUnitBlocks;
                    sc[h][0] = scale_bits(cur.s0);
                    sc[h][1] = scale_bits(cur.s1);
                }
            }
            const BlockWords w = block_words(cur, j);
            decode_block(w, f[q & 1]);
            issue_block<NT>(f[q & 1], x_desc, q, d[q & 1]);
            if (q > 0) {
                wgmma_wait<1>();  // block q - 1 has finished
                wgmma_fence_operands(d[(q - 1) & 1]);
                apply_block<NT, BiasMma>(d[(q - 1) & 1], pd0, pd1, q - 1, bias, tig, acc);
            }
            pd0 = w.d0;
            pd1 = w.d1;
        }
        // The bias group follows the last block's into the tensor cores while they still run it
        // (acc has taken the blocks before): it needs no wait of its own, the last block's covers it.
        if constexpr (BiasMma) issue_bias<NT>(sc, bias_desc, acc);
        wgmma_wait<0>();
        wgmma_fence_operands(d[(kSliceBlocks - 1) & 1]);
        apply_block<NT, BiasMma>(d[(kSliceBlocks - 1) & 1], pd0, pd1, kSliceBlocks - 1, bias, tig, acc);
        if (tile_at(u) < t1) stores.store(tile_at(u), g, acc);
    }
    if (halves) {  // a warp without tiles: no copy may still be landing as the block leaves
        mbarrier_wait(copied, 0);
        mbarrier_wait(copied + 1, 0);
    }
    sum_slices(p, group, t0, t1, reinterpret_cast<unsigned*>(smem + wg_smem_bytes(NT) - 16));
#else
    (void)p, (void)records;
    __trap();  // launched only where sm_90a code exists (wgmma_decode_takes)
#endif
}

}  // namespace

bool CudaOps::has_wgmma_decode() const {
#ifdef NIWA_SM90A
    return props_.major == 9;
#else
    return false;
#endif
}

bool wgmma_decode_takes(const CudaOps& ops, const MatmulArgs& a) {
    // The kernel's offsets into the matrix are 32-bit (its tiles' runs, one quad past the last).
    const auto bytes =
        static_cast<int64_t>(tiled_run_at(a.in, (a.out + kTileRows - 1) / kTileRows * kTileRows, 0));
    // Its widest block's shared memory, static included, within what a block may have.
    return ops.has_wgmma_decode() && a.type == DType::PQ2_0T && a.in % (kSliceBlocks * kQuantBlock) == 0 &&
           a.n >= 1 && bytes < (int64_t{1} << 31) &&
           wg_smem_bytes(4) + ops.static_smem(wgmma_decode_kernel<4, true>) <=
               ops.props().sharedMemPerBlockOptin;
}

void launch_wgmma_decode(CudaOps& ops, const MatmulArgs& a) {
    require(wgmma_decode_takes(ops, a), "matmul",
            "the wgmma decode kernel takes PQ2_0T matrices of whole runs on an sm_90 GPU with sm_90a code");
    for_each_row_group(a, kDecodeMaxRows, [&](const MatmulArgs& pass) {
        with_x_tiles(static_cast<int>((pass.n + 7) / 8), [&](auto x_tiles) {
            constexpr int NT = decltype(x_tiles)::value;
            const size_t bytes =
                wg_record_bytes(NT) * static_cast<size_t>(pass.in / (kSliceBlocks * kQuantBlock));
            auto* records = static_cast<uint8_t*>(ops.workspace(CudaOps::Workspace::DecodeX, bytes));
            const int64_t items = pass.n * (pass.in / kQuantBlock);
            NIWA_CUDA_CHECK(
                launch_overlapping(ops.overlap_launches(), stage_records_kernel<NT>,
                                   dim3(static_cast<unsigned>((items + kRecordWarps - 1) / kRecordWarps)),
                                   dim3(kRecordWarps * 32), 0, ops.stream(), pass, records));
            auto launch = [&](auto bias_mma) {
                auto* kernel = wgmma_decode_kernel<NT, decltype(bias_mma)::value>;
                static std::atomic<uint64_t> configured{0};
                static std::atomic<int> cached[64] = {};
                allow_max_smem(ops, kernel, configured);
                const int n = blocks_per_sm(ops, kernel, kWgWarps * 32, wg_smem_bytes(NT), cached);
                launch_wave(ops, kernel, kWgWarps * 32, pass, wg_smem_bytes(NT), std::max(1, n),
                            static_cast<const uint8_t*>(records), ops.record_halves());
            };
            if (ops.wgmma_bias_mma())
                launch(std::true_type{});
            else
                launch(std::false_type{});
        });
    });
}

}  // namespace niwa::kernels::cuda
