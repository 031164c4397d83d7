// The register decode kernel's arithmetic with x in int8 (matmul_decode_split.cu; CudaOps::decode_x8):
// 1-4 rows of x, PQ2_0S or PQ2_0T weights. At one row the fp16 mma fed with decoded weights tops
// out near 444 per µs per SM, below the 475 the copy rate needs; the u8 x s8 mma (m16n8k32) takes
// twice the weights an instruction and its operands cost one AND a register (tests/gpu/mma_rate.cu:
// ~730-900 at the kernel's 16 warps an SM; docs/BENCHMARKS.md, twenty-seventh pass).
//
// x: a block stages its slice of x once, each row's quant block (128 inputs) as two int8 values an
// input, q0 = rint(x / s) and q1 = rint(256 (x / s - q0)) (clamped to 127), s = max|x| / 127 (x8_quantize;
// the CPU reference in the tests does the same arithmetic): x = s (q0 + q1 / 256) to within s / 512
// (s / 256 where q1 is clamped), ~2^-16 of the block's largest value (fp16 keeps 2^-11 of each value). One
// mma has 8 columns of x and a decode step uses one or a few: row r's q0 and q1 are columns 2 r and 2 r + 1
// of the same mma, so the second int8 costs no tensor-core work, only its staging and one more FMA.
//
// Weights: a code word holds codes c = 0..15 of inputs 16 w + c, 2 bits each (0, 1, 2 for -1, 0, 1).
// Masking a word with 0x03030303 << 2 s leaves in byte b the code c = 4 b + s times 4^s, a u8 as
// the mma takes it: a quant block is four mma, s = 0..3, each over 32 inputs (words 2 tig and 2 tig
// + 1 of rows g and g + 8, as the fp16 kernels' threads take them), each into its own int32
// accumulators (no chain between them). 64 sum = 64 C_0 + 16 C_1 + 4 C_2 + C_3 exactly
// (C_s = 4^s sum_s), minus 64 sum(q) for the codes' offset of 1, times scale_w s / 64 (q1: / 256 more).
// x is stored so thread (g, tig) reads its column g's B fragments for the four mma of a quant block
// as two 16-byte loads: byte 32 t + 8 s + 4 h + b of a block's 128 holds input 32 t + 16 h + 4 b + s.
#pragma once

#include <cstdint>

#include "kernels/cuda/decode_units.cuh"
#include "kernels/cuda/matmul_decode.cuh"
#include "kernels/cuda/mma.cuh"

namespace niwa::kernels::cuda {

// Rows of x the int8 kernel takes: each is two of an mma's 8 columns.
constexpr int kX8MaxRows = 4;

// A column of x8 staging (column 2 r: row r's q0, 2 r + 1: its q1): the slice's kSliceBlocks quant
// blocks of 128 bytes, 16 more so the 8 columns' loads of one instruction meet different banks.
constexpr int kX8RowBytes = kSliceBlocks * kQuantBlock + 16;
// After the 8 columns: the blocks' s / 64 and s / (64 256) (fp32), 64 sum(q0) and 64 sum(q1)
// (int32), [quant block][column].
constexpr int kX8ScaleAt = 8 * kX8RowBytes;
constexpr int kX8BiasAt = kX8ScaleAt + kSliceBlocks * 8 * 4;
constexpr size_t kX8Bytes = kX8BiasAt + kSliceBlocks * 8 * 4;
static_assert(kX8Bytes <= decode_x_bytes(1), "x8 staging fits where one fp16 x tile does");

// Input of a quant block lane L stores byte b of (x8_input(L, b)): word L of the block's 32.
__host__ __device__ constexpr int x8_input(int lane, int b) {
    return 32 * (lane >> 3) + 16 * (lane & 1) + 4 * b + ((lane >> 1) & 3);
}

// One row's quant block, values v (lane L: inputs x8_input(L, 0..3)), as q0 into `hi` and q1 into
// `lo` (the block's 128 bytes of each column) with the scales and bias sums of both (lane 0:
// scale[0] and bias[0] q0's, scale[1] and bias[1] q1's). Every lane of the warp takes part.
__device__ __forceinline__ void x8_quantize(const float (&v)[4], int lane, uint8_t* hi, uint8_t* lo,
                                            float* scale, int* bias) {
    // Non-negative floats order as their bits do: one warp reduction instruction (sm_80+), not
    // five shuffles.
    const float lane_max = fmaxf(fmaxf(fabsf(v[0]), fabsf(v[1])), fmaxf(fabsf(v[2]), fabsf(v[3])));
    const float m = __uint_as_float(__reduce_max_sync(0xffffffffu, __float_as_uint(lane_max)));
    const float inv = m > 0.0f ? 127.0f / m : 0.0f;
    uint32_t w0 = 0, w1 = 0;
    int sum0 = 0, sum1 = 0;
#pragma unroll
    for (int b = 0; b < 4; ++b) {
        const float t = v[b] * inv;
        const int q0 = __float2int_rn(t);
        const int q1 = min(__float2int_rn((t - static_cast<float>(q0)) * 256.0f), 127);
        sum0 += q0;
        sum1 += q1;
        w0 |= static_cast<uint32_t>(q0 & 0xFF) << (8 * b);
        w1 |= static_cast<uint32_t>(q1 & 0xFF) << (8 * b);
    }
    reinterpret_cast<uint32_t*>(hi)[lane] = w0;
    reinterpret_cast<uint32_t*>(lo)[lane] = w1;
    sum0 = __reduce_add_sync(0xffffffffu, sum0);
    sum1 = __reduce_add_sync(0xffffffffu, sum1);
    if (lane == 0) {
        const float s64 = m / 127.0f * (1.0f / 64.0f);
        scale[0] = s64;
        scale[1] = s64 * (1.0f / 256.0f);
        bias[0] = 64 * sum0;
        bias[1] = 64 * sum1;
    }
}

// x's slice (quant blocks qb0 .. qb0 + nqb of rows [0, min(n, kX8MaxRows))) from `read(r, channel)`
// (fp32) into the x8 staging at xs; a warp a row's quant block at a time. Ends with the block
// synchronised.
template <typename Read>
__device__ __forceinline__ void stage_x8(const Read& read, int64_t n, int qb0, int nqb, uint8_t* xs) {
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, warps = blockDim.x >> 5;
    const int rows = min(static_cast<int>(n), kX8MaxRows);
    for (int i = warp; i < rows * nqb; i += warps) {
        const int r = i / nqb, qb = i - r * nqb;
        const int64_t c0 = static_cast<int64_t>(qb0 + qb) * kQuantBlock;
        float v[4];
#pragma unroll
        for (int b = 0; b < 4; ++b) v[b] = read(r, c0 + x8_input(lane, b));
        uint8_t* col = xs + 2 * r * kX8RowBytes + qb * kQuantBlock;
        x8_quantize(v, lane, col, col + kX8RowBytes,
                    reinterpret_cast<float*>(xs + kX8ScaleAt) + qb * 8 + 2 * r,
                    reinterpret_cast<int*>(xs + kX8BiasAt) + qb * 8 + 2 * r);
    }
    __syncthreads();
}

// acc += nb quant blocks of a unit (from the slice's block qb) times x8: thread (g, tig)'s x is
// xg = xs + g kX8RowBytes + 32 tig.
__device__ __forceinline__ void unit_product_x8(const Unit& u, int nb, int qb, const uint8_t* xs,
                                                const uint8_t* xg, int tig, float (&acc)[1][4]) {
#pragma unroll
    for (int j = 0; j < kUnitBlocks; ++j) {
        if (j >= nb) break;
        const int q = qb + j;
        const BlockWords w = block_words(u, j);
        const uint4 x01 = *reinterpret_cast<const uint4*>(xg + q * kQuantBlock);
        const uint4 x23 = *reinterpret_cast<const uint4*>(xg + q * kQuantBlock + 16);
        const uint32_t bx[4][2] = {{x01.x, x01.y}, {x01.z, x01.w}, {x23.x, x23.y}, {x23.z, x23.w}};
        int c[4][4];
#pragma unroll
        for (int s = 0; s < 4; ++s) {
            const uint32_t m = 0x03030303u << (2 * s);
            mma_u8s8_zero(c[s], w.wa0 & m, w.wb0 & m, w.wa1 & m, w.wb1 & m, bx[s][0], bx[s][1]);
        }
        // Columns 2 tig (q0) and 2 tig + 1 (q1) of x row tig: its sum in acc[0][0] (weight row g)
        // and acc[0][2] (g + 8); TileStores stores them as x row tig's (x8 columns).
        const float2 sc = *reinterpret_cast<const float2*>(xs + kX8ScaleAt + 4 * (q * 8 + 2 * tig));
        const int2 bi = *reinterpret_cast<const int2*>(xs + kX8BiasAt + 4 * (q * 8 + 2 * tig));
        int d[4];
#pragma unroll
        for (int i = 0; i < 4; ++i) d[i] = ((c[0][i] * 4 + c[1][i]) * 4 + c[2][i]) * 4 + c[3][i];
        acc[0][0] += w.d0 * (sc.x * static_cast<float>(d[0] - bi.x) + sc.y * static_cast<float>(d[1] - bi.y));
        acc[0][2] += w.d1 * (sc.x * static_cast<float>(d[2] - bi.x) + sc.y * static_cast<float>(d[3] - bi.y));
    }
}

}  // namespace niwa::kernels::cuda
