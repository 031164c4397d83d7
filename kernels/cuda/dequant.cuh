// Device-side decoding of the packed weight formats (kernels/formats.h, MODEL.md "GGUF"), shared
// by matmul and embed. Plain per-element decoders for the fp32 paths, and the ternary word
// decoders the tensor-core kernels use: sixteen 2-bit codes to eight fp16 pairs, exactly.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "kernels/formats.h"

namespace niwa::kernels::cuda {

__device__ __forceinline__ float half_bits_to_float(uint16_t h) {
    return __half2float(__ushort_as_half(h));
}

__device__ __forceinline__ float bf16_bits_to_float(uint16_t h) {
    return __uint_as_float(static_cast<uint32_t>(h) << 16);
}

// A little-endian u16 at a 2-byte aligned address (every field of every format is).
__device__ __forceinline__ uint16_t load_u16(const uint8_t* p) {
    return *reinterpret_cast<const uint16_t*>(p);
}

// Trit code (0, 1, 2 for -1, 0, +1) n (0..4) of a PTQ1_0 byte.
__device__ __forceinline__ int ptq1_code(uint32_t b, int n) {
    const uint32_t p = n == 0 ? 1u : n == 1 ? 3u : n == 2 ? 9u : n == 3 ? 27u : 81u;
    return static_cast<int>((((b * p) & 0xffu) * 3u) >> 8);
}

// Code of element j (0..127) of a PTQ1_0 block (MODEL.md: trit n of qs[m] is element 16n + m,
// of qs[16 + m] element 80 + 8n + m, of qh[h] element 120 + 2n + h).
__device__ __forceinline__ int ptq1_element_code(const uint8_t* blk, int j) {
    if (j < 80) return ptq1_code(blk[j & 15], j >> 4);
    if (j < 120) return ptq1_code(blk[16 + ((j - 80) & 7)], (j - 80) >> 3);
    return ptq1_code(blk[24 + ((j - 120) & 1)], (j - 120) >> 1);
}

// Where block b of a PQ2_0 or PQ2_0S row keeps its 32 code bytes (PQ2_0's qs) and its fp16
// scale, and code word w (0..7: 16 codes, element 16w + j at bits 2j) of those bytes.
template <DType T>
struct Pq2Layout;

template <>
struct Pq2Layout<DType::PQ2_0> {
    __device__ __forceinline__ static const uint8_t* codes(const uint8_t* row, int64_t b) {
        return row + b * kPq2BlockBytes + 2;
    }
    __device__ __forceinline__ static const uint8_t* scale(const uint8_t* row, int64_t b) {
        return row + b * kPq2BlockBytes;
    }
    // Read as two u16: the block is only 2-byte aligned.
    __device__ __forceinline__ static uint32_t word(const uint8_t* codes, int w) {
        const uint8_t* p = codes + 4 * w;
        return static_cast<uint32_t>(load_u16(p)) | (static_cast<uint32_t>(load_u16(p + 2)) << 16);
    }
};

template <>
struct Pq2Layout<DType::PQ2_0S> {
    __device__ __forceinline__ static const uint8_t* codes(const uint8_t* row, int64_t b) {
        return row + (b / kSplitRunBlocks) * kSplitRunBytes + kSplitScaleBytes + 32 * (b % kSplitRunBlocks);
    }
    __device__ __forceinline__ static const uint8_t* scale(const uint8_t* row, int64_t b) {
        return row + (b / kSplitRunBlocks) * kSplitRunBytes + 2 * (b % kSplitRunBlocks);
    }
    // Codes of a 4-byte aligned row are 4-byte aligned.
    __device__ __forceinline__ static uint32_t word(const uint8_t* codes, int w) {
        return reinterpret_cast<const uint32_t*>(codes)[w];
    }
};

// Element k of a row of type T, in fp32: exactly what dequantize_row gives.
template <DType T>
__device__ __forceinline__ float weight_at(const uint8_t* row, int64_t k) {
    if constexpr (T == DType::F32) {
        return reinterpret_cast<const float*>(row)[k];
    } else if constexpr (T == DType::F16) {
        return half_bits_to_float(load_u16(row + 2 * k));
    } else if constexpr (T == DType::BF16) {
        return bf16_bits_to_float(load_u16(row + 2 * k));
    } else if constexpr (T == DType::Q8_0) {
        const uint8_t* blk = row + (k / kQ8BlockElems) * kQ8BlockBytes;
        return half_bits_to_float(load_u16(blk)) * static_cast<float>(static_cast<int8_t>(blk[2 + k % 32]));
    } else if constexpr (T == DType::PQ2_0 || T == DType::PQ2_0S) {
        const int64_t b = k / kQuantBlock;
        const int j = static_cast<int>(k % kQuantBlock);
        const int q = (Pq2Layout<T>::codes(row, b)[j / 4] >> (2 * (j % 4))) & 3;
        return static_cast<float>(q - 1) * half_bits_to_float(load_u16(Pq2Layout<T>::scale(row, b)));
    } else {
        const uint8_t* blk = row + (k / kQuantBlock) * kPtq1BlockBytes;
        const int q = ptq1_element_code(blk, static_cast<int>(k % kQuantBlock));
        return static_cast<float>(q - 1) * half_bits_to_float(load_u16(blk + 26));
    }
}

// Ternary block helpers for the tensor-core kernels. A "code word" holds 16 codes, element
// 16w + j of the block at bits 2j of word w (PQ2_0's own byte order).
template <DType T>
struct TernaryFormat;

template <>
struct TernaryFormat<DType::PQ2_0> {
    static constexpr int kBytes = kPq2BlockBytes;
    __device__ __forceinline__ static float scale(const uint8_t* blk) {
        return half_bits_to_float(load_u16(blk));
    }
    // Code word w (0..7): qs[4w .. 4w+4).
    __device__ __forceinline__ static uint32_t word(const uint8_t* blk, int w) {
        return Pq2Layout<DType::PQ2_0>::word(blk + 2, w);
    }
};

// Codes of two bytes' trit n at once: the bytes sit in the two 16-bit lanes of `pair`, and
// every step stays inside its lane (255 * 81 < 2^16).
__device__ __forceinline__ uint32_t ptq1_pair_codes(uint32_t pair, uint32_t p) {
    return ((((pair * p) & 0x00ff00ffu) * 3u) >> 8) & 0x00030003u;
}

template <>
struct TernaryFormat<DType::PTQ1_0> {
    static constexpr int kBytes = kPtq1BlockBytes;
    __device__ __forceinline__ static float scale(const uint8_t* blk) {
        return half_bits_to_float(load_u16(blk + 26));
    }
    // Code word w (0..7) in element order, built two elements (j, j + 8) at a time, so the
    // result is the same word PQ2_0 stores for the same trits.
    __device__ __forceinline__ static uint32_t word(const uint8_t* blk, int w) {
        uint32_t out = 0;
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            // Elements 16w + j and 16w + j + 8: their bytes and trit indices.
            uint32_t b_lo, b_hi, n_lo, n_hi;
            element_source(blk, 16 * w + j, b_lo, n_lo);
            element_source(blk, 16 * w + j + 8, b_hi, n_hi);
            uint32_t codes;
            if (n_lo == n_hi) {
                codes = ptq1_pair_codes(b_lo | (b_hi << 16), pow3(n_lo));
            } else {
                codes = ptq1_pair_codes(b_lo, pow3(n_lo)) | ptq1_pair_codes(b_hi << 16, pow3(n_hi));
            }
            out |= (codes & 3u) << (2 * j);
            out |= (codes >> 16) << (2 * j + 16);
        }
        return out;
    }

private:
    __device__ __forceinline__ static uint32_t pow3(uint32_t n) {
        return n == 0 ? 1u : n == 1 ? 3u : n == 2 ? 9u : n == 3 ? 27u : 81u;
    }
    __device__ __forceinline__ static void element_source(const uint8_t* blk, int e, uint32_t& byte,
                                                          uint32_t& n) {
        if (e < 80) {
            byte = blk[e & 15];
            n = static_cast<uint32_t>(e >> 4);
        } else if (e < 120) {
            byte = blk[16 + ((e - 80) & 7)];
            n = static_cast<uint32_t>((e - 80) >> 3);
        } else {
            byte = blk[24 + ((e - 120) & 1)];
            n = static_cast<uint32_t>((e - 120) >> 1);
        }
    }
};

// The 16 elements of a ternary code word (2 bits each, code - 1) at scale d.
__device__ __forceinline__ void ternary_word16(uint32_t word, float d, float (&v)[16]) {
#pragma unroll
    for (int i = 0; i < 16; ++i) v[i] = static_cast<float>(static_cast<int>((word >> (2 * i)) & 3) - 1) * d;
}

// Elements k .. k + N - 1 of a row of type T in fp32, zero from `in` on: exactly what weight_at
// gives. With N = 16 and k a multiple of 16 a ternary block's code word is decoded whole and a
// Q8_0 block's scale read once (their rows are whole blocks, so k < in means all 16 exist;
// PQ2_0S rows are 4-byte aligned, as every allocation and its 16-byte row strides are).
template <DType T, int N>
__device__ __forceinline__ void weights_at(const uint8_t* row, int64_t k, int64_t in, float (&v)[N]) {
    if constexpr (N == 16 && (T == DType::PQ2_0 || T == DType::PQ2_0S || T == DType::PTQ1_0)) {
        const int64_t b = k / kQuantBlock;
        const int w = static_cast<int>(k % kQuantBlock) / 16;
        float d;
        uint32_t word;
        if constexpr (T == DType::PTQ1_0) {
            const uint8_t* blk = row + b * kPtq1BlockBytes;
            d = TernaryFormat<T>::scale(blk);
            word = TernaryFormat<T>::word(blk, w);
        } else {
            d = half_bits_to_float(load_u16(Pq2Layout<T>::scale(row, b)));
            word = Pq2Layout<T>::word(Pq2Layout<T>::codes(row, b), w);
        }
        ternary_word16(word, d, v);
    } else if constexpr (N == 16 && T == DType::Q8_0) {
        const uint8_t* blk = row + (k / kQ8BlockElems) * kQ8BlockBytes;
        const float d = half_bits_to_float(load_u16(blk));
        const auto* qs = reinterpret_cast<const int8_t*>(blk + 2 + k % kQ8BlockElems);
#pragma unroll
        for (int i = 0; i < 16; ++i) v[i] = static_cast<float>(qs[i]) * d;
    } else {
#pragma unroll
        for (int i = 0; i < N; ++i) v[i] = k + i < in ? weight_at<T>(row, k + i) : 0.0f;
    }
}

// PQ2_0T (formats.h): the run of a tile that holds input k of row `row`, in a matrix of `in`
// inputs a row.
__device__ __forceinline__ const uint8_t* tiled_run(const uint8_t* w, int64_t in, int64_t row, int64_t k) {
    return w + tiled_run_at(in, row, k);
}

// Elements k .. k + 15 (k a multiple of 16) of row `row` of a PQ2_0T matrix of `in` inputs a
// row, in fp32: exactly what weights_at gives for the PQ2_0 row it was made from.
__device__ __forceinline__ void tiled_weights16(const uint8_t* w, int64_t in, int64_t row, int64_t k,
                                                float (&v)[16]) {
    const uint8_t* run = tiled_run(w, in, row, k);
    const int b = static_cast<int>(k % kSplitRunElems) / kQuantBlock, r = static_cast<int>(row % kTiledRows);
    const float d = half_bits_to_float(load_u16(run + tiled_scale_at(b, r)));
    const uint32_t word = *reinterpret_cast<const uint32_t*>(run + tiled_codes_at(b, r) +
                                                             4 * (static_cast<int>(k % kQuantBlock) / 16));
    ternary_word16(word, d, v);
}

// Pair e (0..7) of a code word holds elements (16w + e, 16w + e + 8): after a right shift by
// pair_shift(e) their codes sit at bit 2s of each 16-bit half, s = pair_log4(e) <= 4. Pairs 0-4
// are read in place (bits 0-9: all of fp16's mantissa), pairs 5-7 after one shift by 10, so a
// word costs one shift.
__host__ __device__ constexpr int pair_shift(int e) {
    return e < 5 ? 0 : 10;
}
__host__ __device__ constexpr int pair_log4(int e) {
    return e - pair_shift(e) / 2;
}
// 4^-s for pair e: the factor the matching x values are stored with (x / 256 at most: an
// fp16 subnormal only below 1/64, where its absolute error is still under fp16's at x ~ 1/128).
__host__ __device__ constexpr float pair_x_scale(int e) {
    return 1.0f / static_cast<float>(1 << (2 * pair_log4(e)));
}

// The fp16 pair (1024 + q_e 4^s, 1024 + q_{e+8} 4^s) of a code word in one logic op: the
// codes become mantissa bits of 1024, exactly. Multiplied by x 4^-s this gives q x + 1024 4^-s x,
// so the caller subtracts the sum of (1024 4^-s + 1) x once per block to get (q - 1) x.
// One LOP3 computes (a & b) | c, but takes one immediate: written as PTX with the constants as
// register operands (hoisted out of the caller's loops), or the compiler emits an AND and an OR.
template <int E>
__device__ __forceinline__ uint32_t biased_code_pair(uint32_t word) {
    constexpr int kShift = pair_shift(E), kLog4 = pair_log4(E);
    uint32_t out;
    asm("lop3.b32 %0, %1, %2, %3, 0xEA;"
        : "=r"(out)
        : "r"(word >> kShift), "r"(0x00030003u << (2 * kLog4)), "r"(0x64006400u));
    return out;
}

}  // namespace niwa::kernels::cuda
