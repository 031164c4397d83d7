// Half-precision conversions and the packed weight blocks of formats.h, bit-exact with the
// GGUF layouts (MODEL.md "GGUF"); every backend and the model writer share these.
#include "kernels/formats.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <stdexcept>
#include <string>

namespace niwa::kernels {

namespace {

uint32_t float_bits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
}

float bits_float(uint32_t u) {
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}

// Rounds `value >> shift` to nearest, ties to even (shift >= 1).
uint32_t shift_round_even(uint32_t value, int shift) {
    const uint32_t q = value >> shift;
    const uint32_t rem = value & ((1u << shift) - 1);
    const uint32_t half = 1u << (shift - 1);
    return (rem > half || (rem == half && (q & 1))) ? q + 1 : q;
}

uint16_t load_u16(const uint8_t* p) {
    return static_cast<uint16_t>(p[0] | (p[1] << 8));
}

void store_u16(uint8_t* p, uint16_t v) {
    p[0] = static_cast<uint8_t>(v & 0xff);
    p[1] = static_cast<uint8_t>(v >> 8);
}

// Trit n (0..4) of a PTQ1_0 byte: the byte is a fixed-point fraction of 3^5, so multiplying by
// 3^n moves trit n to the top and `* 3 >> 8` reads it out.
int ptq1_trit(uint8_t b, int n) {
    static constexpr uint8_t kPow3[5] = {1, 3, 9, 27, 81};
    const auto shifted = static_cast<uint8_t>(b * kPow3[n]);
    return (shifted * 3) >> 8;
}

// PTQ1_0's byte for the base-3 number v (0..242) of its five trit codes, trit 0 most
// significant: ceil(v * 256 / 243) = v + ceil(13 v / 243), so that ptq1_trit reads the codes
// back. The division is a multiply-high, exact for every v here (checked by the tests).
uint8_t ptq1_byte(uint16_t v) {
    const auto x = static_cast<uint16_t>(13 * v + 242);
    return static_cast<uint8_t>(v + ((static_cast<uint32_t>(x) * 270u) >> 16));
}

void check_blocks(DType t, int64_t n) {
    const int64_t block = dtype_block_elems(t);
    if (n < 0 || n % block != 0)
        throw std::invalid_argument(std::string(dtype_name(t)) + " row of " + std::to_string(n) +
                                    " elements is not a multiple of its block of " + std::to_string(block));
}

void dequantize_q8_0(const uint8_t* src, float* dst, int64_t n) {
    for (int64_t b = 0; b < n / kQ8BlockElems; ++b, src += kQ8BlockBytes) {
        const float d = fp16_to_f32(load_u16(src));
        const auto* qs = reinterpret_cast<const int8_t*>(src + 2);
        for (int j = 0; j < kQ8BlockElems; ++j) *dst++ = d * static_cast<float>(qs[j]);
    }
}

// One PQ2_0 block's 32 code bytes at scale d, as its 128 elements at dst; returns dst + 128.
float* dequantize_pq2_codes(const uint8_t* qs, float d, float* dst) {
    for (int j = 0; j < kQuantBlock; ++j)
        *dst++ = static_cast<float>(((qs[j / 4] >> (2 * (j % 4))) & 3) - 1) * d;
    return dst;
}

void dequantize_pq2_0(const uint8_t* src, float* dst, int64_t n) {
    for (int64_t b = 0; b < n / kQuantBlock; ++b, src += kPq2BlockBytes)
        dst = dequantize_pq2_codes(src + 2, fp16_to_f32(load_u16(src)), dst);
}

// PQ2_0S: each run's scales, then its blocks' codes (formats.h).
void dequantize_pq2_0s(const uint8_t* src, float* dst, int64_t n) {
    for (int64_t b = 0; b < n / kQuantBlock; ++b) {
        const uint8_t* run = src + (b / kSplitRunBlocks) * kSplitRunBytes;
        const float d = fp16_to_f32(load_u16(run + 2 * (b % kSplitRunBlocks)));
        dst = dequantize_pq2_codes(run + kSplitScaleBytes + 32 * (b % kSplitRunBlocks), d, dst);
    }
}

// One PQ2_0 row as PQ2_0S.
void split_pq2_0(const uint8_t* src, uint8_t* dst, int64_t n) {
    for (int64_t b = 0; b < n / kQuantBlock; ++b, src += kPq2BlockBytes) {
        uint8_t* run = dst + (b / kSplitRunBlocks) * kSplitRunBytes;
        std::memcpy(run + 2 * (b % kSplitRunBlocks), src, 2);
        std::memcpy(run + kSplitScaleBytes + 32 * (b % kSplitRunBlocks), src + 2, 32);
    }
}

void dequantize_ptq1_0(const uint8_t* src, float* dst, int64_t n) {
    for (int64_t b = 0; b < n / kQuantBlock; ++b, src += kPtq1BlockBytes, dst += kQuantBlock) {
        const uint8_t* qs = src;
        const uint8_t* qh = src + 24;
        const float d = fp16_to_f32(load_u16(src + 26));
        for (int n5 = 0; n5 < 5; ++n5) {
            for (int m = 0; m < 16; ++m) dst[16 * n5 + m] = static_cast<float>(ptq1_trit(qs[m], n5) - 1) * d;
            for (int m = 0; m < 8; ++m)
                dst[80 + 8 * n5 + m] = static_cast<float>(ptq1_trit(qs[16 + m], n5) - 1) * d;
        }
        for (int n4 = 0; n4 < 4; ++n4)
            for (int h = 0; h < 2; ++h)
                dst[120 + 2 * n4 + h] = static_cast<float>(ptq1_trit(qh[h], n4) - 1) * d;
    }
}

// Sixteen trits (bytes -1, 0, +1) to four PQ2_0 bytes without a branch. Each byte's low two
// bits (3, 0, 1) are gathered four to a byte by one multiply (the shifted copies land on
// distinct bit pairs, so nothing carries), then every 2-bit field f becomes the code
// (f + 1) mod 4: flip the low bit, and the high bit where the low bit was set.
static_assert(std::endian::native == std::endian::little, "the packing reads trits as little-endian words");
uint32_t pq2_pack16(const int8_t* trits) {
    constexpr uint64_t kLowBits = 0x0303030303030303ull;
    constexpr uint64_t kGather = (1ull << 6) | (1ull << 12) | (1ull << 18) | (1ull << 24);
    constexpr uint32_t kLowOfPair = 0x55555555u;
    uint64_t lo, hi;
    std::memcpy(&lo, trits, 8);
    std::memcpy(&hi, trits + 8, 8);
    const uint64_t a = (lo & kLowBits) * kGather;  // bytes 3 and 7 hold trits 0..3 and 4..7
    const uint64_t b = (hi & kLowBits) * kGather;
    const auto fields = static_cast<uint32_t>(((a >> 24) & 0xff) | ((a >> 48) & 0xff00) |
                                              ((b >> 8) & 0xff0000) | ((b >> 32) & 0xff000000));
    return fields ^ kLowOfPair ^ ((fields & kLowOfPair) << 1);
}

void pack_pq2_0(const int8_t* trits, uint16_t d, uint8_t* dst) {
    store_u16(dst, d);
    for (int k = 0; k < kQuantBlock / 16; ++k) {
        const uint32_t word = pq2_pack16(trits + 16 * k);
        std::memcpy(dst + 2 + 4 * k, &word, 4);
    }
}

// PTQ1_0: the base-3 number of each byte's five trits, computed for whole runs of bytes at once
// (mod 256, exact since it is at most 242; the constant adds the + 1 of every code), then turned
// into the bytes; 32 lanes so the compiler can vectorise, 26 of them used.
void pack_ptq1_0(const int8_t* trits, uint16_t d, uint8_t* dst) {
    const auto number = [](const int8_t* t, int stride) {
        return static_cast<uint8_t>(81 * t[0] + 27 * t[stride] + 9 * t[2 * stride] + 3 * t[3 * stride]);
    };
    uint8_t v[32] = {};
    for (int m = 0; m < 16; ++m) v[m] = static_cast<uint8_t>(121 + number(trits + m, 16) + trits[64 + m]);
    for (int m = 0; m < 8; ++m)
        v[16 + m] = static_cast<uint8_t>(121 + number(trits + 80 + m, 8) + trits[112 + m]);
    for (int h = 0; h < 2; ++h)
        v[24 + h] = static_cast<uint8_t>(120 + number(trits + 120 + h, 2));  // trit 4: code 0
    uint8_t bytes[32];
    for (int k = 0; k < 32; ++k) bytes[k] = ptq1_byte(v[k]);
    std::memcpy(dst, bytes, 26);
    store_u16(dst + 26, d);
}

// Whether every value of whole blocks is a trit; branch-free, so it costs a vector max.
bool all_trits(const int8_t* t, int64_t n) {
    uint8_t max_code = 0;
    for (int64_t b = 0; b < n; b += kQuantBlock)
        for (int i = 0; i < kQuantBlock; ++i)
            max_code = std::max(max_code, static_cast<uint8_t>(t[b + i] + 1));
    return max_code <= 2;
}

}  // namespace

const char* dtype_name(DType t) {
    switch (t) {
        case DType::F32:
            return "F32";
        case DType::F16:
            return "F16";
        case DType::Q8_0:
            return "Q8_0";
        case DType::BF16:
            return "BF16";
        case DType::PQ2_0:
            return "PQ2_0";
        case DType::PTQ1_0:
            return "PTQ1_0";
        case DType::PQ2_0S:
            return "PQ2_0S";
        case DType::PQ2_0T:
            return "PQ2_0T";
        case DType::I32:
            return "I32";
    }
    return "unknown";
}

int64_t dtype_block_elems(DType t) {
    switch (t) {
        case DType::Q8_0:
            return kQ8BlockElems;
        case DType::PQ2_0:
        case DType::PTQ1_0:
        case DType::PQ2_0S:
            return kQuantBlock;
        case DType::PQ2_0T:
            return kSplitRunElems;
        default:
            return 1;
    }
}

int64_t dtype_block_bytes(DType t) {
    switch (t) {
        case DType::F32:
        case DType::I32:
            return 4;
        case DType::F16:
        case DType::BF16:
            return 2;
        case DType::Q8_0:
            return kQ8BlockBytes;
        case DType::PQ2_0:
        case DType::PQ2_0S:
            return kPq2BlockBytes;
        case DType::PTQ1_0:
            return kPtq1BlockBytes;
        case DType::PQ2_0T:
            return kSplitRunBytes;
    }
    throw std::invalid_argument("unknown dtype " + std::to_string(static_cast<uint32_t>(t)));
}

size_t dtype_row_bytes(DType t, int64_t n) {
    check_blocks(t, n);
    if (t == DType::PQ2_0S)
        return static_cast<size_t>((n + kSplitRunElems - 1) / kSplitRunElems * kSplitScaleBytes + n / 4);
    return static_cast<size_t>(n / dtype_block_elems(t) * dtype_block_bytes(t));
}

float fp16_to_f32(uint16_t h) {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
    const uint32_t exp = (h >> 10) & 0x1f;
    const uint32_t mant = h & 0x3ff;
    if (exp == 0) {
        // Subnormal (or zero): mant * 2^-24 is exact in fp32.
        const float v = static_cast<float>(mant) * 0x1p-24f;
        return (sign != 0) ? -v : v;
    }
    if (exp == 31) return bits_float(sign | 0x7f800000u | (mant << 13));
    return bits_float(sign | ((exp + 112) << 23) | (mant << 13));
}

uint16_t f32_to_fp16(float f) {
    const uint32_t x = float_bits(f);
    const auto sign = static_cast<uint16_t>((x >> 16) & 0x8000);
    const uint32_t abs = x & 0x7fffffffu;
    if (abs >= 0x7f800000u) {
        if (abs == 0x7f800000u) return sign | 0x7c00;
        return static_cast<uint16_t>(sign | 0x7e00 | ((abs >> 13) & 0x3ff));  // quiet NaN, payload kept
    }
    const int exp = static_cast<int>(abs >> 23);  // biased fp32 exponent
    const uint32_t mant = abs & 0x7fffffu;
    const int half_exp = exp - 112;
    if (half_exp >= 31) return sign | 0x7c00;
    if (half_exp <= 0) {
        // Half subnormal: the value in units of 2^-24 is (mant | implicit) >> (126 - exp).
        if (exp == 0) return sign;  // fp32 subnormals are far below half's smallest
        const int shift = 126 - exp;
        if (shift >= 25) return sign;
        return static_cast<uint16_t>(sign | shift_round_even(mant | 0x800000u, shift));
    }
    // A carry out of the mantissa bumps the exponent, up to infinity: exactly right.
    const uint32_t rounded = shift_round_even((static_cast<uint32_t>(half_exp) << 23) | mant, 13);
    return static_cast<uint16_t>(sign | rounded);
}

float bf16_to_f32(uint16_t h) {
    return bits_float(static_cast<uint32_t>(h) << 16);
}

uint16_t f32_to_bf16(float f) {
    const uint32_t x = float_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40);  // quiet NaN
    return static_cast<uint16_t>(shift_round_even(x, 16));
}

void dequantize_row(DType t, const void* src, float* dst, int64_t n) {
    check_blocks(t, n);
    const auto* p = static_cast<const uint8_t*>(src);
    switch (t) {
        case DType::F32:
            std::memcpy(dst, p, static_cast<size_t>(n) * sizeof(float));
            return;
        case DType::F16:
            for (int64_t i = 0; i < n; ++i) dst[i] = fp16_to_f32(load_u16(p + 2 * i));
            return;
        case DType::BF16:
            for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_f32(load_u16(p + 2 * i));
            return;
        case DType::Q8_0:
            dequantize_q8_0(p, dst, n);
            return;
        case DType::PQ2_0:
            dequantize_pq2_0(p, dst, n);
            return;
        case DType::PTQ1_0:
            dequantize_ptq1_0(p, dst, n);
            return;
        case DType::PQ2_0S:
            dequantize_pq2_0s(p, dst, n);
            return;
        case DType::PQ2_0T:
            throw std::invalid_argument(
                "dequantize_row: PQ2_0T rows are spread over tiles (dequantize_tiled_row)");
        case DType::I32:
            break;
    }
    throw std::invalid_argument(std::string("dequantize_row: ") + dtype_name(t) + " is not a weight type");
}

void dequantize_tiled_row(const void* matrix, int64_t n, int64_t row, float* dst) {
    check_blocks(DType::PQ2_0T, n);
    const int r = static_cast<int>(row % kTiledRows);
    for (int64_t k = 0; k < n; k += kSplitRunElems) {
        const uint8_t* run = static_cast<const uint8_t*>(matrix) + tiled_run_at(n, row, k);
        for (int b = 0; b < kSplitRunBlocks; ++b)
            dst = dequantize_pq2_codes(run + tiled_codes_at(b, r),
                                       fp16_to_f32(load_u16(run + tiled_scale_at(b, r))), dst);
    }
}

void pack_ternary_row(DType t, const int8_t* trits, const float* scales, void* dst, int64_t n) {
    if (t != DType::PQ2_0 && t != DType::PTQ1_0)
        throw std::invalid_argument(std::string("pack_ternary_row: ") + dtype_name(t) +
                                    " is not a ternary type (PQ2_0 or PTQ1_0)");
    check_blocks(t, n);
    if (!all_trits(trits, n))
        for (int64_t i = 0; i < n; ++i)
            if (trits[i] < -1 || trits[i] > 1)
                throw std::invalid_argument("pack_ternary_row: value " + std::to_string(trits[i]) +
                                            " at element " + std::to_string(i) + " is not a trit");
    auto* out = static_cast<uint8_t*>(dst);
    for (int64_t b = 0; b < n / kQuantBlock; ++b) {
        const uint16_t d = f32_to_fp16(scales[b]);
        if (t == DType::PQ2_0)
            pack_pq2_0(trits + b * kQuantBlock, d, out + b * kPq2BlockBytes);
        else
            pack_ptq1_0(trits + b * kQuantBlock, d, out + b * kPtq1BlockBytes);
    }
}

namespace {

// PQ2_0 rows as a PQ2_0T matrix (formats.h): every block's scale and codes moved to its place.
std::vector<uint8_t> tile_pq2_0(const uint8_t* src, size_t src_stride, int64_t rows, int64_t n) {
    const int64_t runs = n / kSplitRunElems, tiles = (rows + kTiledRows - 1) / kTiledRows;
    std::vector<uint8_t> out(static_cast<size_t>(tiles * runs) * kTiledRunBytes);  // zeros: padding rows
    for (int64_t row = 0; row < rows; ++row) {
        const uint8_t* blk = src + static_cast<size_t>(row) * src_stride;
        const int r = static_cast<int>(row % kTiledRows);
        for (int64_t b = 0; b < n / kQuantBlock; ++b, blk += kPq2BlockBytes) {
            uint8_t* run = out.data() + tiled_run_at(n, row, b * kQuantBlock);
            const int i = static_cast<int>(b % kSplitRunBlocks);
            std::memcpy(run + tiled_scale_at(i, r), blk, 2);
            std::memcpy(run + tiled_codes_at(i, r), blk + 2, 32);
        }
    }
    return out;
}

}  // namespace

std::vector<uint8_t> convert_rows(DType from, DType to, const void* src, size_t src_stride, int64_t rows,
                                  int64_t n) {
    if (from == DType::PQ2_0 && to == DType::PQ2_0T) {
        check_blocks(to, n);
        return tile_pq2_0(static_cast<const uint8_t*>(src), src_stride, rows, n);
    }
    if (from == DType::PQ2_0T)
        throw std::invalid_argument(
            "convert_rows: PQ2_0T is made only from PQ2_0 (its rows are spread over tiles)");
    if (from != to && !(from == DType::PQ2_0 && to == DType::PQ2_0S))
        throw std::invalid_argument(std::string("convert_rows: ") + dtype_name(from) + " to " +
                                    dtype_name(to) + " is not a conversion Niwa makes");
    const size_t in_bytes = dtype_row_bytes(from, n), out_bytes = dtype_row_bytes(to, n);
    std::vector<uint8_t> out(out_bytes * static_cast<size_t>(rows));  // zeros: unused scale slots
    for (int64_t r = 0; r < rows; ++r) {
        const uint8_t* s = static_cast<const uint8_t*>(src) + static_cast<size_t>(r) * src_stride;
        uint8_t* d = out.data() + static_cast<size_t>(r) * out_bytes;
        if (from == to)
            std::memcpy(d, s, in_bytes);
        else
            split_pq2_0(s, d, n);
    }
    return out;
}

}  // namespace niwa::kernels
