// The matmul family's internal interface: one argument block and the launchers of each path,
// chosen in matmul.cu (decode: matmul_decode.cu, tensor-core prefill: matmul_prefill.cu).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "kernels/cuda/cuda_ops.h"

namespace niwa::kernels::cuda {

// GDN's conv on the register decode kernel's way out (Ops::matmul_conv1d_silu): outputs of the
// weight's rows below `channels` go through conv1d_silu (kConvTaps taps) into `out` instead of y,
// x row c being the one token of sequence c, whose conv state they continue and update.
struct ConvStore {
    const float* w = nullptr;       // [channels][kConvTaps]
    float* state = nullptr;         // [slots][kConvTaps - 1][channels]
    const SeqInfo* seqs = nullptr;  // sequence c's token is x row c
    float* out = nullptr;           // [n, >= channels], rows ld apart
    int64_t ld = 0;
    int64_t channels = 0;
};

// y[n, out] = x[n, in] · Wᵀ with W's rows `stride` bytes apart.
struct MatmulArgs {
    const uint8_t* w = nullptr;
    size_t stride = 0;
    int64_t out = 0;
    int64_t in = 0;
    DType type = DType::F32;
    const float* x = nullptr;
    int64_t ldx = 0;
    int64_t n = 0;
    float* y = nullptr;
    int64_t ldy = 0;
};

template <DType T>
using TypeTag = std::integral_constant<DType, T>;

// Calls f(TypeTag<T>{}) for t if it is one of Ts; throws std::invalid_argument, naming op and
// saying t is not `what`, otherwise.
template <DType... Ts, typename F>
void with_type_among(DType t, F&& f, const char* op, const char* what) {
    const bool found = ((t == Ts && (f(TypeTag<Ts>{}), true)) || ...);
    require(found, op, std::string(dtype_name(t)) + " is not " + what);
}

// Calls f(TypeTag<T>{}) for the weight type t, of the files' types and PQ2_0S (every kernel's);
// throws std::invalid_argument, naming op, for a type that is not one.
template <typename F>
void with_weight_type(DType t, F&& f, const char* op = "matmul") {
    with_type_among<DType::F32, DType::F16, DType::BF16, DType::Q8_0, DType::PQ2_0, DType::PTQ1_0,
                    DType::PQ2_0S>(t, f, op, "a weight type");
}

// The same and PQ2_0T (the kernels that also read PQ2_0T's tiled layout: dequantize, prefill).
template <typename F>
void with_any_weight_type(DType t, F&& f, const char* op = "matmul") {
    with_type_among<DType::F32, DType::F16, DType::BF16, DType::Q8_0, DType::PQ2_0, DType::PTQ1_0,
                    DType::PQ2_0S, DType::PQ2_0T>(t, f, op, "a weight type");
}

// The ternary weight types: the decode kernels' (PQ2_0T only in mixed precision).
__host__ __device__ constexpr bool is_ternary(DType t) {
    return t == DType::PQ2_0 || t == DType::PTQ1_0 || t == DType::PQ2_0S || t == DType::PQ2_0T;
}

// Calls f(TypeTag<T>{}) for the ternary weight type t (PQ2_0, PTQ1_0, PQ2_0S, PQ2_0T); throws
// std::invalid_argument, naming op, for any other type.
template <typename F>
void with_ternary_type(DType t, F&& f, const char* op = "matmul") {
    with_type_among<DType::PQ2_0, DType::PTQ1_0, DType::PQ2_0S, DType::PQ2_0T>(t, f, op,
                                                                               "a ternary weight type");
}

// Rows of x up to which the decode kernels run (one pass over the weight).
constexpr int64_t kDecodeMaxRows = 32;

// Calls f(pass) for x's rows in groups of at most `rows` (pass.x, pass.y and pass.n set to the
// group): the decode kernels take a bounded number of rows per launch.
template <typename F>
void for_each_row_group(const MatmulArgs& a, int64_t rows, F&& f) {
    for (int64_t r0 = 0; r0 < a.n; r0 += rows) {
        MatmulArgs pass = a;
        pass.x = a.x + r0 * a.ldx;
        pass.y = a.y + r0 * a.ldy;
        pass.n = a.n - r0 < rows ? a.n - r0 : rows;
        f(pass);
    }
}

// Ternary weights (PQ2_0, PTQ1_0, PQ2_0S, PQ2_0T), n <= kDecodeMaxRows, fp16 tensor cores, split
// over K, rows (PQ2_0T: a tile's run) staged through shared memory.
void launch_ternary_decode(CudaOps& ops, const MatmulArgs& a);
// Whether the staged kernel takes all of a's rows of x in one pass on ops' device (an RTX 5070's
// 99 KiB of shared memory a block holds 24 rows, not 32: two passes read every weight twice).
bool staged_decode_one_pass(const CudaOps& ops, const MatmulArgs& a);
// PQ2_0S or PQ2_0T weights (what the model loads PQ2_0 files as), n <= kDecodeMaxRows: the same
// arithmetic, codes and scales loaded straight into registers; with `ring`, through per-warp
// shared-memory rings where the rows are whole runs and the device holds them.
void launch_split_decode(CudaOps& ops, const MatmulArgs& a, bool ring);
// The register kernel for the input `in` describes (a.x unused), built as each block stages
// its slice of x (matmul_decode.cuh, stage_rotated), where split_decode_takes says it builds it:
// a rotation by blocks of 32..1024 channels dividing 1024 (or none), a gated norm over heads of
// kFusedNormWidth, a sigmoid gate over heads of a power of two, a residual norm with the parts
// of its squares; n <= kRotatedMaxRows (4).
constexpr int64_t kFusedNormWidth = 128;  // GDN's heads in the published models
bool split_decode_takes(const RotatedInput& in, const MatmulArgs& a);
void launch_split_decode(CudaOps& ops, const MatmulArgs& a, const RotatedInput& in);
// The register kernel for a sublayer output's input `in` (swiglu, gated norm, sigmoid gate), its
// slices' sums added to x (rows [0, a.n), a.out columns) instead of stored in y
// (Ops::rotated_matmul_add), where split_decode_takes_add says it runs: split_decode_takes, more
// than one slice. Returns the parts each x row's sum of squares is left in (the Squares workspace).
bool split_decode_takes_add(const RotatedInput& in, const MatmulArgs& a);
Tensor launch_split_decode_add(CudaOps& ops, const MatmulArgs& a, const RotatedInput& in, const Tensor& x);
// The register kernel with the conv on its way out, where split_decode_takes_conv says it runs:
// the kernel decode_kernel picks (or the one forced) is the register kernel, at most
// kRotatedMaxRows rows of x, rows of more than one slice (1024 inputs).
bool split_decode_takes_conv(const MatmulArgs& a, CudaOps::DecodeGemm kernel);
void launch_split_decode(CudaOps& ops, const MatmulArgs& a, const ConvStore& conv);
// The same, of a residual norm with the parts of its squares (split_decode_takes).
void launch_split_decode(CudaOps& ops, const MatmulArgs& a, const RotatedInput& in, const ConvStore& conv);
// PQ2_0T weights of whole runs, any n, on the sm_90a warpgroup mma (matmul_decode_wgmma.cu):
// where wgmma_decode_takes says it runs (CudaOps::has_wgmma_decode).
bool wgmma_decode_takes(const CudaOps& ops, const MatmulArgs& a);
void launch_wgmma_decode(CudaOps& ops, const MatmulArgs& a);
// Any weight type, fp16 tensor cores on dequantized tiles (Precision::Mixed, large n).
void launch_mma_prefill(CudaOps& ops, const MatmulArgs& a);
// Any weight type: dequantized to fp16 scratch, one cuBLAS GEMM per slab of rows that fits
// ops.gemm_scratch_limit() (Precision::Mixed, large n).
void launch_cublas_prefill(CudaOps& ops, const MatmulArgs& a);

}  // namespace niwa::kernels::cuda
