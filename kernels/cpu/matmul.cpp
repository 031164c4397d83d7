// matmul and embed. matmul walks the weight a block of 128 inputs at a time: a few rows' blocks
// are decoded onto the stack, then multiplied against every row of x, so each weight is decoded
// once per call, x's slice stays in L1, and a packed matrix is never expanded in memory.
#include <algorithm>
#include <array>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/cpu/cpu_ops.h"

namespace niwa::kernels::cpu {

namespace {

constexpr int kGroupRows = 4;  // weight rows decoded together; each x slice is reused this often

// The 2-bit codes of a PQ2_0 byte as weights in units of d: (q - 1), element j in bits 2j.
constexpr auto kPq2Codes = [] {
    std::array<std::array<float, 4>, 256> t{};
    for (int b = 0; b < 256; ++b)
        for (int j = 0; j < 4; ++j) t[size_t(b)][size_t(j)] = float(((b >> (2 * j)) & 3) - 1);
    return t;
}();

uint16_t load_u16(const uint8_t* p) {
    return static_cast<uint16_t>(p[0] | (p[1] << 8));
}

// One decoded block: the weights are scale * w[i]. Ternary blocks keep their codes in w and d in
// scale, so a block's dot is d * (sum of x where +1 minus sum where -1): exact, and one multiply.
struct Block {
    alignas(64) float w[kQuantBlock];
    float scale = 1.0f;
};

void decode_pq2_0(const uint8_t* src, Block& b) {
    b.scale = fp16_to_f32(load_u16(src));
    const uint8_t* qs = src + 2;
    for (int i = 0; i < kQuantBlock / 4; ++i)
        std::memcpy(b.w + 4 * i, kPq2Codes[qs[i]].data(), 4 * sizeof(float));
}

// The five trits of a PTQ1_0 byte in units of d: trit n is ((uint8_t)(b * 3^n) * 3) >> 8, minus 1.
constexpr auto kPtq1Trits = [] {
    std::array<std::array<float, 5>, 256> t{};
    for (int b = 0; b < 256; ++b)
        for (int n = 0, pow3 = 1; n < 5; ++n, pow3 *= 3)
            t[size_t(b)][size_t(n)] = float((((b * pow3) & 0xff) * 3 >> 8) - 1);
    return t;
}();

// Five trits of one PTQ1_0 byte into their elements `stride` apart (written out: -O2 does not
// unroll the loop, and these copies are the whole cost of decoding).
void put_ptq1_trits(uint8_t byte, float* w, int stride, int count) {
    const float* t = kPtq1Trits[byte].data();
    w[0] = t[0];
    w[stride] = t[1];
    w[2 * stride] = t[2];
    w[3 * stride] = t[3];
    if (count == 5) w[4 * stride] = t[4];
}

// A PTQ1_0 block's codes in element order (MODEL.md "GGUF"): trit n of qs[m] is element 16n + m,
// of qs[16 + m] element 80 + 8n + m, of qh[h] (n < 4) element 120 + 2n + h. Element order keeps
// the sums in the same order as PQ2_0's, so both files of one model give identical logits.
void decode_ptq1_0(const uint8_t* src, Block& b) {
    b.scale = fp16_to_f32(load_u16(src + 26));
    for (int m = 0; m < 16; ++m) put_ptq1_trits(src[m], b.w + m, 16, 5);
    for (int m = 0; m < 8; ++m) put_ptq1_trits(src[16 + m], b.w + 80 + m, 8, 5);
    for (int h = 0; h < 2; ++h) put_ptq1_trits(src[24 + h], b.w + 120 + h, 2, 4);
}

// Decodes `n` (<= 128) weights starting at `src`; other types go through dequantize_row.
void decode_block(DType type, const uint8_t* src, int64_t n, Block& b) {
    if (type == DType::PQ2_0) return decode_pq2_0(src, b);
    if (type == DType::PTQ1_0) return decode_ptq1_0(src, b);
    b.scale = 1.0f;
    dequantize_row(type, src, b.w, n);
}

const float* dequantized_row(const Weight& w, int64_t row, std::vector<float>& buf) {
    buf.resize(static_cast<size_t>(w.in));
    const auto* src = static_cast<const char*>(w.data) + static_cast<size_t>(row) * w.row_stride;
    dequantize_row(w.type, src, buf.data(), w.in);
    return buf.data();
}

// lanes[l] += x[l] * w[l] over eight lanes: independent chains the compiler keeps in registers.
inline void madd8(float* lanes, const float* x, const float* w) {
    for (int l = 0; l < 8; ++l) lanes[l] += x[l] * w[l];
}

// The partial sums of one x row against a group: eight lanes per weight row, summed once at the
// end, so no block pays for a horizontal reduction.
struct GroupSums {
    float lanes[kGroupRows][8];
};

// sums += the dots of one x slice with each of the group's decoded blocks, times the blocks'
// scales. x is loaded once for all four rows (written out, as -O2 does not unroll that loop).
static_assert(kGroupRows == 4);
void add_block_dots(const float* xs, const Block* blocks, int64_t n, GroupSums& sums) {
    GroupSums block = {};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        madd8(block.lanes[0], xs + i, blocks[0].w + i);
        madd8(block.lanes[1], xs + i, blocks[1].w + i);
        madd8(block.lanes[2], xs + i, blocks[2].w + i);
        madd8(block.lanes[3], xs + i, blocks[3].w + i);
    }
    for (int g = 0; g < kGroupRows; ++g) {
        for (int64_t j = i; j < n; ++j) block.lanes[g][0] += xs[j] * blocks[g].w[j];
        for (int l = 0; l < 8; ++l) sums.lanes[g][l] += blocks[g].scale * block.lanes[g][l];
    }
}

// y[:, o0:o1] for o1 - o0 <= kGroupRows from x (rows `ldx` apart), with one GroupSums per x row.
void matmul_group(const Weight& w, const float* x, int64_t ldx, const Tensor& y, int64_t o0, int64_t o1,
                  std::vector<GroupSums>& sums) {
    const int64_t rows = y.rows;
    sums.assign(static_cast<size_t>(rows), GroupSums{});
    // Every type's block size divides 128, so a 128-input slice is whole blocks.
    const size_t slice_bytes = dtype_row_bytes(w.type, kQuantBlock);
    const auto* base = static_cast<const uint8_t*>(w.data) + static_cast<size_t>(o0) * w.row_stride;
    Block blocks[kGroupRows] = {};  // rows past the group stay zero
    for (int64_t i0 = 0, s = 0; i0 < w.in; i0 += kQuantBlock, ++s) {
        const int64_t n = std::min<int64_t>(kQuantBlock, w.in - i0);
        for (int64_t g = 0; g < o1 - o0; ++g)
            decode_block(w.type,
                         base + static_cast<size_t>(g) * w.row_stride + static_cast<size_t>(s) * slice_bytes,
                         n, blocks[g]);
        for (int64_t r = 0; r < rows; ++r)
            add_block_dots(x + r * ldx + i0, blocks, n, sums[static_cast<size_t>(r)]);
    }
    for (int64_t r = 0; r < rows; ++r) {
        for (int64_t g = 0; g < o1 - o0; ++g) {
            float sum = 0.0f;
            for (float l : sums[static_cast<size_t>(r)].lanes[g]) sum += l;
            row_f32(y, r)[o0 + g] = sum;
        }
    }
}

}  // namespace

void CpuOps::matmul(const Weight& w, const Tensor& x, const Tensor& y) {
    check_matmul("cpu", w, x, y);
    require(w.type != DType::PQ2_0S, "matmul",
            "PQ2_0S is a GPU layout; the CPU multiplies by the file's PQ2_0");
    const int64_t n_groups = (w.out + kGroupRows - 1) / kGroupRows;
    const int64_t grain = std::max<int64_t>(1, 4096 / std::max<int64_t>(1, kGroupRows * w.in * x.rows));
    pool_.parallel_for(
        n_groups,
        [&](int64_t g0, int64_t g1) {
            thread_local std::vector<GroupSums> sums;
            for (int64_t g = g0; g < g1; ++g)
                matmul_group(w, row_f32(x, 0), x.ld, y, g * kGroupRows, std::min(w.out, (g + 1) * kGroupRows),
                             sums);
        },
        grain);
}

void CpuOps::embed(const Weight& table, const int32_t* ids, int64_t row0, const Tensor& y) {
    check_weight("cpu", table, "embed");
    require_f32(y, "embed", "y");
    require(y.cols == table.in, "embed",
            "y has " + std::to_string(y.cols) + " columns, the table " + std::to_string(table.in));
    pool_.parallel_for(y.rows, [&](int64_t r0, int64_t r1) {
        thread_local std::vector<float> buf;
        for (int64_t r = r0; r < r1; ++r) {
            float* yr = row_f32(y, r);
            const int64_t row = static_cast<int64_t>(ids[r]) - row0;
            if (row < 0 || row >= table.out) {
                std::fill(yr, yr + y.cols, 0.0f);
                continue;
            }
            const float* src = dequantized_row(table, row, buf);
            std::copy(src, src + y.cols, yr);
        }
    });
}

}  // namespace niwa::kernels::cpu
