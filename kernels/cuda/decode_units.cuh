// A decode kernel's unit of weight (matmul_decode_split.cu, matmul_decode_wgmma.cu): half a K slice
// (4 quant blocks) of a 16-row tile, thread (g, tig)'s share of it in registers (Unit), read
// straight from memory (load_unit, load_tiled_unit) or through a ring of shared-memory slots
// filled by cp.async (issue_unit, read_unit).
#pragma once

#include <cstdint>

#include "kernels/cuda/dequant.cuh"
#include "kernels/cuda/matmul_decode.cuh"
#include "kernels/cuda/mma.cuh"

namespace niwa::kernels::cuda {

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

// The same unit of a PQ2_0T matrix (formats.h), whose tile's run starts at `run`: block j's
// codes of rows g and g + 8 are 8 bytes at tiled_codes_at(4 half + j, g or g + 8) + 8 tig, so
// each load of the warp reads 256 contiguous bytes; the rows' four scales of the half are 8
// bytes at tiled_scale_at(4 half, g or g + 8).
__device__ __forceinline__ void load_tiled_unit(const uint8_t* run, int half, int g, int tig, Unit& u) {
    const uint8_t* codes = run + tiled_codes_at(kUnitBlocks * half, g) + 8 * tig;
#pragma unroll
    for (int j = 0; j < kUnitBlocks; ++j) {
        u.c0[j] = load_once(codes + tiled_codes_at(j, 0));
        u.c1[j] = load_once(codes + tiled_codes_at(j, 8));
    }
    u.s0 = load_once(run + tiled_scale_at(kUnitBlocks * half, g));
    u.s1 = load_once(run + tiled_scale_at(kUnitBlocks * half, g + 8));
}

__device__ __forceinline__ float scale_of(uint2 s, int j) {
    const uint32_t w = j < 2 ? s.x : s.y;
    return __half2float(__ushort_as_half(static_cast<unsigned short>(w >> (16 * (j & 1)))));
}

// Block j of a unit as blocks_product takes it.
__device__ __forceinline__ BlockWords block_words(const Unit& u, int j) {
    return {u.c0[j].x, u.c1[j].x, u.c0[j].y, u.c1[j].y, scale_of(u.s0, j), scale_of(u.s1, j)};
}

// Start of tile `tile`'s run for `slice` in a PQ2_0T matrix (every tile is whole).
__device__ __forceinline__ const uint8_t* tile_run_of(const MatmulArgs& a, int64_t tile, int slice) {
    return tiled_run(a.w, a.in, tile * kTileRows, static_cast<int64_t>(slice) * kSplitRunElems);
}

// Start of row `row`'s run for `slice` (rows past the weight read its last row; their sums are
// never stored).
__device__ __forceinline__ const uint8_t* run_of(const MatmulArgs& a, int64_t row, int slice) {
    return a.w + static_cast<size_t>(min(row, a.out - 1)) * a.stride +
           static_cast<size_t>(slice) * kSplitRunBytes;
}

// A ring slot: the unit's codes, row r's 128 bytes at r * 128 with its 16-byte chunk c at
// c ^ ring_swizzle(r) (thread (g, tig)'s 8-byte reads of rows g of one instruction then meet
// every bank once), and the rows' four scales, 8 bytes a row.
constexpr int kRingCodeBytes = kTileRows * 32 * kUnitBlocks;
constexpr int kRingSlotBytes = kRingCodeBytes + kTileRows * 8;
__device__ __forceinline__ int ring_swizzle(int row) {
    return (row & 3) << 1;
}

// Copies unit `half` of the PQ2_0T tile run starting at `run` into `slot`: lane L the chunks
// L + 32 k of the codes and, lanes 0-7, chunk L of the scales. A PQ2_0T unit is 2 KB of codes and
// 128 bytes of scales, each contiguous, copied as they are (its fragment order already spreads a
// warp's reads over every bank).
__device__ __forceinline__ void issue_tiled_unit(const uint8_t* run, int half, uint8_t* slot, int lane) {
#pragma unroll
    for (int k = 0; k < 4; ++k)
        cp_async16(slot + 16 * (lane + 32 * k),
                   run + tiled_codes_at(kUnitBlocks * half, 0) + 16 * (lane + 32 * k));
    if (lane < 8)
        cp_async16(slot + kRingCodeBytes + 16 * lane,
                   run + tiled_scale_at(kUnitBlocks * half, 0) + 16 * lane);
}

// Copies unit `half` of tile `tile` (whole runs) into `slot`: PQ2_0T through issue_tiled_unit;
// PQ2_0S lane L the chunks of row L / 8 + 4 k, chunk L % 8, and, lanes 0-15, row L's 8 bytes
// of scales.
template <bool Tiled>
__device__ __forceinline__ void issue_unit(const MatmulArgs& a, int64_t tile, int slice, int half,
                                           uint8_t* slot, int lane) {
    if constexpr (Tiled) {
        issue_tiled_unit(tile_run_of(a, tile, slice), half, slot, lane);
    } else {
        const int c = lane & 7;
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            const int r = (lane >> 3) + 4 * k;
            const uint8_t* run = run_of(a, tile * kTileRows + r, slice);
            cp_async16(slot + r * 128 + 16 * (c ^ ring_swizzle(r)),
                       run + kSplitScaleBytes + 128 * half + 16 * c);
        }
        if (lane < kTileRows) {
            const uint8_t* run = run_of(a, tile * kTileRows + lane, slice);
            cp_async8(slot + kRingCodeBytes + 8 * lane, run + 8 * half);
        }
    }
}

// Thread (g, tig)'s share of a unit in its slot: what load_unit (load_tiled_unit) reads from
// memory.
template <bool Tiled>
__device__ __forceinline__ void read_unit(const uint8_t* slot, int g, int tig, Unit& u) {
    if constexpr (Tiled) {
        // The unit's codes as a run's first half holds them.
        const uint8_t* codes = slot + tiled_codes_at(0, g) + 8 * tig;
#pragma unroll
        for (int j = 0; j < kUnitBlocks; ++j) {
            u.c0[j] = *reinterpret_cast<const uint2*>(codes + tiled_codes_at(j, 0));
            u.c1[j] = *reinterpret_cast<const uint2*>(codes + tiled_codes_at(j, 8));
        }
    } else {
#pragma unroll
        for (int j = 0; j < kUnitBlocks; ++j) {
            const int chunk = 2 * j + (tig >> 1), at = 8 * (tig & 1);
            u.c0[j] = *reinterpret_cast<const uint2*>(slot + g * 128 + 16 * (chunk ^ ring_swizzle(g)) + at);
            u.c1[j] = *reinterpret_cast<const uint2*>(slot + (g + 8) * 128 +
                                                      16 * (chunk ^ ring_swizzle(g + 8)) + at);
        }
    }
    // Both layouts' slots end in the rows' scales, 8 bytes a row.
    u.s0 = *reinterpret_cast<const uint2*>(slot + kRingCodeBytes + 8 * g);
    u.s1 = *reinterpret_cast<const uint2*>(slot + kRingCodeBytes + 8 * (g + 8));
}

// A warp's ring of K unit slots in shared memory (`slots`): the warp's units u = 0 .. units - 1,
// K - 1 in flight ahead of the one read, one cp.async group a unit (empty past the last), each
// copied by fill(u, slot) (issue_unit, issue_tiled_unit), in order of u. prime() requests the
// first K - 1 (weights: they may be requested before the PDL wait); then, for each unit in turn,
// acquire(u) requests unit u + K - 1, waits for unit u and returns its slot, and release()
// follows once every lane has read it.
template <int K, typename Fill>
struct UnitRing {
    Fill fill;
    uint8_t* slots;
    int units;
    int slot = 0;

    __device__ __forceinline__ void request(int u) const {
        if (u < units) fill(u, slots + (u % K) * kRingSlotBytes);
        cp_async_commit();
    }
    __device__ __forceinline__ void prime() const {
#pragma unroll
        for (int u = 0; u < K - 1; ++u) request(u);
    }
    __device__ __forceinline__ const uint8_t* acquire(int u) {
        request(u + K - 1);
        cp_async_wait<K - 1>();
        __syncwarp();
        return slots + slot * kRingSlotBytes;
    }
    __device__ __forceinline__ void release() {
        __syncwarp();  // every lane has read the slot before it is filled again
        slot = slot + 1 == K ? 0 : slot + 1;
    }
};

}  // namespace niwa::kernels::cuda
