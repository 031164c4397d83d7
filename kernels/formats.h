// Storage formats shared by every backend and by the model writer: half-precision
// conversions and the packed weight blocks (MODEL.md "GGUF"). Host code, plain and exact.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace niwa::kernels {

// Element types of weights and activations. The values of the GGUF types are GGUF's own.
enum class DType : uint32_t {
    F32 = 0,
    F16 = 1,
    Q8_0 = 8,
    BF16 = 30,
    PQ2_0 = 142,
    PTQ1_0 = 143,
    I32 = 1000,  // activations only (token ids, positions)
    // PQ2_0's blocks laid out again by rows, for a backend's matmuls (never in a file): each run
    // of up to 8 blocks (1024 elements) of a row is 16 bytes of their fp16 scales (unused slots
    // zero) followed by their 32-byte code arrays (PQ2_0's qs) in order. A run of a 16-byte
    // aligned row is 16-byte aligned, and so are its codes. Rows are whole: no column slices.
    PQ2_0S = 1001,
    // PQ2_0's blocks laid out again in tiles of 16 rows x one run (1024 elements), for the CUDA
    // decode matmuls (never in a file), so that a warp's loads of 8 bytes a lane read 256
    // contiguous bytes (docs/BENCHMARKS.md, tenth pass). A matrix of `out` rows of n elements (n a
    // multiple of 1024) is ceil(out / 16) tiles of n / 1024 runs of kTiledRunBytes each, tile by
    // tile; run s of tile t starts at (t n / 1024 + s) kTiledRunBytes. In a run, block b's 32 code
    // bytes (PQ2_0's qs) of the tile's row r are at 32 (16 b + r), then the fp16 scales: block b's
    // of row r at 4096 + 128 (b / 4) + 8 r + 2 (b % 4). Rows past `out` are zero. Only whole
    // matrices convert (convert_rows); a row's bytes are dtype_row_bytes apart only as a size.
    PQ2_0T = 1002,
};

constexpr int kQuantBlock = 128;     // elements per PQ2_0 / PTQ1_0 block
constexpr int kPq2BlockBytes = 34;   // fp16 d; u8 qs[32]
constexpr int kPtq1BlockBytes = 28;  // u8 qs[24]; u8 qh[2]; fp16 d
constexpr int kQ8BlockElems = 32;    // Q8_0: fp16 d; i8 qs[32]
constexpr int kQ8BlockBytes = 34;
constexpr int kSplitRunBlocks = 8;  // PQ2_0S: blocks per run
constexpr int kSplitRunElems = kSplitRunBlocks * kQuantBlock;
constexpr int kSplitScaleBytes = 16;                                     // a run's scales
constexpr int kSplitRunBytes = kSplitScaleBytes + kSplitRunBlocks * 32;  // a whole run: 272
constexpr int kTiledRows = 16;                                           // PQ2_0T: rows per tile
constexpr int kTiledRunBytes = kTiledRows * kSplitRunBytes;              // a tile's run: 4352
constexpr int kTiledScalesAt = kSplitRunBlocks * kTiledRows * 32;        // its scales: 4096 on

#ifdef __CUDACC__
#define NIWA_HOST_DEVICE __host__ __device__
#else
#define NIWA_HOST_DEVICE
#endif
// PQ2_0T: where the run holding input k of row `row` starts, in a matrix of `in` inputs a row;
// and where, in its run, block b (0..7) of tile row r (0..15) keeps its 32 code bytes and its
// fp16 scale. The only statement of the layout: the converter, the host reader and the CUDA
// kernels all go through these three.
NIWA_HOST_DEVICE constexpr size_t tiled_run_at(int64_t in, int64_t row, int64_t k) {
    return (static_cast<size_t>(row / kTiledRows) * static_cast<size_t>(in / kSplitRunElems) +
            static_cast<size_t>(k / kSplitRunElems)) *
           kTiledRunBytes;
}
NIWA_HOST_DEVICE constexpr int tiled_codes_at(int b, int r) {
    return 32 * (kTiledRows * b + r);
}
NIWA_HOST_DEVICE constexpr int tiled_scale_at(int b, int r) {
    return kTiledScalesAt + 8 * kTiledRows * (b / 4) + 8 * r + 2 * (b % 4);
}

const char* dtype_name(DType t);
int64_t dtype_block_elems(DType t);  // 1 for plain types
int64_t dtype_block_bytes(DType t);  // element size for plain types (PQ2_0S: 34, its runs' scales aside;
                                     // PQ2_0T: a run of 1024 elements, 272)
// Bytes of `n` elements of type t; n must be a multiple of the block size.
size_t dtype_row_bytes(DType t, int64_t n);

float fp16_to_f32(uint16_t h);
uint16_t f32_to_fp16(float f);  // round to nearest even
float bf16_to_f32(uint16_t h);
uint16_t f32_to_bf16(float f);  // round to nearest even

// Dequantizes `n` elements (a multiple of the type's block size) of a row of type t (not PQ2_0T,
// whose rows are spread over tiles: dequantize_tiled_row).
void dequantize_row(DType t, const void* src, float* dst, int64_t n);
// Row `row` (n elements) of a PQ2_0T matrix.
void dequantize_tiled_row(const void* matrix, int64_t n, int64_t row, float* dst);

// Packs `n` ternary values t[i] in {-1, 0, +1} with one scale per 128 elements
// (scales[n / 128], rounded to fp16) into PQ2_0 or PTQ1_0. Both encodings of the same
// trits and scales dequantize to identical values.
void pack_ternary_row(DType t, const int8_t* trits, const float* scales, void* dst, int64_t n);

// `rows` rows of n elements of type `from`, `src_stride` bytes apart, in type `to`: rows of
// dtype_row_bytes(to, n) bytes back to back (PQ2_0T: whole tiles, rows padded with zeros to a
// multiple of 16). Converts a type to itself (a copy) and PQ2_0 to PQ2_0S or PQ2_0T; anything
// else throws std::invalid_argument.
std::vector<uint8_t> convert_rows(DType from, DType to, const void* src, size_t src_stride, int64_t rows,
                                  int64_t n);

}  // namespace niwa::kernels
