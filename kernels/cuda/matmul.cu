// matmul: argument checks, the choice of kernel, and the fp32 kernels (Precision::Fp32, and
// non-ternary weights at decode sizes). Ternary decode runs on tensor cores: PQ2_0S matrices
// in matmul_decode_split.cu or matmul_decode.cu as decode_kernel chooses, other ternary
// layouts in matmul_decode.cu.
// Larger batches in Mixed precision run through cuBLAS on dequantized weights (matmul_cublas.cu),
// or the tensor-core tiles of matmul_prefill.cu when asked.
//
// fp32 decode (n <= 32): one warp per output row reads the row once for every row of x; a
// lane takes four consecutive inputs of each 128-wide chunk (one PQ2_0 byte), and ternary
// blocks sum x where the code is +1 minus where it is -1 before one multiply by the scale.
// Few output rows (< 1024): blocks of 16 rows x 256 inputs, slices summed in order.
// fp32 prefill: 64 x 64 output tiles, both operands staged in shared memory as fp32.
#include <algorithm>
#include <string>
#include <type_traits>

#include "kernels/cuda/dequant.cuh"
#include "kernels/cuda/matmul.cuh"
#include "kernels/cuda/matmul_decode.cuh"
#include "kernels/cuda/pdl.cuh"

namespace niwa::kernels::cuda {

namespace {

constexpr int kRowwiseWarps = 8;

// x rows [0, nr) of this pass (x and y already offset to the pass's first row).
template <DType T, int NR>
__global__ void __launch_bounds__(kRowwiseWarps * 32) matmul_rowwise_kernel(MatmulArgs a, int nr) {
    const int lane = threadIdx.x & 31;
    const int64_t o = static_cast<int64_t>(blockIdx.x) * kRowwiseWarps + (threadIdx.x >> 5);
    if (o >= a.out) return;
    const uint8_t* row = a.w + static_cast<size_t>(o) * a.stride;
    float acc[NR];
#pragma unroll
    for (int r = 0; r < NR; ++r) acc[r] = 0.0f;

#pragma unroll 4  // several chunks' loads in flight: one warp streams a whole row
    for (int64_t k0 = 0; k0 < a.in; k0 += 128) {
        const int64_t k = k0 + 4 * lane;
        if constexpr (is_ternary(T)) {
            const int64_t b = k0 / kQuantBlock;
            float code[4], d;
            if constexpr (T == DType::PTQ1_0) {
                const uint8_t* blk = row + b * kPtq1BlockBytes;
#pragma unroll
                for (int j = 0; j < 4; ++j)
                    code[j] = static_cast<float>(ptq1_element_code(blk, 4 * lane + j) - 1);
                d = TernaryFormat<T>::scale(blk);
            } else {
                const uint32_t byte = Pq2Layout<T>::codes(row, b)[lane];
#pragma unroll
                for (int j = 0; j < 4; ++j)
                    code[j] = static_cast<float>(static_cast<int>((byte >> (2 * j)) & 3) - 1);
                d = half_bits_to_float(load_u16(Pq2Layout<T>::scale(row, b)));
            }
#pragma unroll
            for (int r = 0; r < NR; ++r) {
                if (r >= nr) break;
                const float* xr = a.x + r * a.ldx + k;
                const float s = code[0] * xr[0] + code[1] * xr[1] + code[2] * xr[2] + code[3] * xr[3];
                acc[r] += d * s;
            }
        } else {
            float wv[4];
            weights_at<T>(row, k, a.in, wv);
#pragma unroll
            for (int r = 0; r < NR; ++r) {
                if (r >= nr) break;
                const float* xr = a.x + r * a.ldx;
#pragma unroll
                for (int j = 0; j < 4; ++j)
                    if (k + j < a.in) acc[r] += wv[j] * xr[k + j];
            }
        }
    }
#pragma unroll
    for (int r = 0; r < NR; ++r) {
        if (r >= nr) break;
        float v = acc[r];
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
        if (lane == 0) a.y[r * a.ldy + o] = v;
    }
}

// Few output rows (GDN's alpha and beta: one per value head): a block takes 16 rows, two a
// warp, 256 inputs and kRowsAtOnce rows of x (a 96 x 5120 matrix is 120 blocks a quad of x rows);
// a lane keeps its 8 weights of each row in registers, so x's slice is read once a block and the
// weights once a quad. Each quad of x rows is its own problem (its rows of x and y, its partials
// and group counters): one trip for x a block, where one block taking every row took one a quad
// in turn. The slices' partial sums meet in slice order (sum_slices), the result independent of
// timing and of the split.
constexpr int kSmallOutWarps = 8;
constexpr int kSmallOutK = 256;          // inputs a block: two runs of 4 a lane
constexpr int64_t kSmallOutRows = 1024;  // below this many rows a warp per row leaves SMs idle
constexpr int kRowsAtOnce = 4;           // rows of x a block, all their loads before any store

// Vec: x rows are 16-byte aligned and `in` a multiple of 4, so x is read as float4.
template <DType T, bool Vec>
__global__ void __launch_bounds__(kSmallOutWarps * 32) matmul_smallout_kernel(DecodeParams whole) {
    __shared__ unsigned flag;
    // This block's quad of x rows as a problem of its own.
    DecodeParams p = whole;
    const int quad = blockIdx.z;
    p.a.x += quad * kRowsAtOnce * p.a.ldx;
    p.a.y += quad * kRowsAtOnce * p.a.ldy;
    p.a.n = min(static_cast<int64_t>(kRowsAtOnce), p.a.n - quad * kRowsAtOnce);
    if (p.partial) p.partial += static_cast<int64_t>(quad) * p.slices * kRowsAtOnce * p.a.out;
    if (p.counters) p.counters += 2 * quad * p.groups;
    const MatmulArgs& a = p.a;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int group = blockIdx.x, slice = blockIdx.y;
    const int64_t o0 = static_cast<int64_t>(group) * kTileRows + 2 * warp;
    const int64_t k0 = static_cast<int64_t>(slice) * kSmallOutK + 4 * lane;
    pdl_release();  // the matmul after this may start streaming its weights
    float w[2][8];
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            float v[4] = {};
            if (o0 + i < a.out && k0 + 128 * h < a.in)
                weights_at<T>(a.w + static_cast<size_t>(o0 + i) * a.stride, k0 + 128 * h, a.in, v);
#pragma unroll
            for (int j = 0; j < 4; ++j) w[i][4 * h + j] = v[j];
        }
    pdl_wait();  // the weights are fetched; x is an earlier kernel's output
    // All the quad's loads before any store (stores could alias x as far as the compiler knows).
    float xv[kRowsAtOnce][8];
#pragma unroll
    for (int q = 0; q < kRowsAtOnce; ++q) {
        const float* xr = a.x + min(q, static_cast<int>(a.n) - 1) * a.ldx;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int64_t k = k0 + 128 * h;
            if constexpr (Vec) {
                const float4 v =
                    k < a.in ? *reinterpret_cast<const float4*>(xr + k) : make_float4(0, 0, 0, 0);
                xv[q][4 * h] = v.x;
                xv[q][4 * h + 1] = v.y;
                xv[q][4 * h + 2] = v.z;
                xv[q][4 * h + 3] = v.w;
            } else {
#pragma unroll
                for (int j = 0; j < 4; ++j) xv[q][4 * h + j] = k + j < a.in ? xr[k + j] : 0.0f;
            }
        }
    }
    float s[kRowsAtOnce][2] = {};
#pragma unroll
    for (int q = 0; q < kRowsAtOnce; ++q)
#pragma unroll
        for (int i = 0; i < 2; ++i)
#pragma unroll
            for (int j = 0; j < 8; ++j) s[q][i] = fmaf(w[i][j], xv[q][j], s[q][i]);
#pragma unroll
    for (int off = 16; off > 0; off >>= 1)
#pragma unroll
        for (int q = 0; q < kRowsAtOnce; ++q)
#pragma unroll
            for (int i = 0; i < 2; ++i) s[q][i] += __shfl_xor_sync(0xffffffffu, s[q][i], off);
#pragma unroll
    for (int r = 0; r < kRowsAtOnce; ++r) {
        if (lane >= 2 || r >= a.n || o0 + lane >= a.out) continue;
        const float v = lane == 0 ? s[r][0] : s[r][1];
        if (p.slices == 1)
            a.y[r * a.ldy + o0 + lane] = v;
        else
            p.partial[(static_cast<int64_t>(slice) * a.n + r) * a.out + o0 + lane] = v;
    }
    sum_slices(p, group, group, group + 1, &flag);
}

template <DType T>
void launch_smallout(CudaOps& ops, const MatmulArgs& a) {
    DecodeParams p;
    p.a = a;
    p.groups = static_cast<int>((a.out + kTileRows - 1) / kTileRows);
    p.slices = static_cast<int>((a.in + kSmallOutK - 1) / kSmallOutK);
    p.tiles = p.groups;
    // Partials and counters for every quad of x rows (each a problem of kRowsAtOnce rows).
    const int quads = static_cast<int>((a.n + kRowsAtOnce - 1) / kRowsAtOnce);
    DecodeParams all = p;
    all.a.n = static_cast<int64_t>(quads) * kRowsAtOnce;
    all.groups = p.groups * quads;
    plan_slice_sums(ops, all);
    p.partial = all.partial;
    p.counters = all.counters;
    const dim3 grid(static_cast<unsigned>(p.groups), static_cast<unsigned>(p.slices),
                    static_cast<unsigned>(quads));
    const bool vec = a.in % 4 == 0 && a.ldx % 4 == 0 && reinterpret_cast<uintptr_t>(a.x) % 16 == 0;
    const dim3 block(kSmallOutWarps * 32);
    NIWA_CUDA_CHECK(vec ? launch_overlapping(ops.overlap_launches(), matmul_smallout_kernel<T, true>, grid,
                                             block, 0, ops.stream(), p)
                        : launch_overlapping(ops.overlap_launches(), matmul_smallout_kernel<T, false>, grid,
                                             block, 0, ops.stream(), p));
}

constexpr int kTile = 64;   // fp32 prefill: output tile kTile (weight rows) x kTile (x rows)
constexpr int kTileK = 32;  // inputs per stage

template <DType T>
__global__ void __launch_bounds__(256) matmul_fp32_tiled_kernel(MatmulArgs a) {
    __shared__ float ws[kTileK][kTile + 4];
    __shared__ float xs[kTileK][kTile + 4];
    const int tid = threadIdx.x;
    const int tx = tid % 16, ty = tid / 16;
    const int64_t o0 = static_cast<int64_t>(blockIdx.x) * kTile;
    const int64_t n0 = static_cast<int64_t>(blockIdx.y) * kTile;
    const int lr = tid / 4, lk = (tid % 4) * 8;  // loader: row lr, inputs lk .. lk + 8
    float acc[4][4] = {};
    for (int64_t k0 = 0; k0 < a.in; k0 += kTileK) {
        const int64_t o = o0 + lr, n = n0 + lr;
        const uint8_t* wrow = a.w + static_cast<size_t>(o) * a.stride;
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            const int64_t k = k0 + lk + j;
            ws[lk + j][lr] = (o < a.out && k < a.in) ? weight_at<T>(wrow, k) : 0.0f;
            xs[lk + j][lr] = (n < a.n && k < a.in) ? a.x[n * a.ldx + k] : 0.0f;
        }
        __syncthreads();
#pragma unroll 8
        for (int kk = 0; kk < kTileK; ++kk) {
            float wv[4], xv[4];
#pragma unroll
            for (int i = 0; i < 4; ++i) wv[i] = ws[kk][ty * 4 + i];
#pragma unroll
            for (int j = 0; j < 4; ++j) xv[j] = xs[kk][tx * 4 + j];
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 4; ++j) acc[i][j] += wv[i] * xv[j];
        }
        __syncthreads();
    }
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        const int64_t n = n0 + tx * 4 + j;
        if (n >= a.n) continue;
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const int64_t o = o0 + ty * 4 + i;
            if (o < a.out) a.y[n * a.ldy + o] = acc[i][j];
        }
    }
}

template <DType T>
void launch_rowwise(cudaStream_t stream, const MatmulArgs& a) {
    const dim3 grid(grid_for(a.out, kRowwiseWarps));
    for_each_row_group(a, kDecodeMaxRows, [&](const MatmulArgs& pass) {
        const int nr = static_cast<int>(pass.n);
        if (nr <= 8)
            matmul_rowwise_kernel<T, 8><<<grid, kRowwiseWarps * 32, 0, stream>>>(pass, nr);
        else
            matmul_rowwise_kernel<T, 32><<<grid, kRowwiseWarps * 32, 0, stream>>>(pass, nr);
        NIWA_CUDA_LAUNCHED("matmul_rowwise_kernel");
    });
}

template <DType T>
void launch_fp32_tiled(cudaStream_t stream, const MatmulArgs& a) {
    const dim3 grid(grid_for(a.out, kTile), grid_for(a.n, kTile));
    matmul_fp32_tiled_kernel<T><<<grid, 256, 0, stream>>>(a);
    NIWA_CUDA_LAUNCHED("matmul_fp32_tiled_kernel");
}

// What the kernels add to check_matmul: every field of every format is read as whole
// 2-byte (4-byte for F32) words.
void check_alignment(const Weight& w) {
    // Every field of every format is 2-byte aligned when rows and the data are; PQ2_0S's and
    // PQ2_0T's runs are loaded as 16-byte vectors.
    const size_t align = w.type == DType::PQ2_0S || w.type == DType::PQ2_0T ? 16
                         : w.type == DType::F32                             ? 4
                                                                            : 2;
    require(reinterpret_cast<uintptr_t>(w.data) % align == 0 && (w.row_stride % align == 0 || w.out <= 1),
            "matmul",
            std::string(dtype_name(w.type)) + " weight data or row_stride is not " + std::to_string(align) +
                "-byte aligned");
}

// The decode kernel for a PQ2_0S or PQ2_0T matrix at a.n <= 32 rows of x. Chosen by whole decode
// steps on the H200 (`bench`, 27B layout; docs/BENCHMARKS.md, ninth and tenth passes), not by each
// kernel alone:
// alone (`bench --kernels`) the register kernel is the fastest on the FFN's gate+up at every row
// count, yet inside a step it made batch 24 7 % slower than the staged kernel there.
// - one or two rows, and on PQ2_0T up to four: the register kernel (two rows: 287.6 tok/s, the
//   ring 281.9, the staged kernel 272.1; PQ2_0T, four rows: 578.7, the choice before 556.2, the
//   ring 547.2 — tenth pass);
// - the output head (>= 128 MiB) and rows of 16K inputs or more (the FFN's down): the ring;
// - 20 MiB or more (GDN's qkv+z, the FFN's gate+up) up to 16 rows: the ring;
// - on an sm_90 GPU, 9-32 rows and 4 MiB or more: the wgmma kernel (at 24 rows, alone: the
//   FFN's gate+up 43.0 µs against 63.1, the head 245 against 275; batch-24 steps +15 %; at 8 rows
//   and below it is the slower, and so is the k+v matrix: sixteenth pass; forced at 9-16 rows,
//   batch 10 +11 %, 12 +4.5 %, 16 +3.3 %: seventeenth pass; the threshold swept on an H100 in the
//   forty-fifth pass, NIWA_WGMMA_MIN_MB: the output projections (8.4 MB) on the staged kernel
//   instead cost batch 24 2.7 % (12 and 16 rows +0.2 %, within the rounds' spread), with q+gate
//   3.8 %, with qkv+z and the down 11.3 %);
// - the rest (smaller matrices, and the large ones at 17-32 rows without wgmma): the staged kernel,
//   except where it would need two passes (25-32 rows on a 99 KiB device, sm_120): the register
//   kernel, which takes 32 rows in one. Reasoned, not measured (no sm_120 GPU here): two passes
//   read every weight twice, and decode is bound by reading them (thirty-fourth pass).
// Against the staged kernel at 3-32 rows: batch 4 +5.3 %, 8 +2.9 %, 16 +1.6 %, 24 and 32 the
// same. The ring falls back to the register kernel where the device cannot hold it
// (sm_120).
CudaOps::DecodeGemm decode_kernel(const CudaOps& ops, const MatmulArgs& a) {
    using G = CudaOps::DecodeGemm;
    const size_t bytes = static_cast<size_t>(a.out) * a.stride;
    if (a.n <= (a.type == DType::PQ2_0T ? 4 : 2)) return G::Registers;
    if (a.n > 8 && bytes >= ops.wgmma_min_bytes() && wgmma_decode_takes(ops, a)) return G::Wgmma;
    if (bytes >= (size_t(128) << 20) || a.in >= 16384) return G::Ring;
    if (bytes >= (size_t(20) << 20) && a.n <= 16) return G::Ring;
    return staged_decode_one_pass(ops, a) ? G::Staged : G::Registers;
}

MatmulArgs matmul_args(const Weight& w, const Tensor& x, const Tensor& y) {
    MatmulArgs a;
    a.w = static_cast<const uint8_t*>(w.data);
    a.stride = w.row_stride;
    a.out = w.out;
    a.in = w.in;
    a.type = w.type;
    a.x = x.as<const float>();
    a.ldx = x.ld;
    a.n = x.rows;
    a.y = y.as<float>();
    a.ldy = y.ld;
    return a;
}

// The decode kernel a's matmul runs on: the one forced (the wgmma kernel only where it takes a),
// else decode_kernel's pick.
CudaOps::DecodeGemm chosen_decode_kernel(const CudaOps& ops, const MatmulArgs& a) {
    using G = CudaOps::DecodeGemm;
    const G forced = ops.decode_gemm();
    if (forced == G::Auto || (forced == G::Wgmma && !wgmma_decode_takes(ops, a)))
        return decode_kernel(ops, a);
    return forced;
}

// A decode matmul (PQ2_0S or PQ2_0T, at most kDecodeMaxRows rows, Precision::Mixed) on its kernel.
void launch_decode(CudaOps& ops, const MatmulArgs& a) {
    using G = CudaOps::DecodeGemm;
    const G k = chosen_decode_kernel(ops, a);
    if (k == G::Wgmma) return launch_wgmma_decode(ops, a);
    if (k == G::Staged) return launch_ternary_decode(ops, a);
    launch_split_decode(ops, a, k == G::Ring);
}

// Whether a's matmul runs on the register decode kernel with its input built (or its outputs
// stored) inside it: inputs fused, mixed precision, and the register kernel the one picked.
bool fused_in_register_kernel(const CudaOps& ops, const MatmulArgs& a) {
    return ops.fuse_inputs() && ops.precision() == Precision::Mixed &&
           chosen_decode_kernel(ops, a) == CudaOps::DecodeGemm::Registers;
}

void check_conv_out(const Tensor& conv_out, const Tensor& y) {
    const char* op = "matmul_conv1d_silu";
    require_f32(conv_out, op, "conv_out");
    require(conv_out.rows == y.rows && conv_out.cols <= y.cols, op,
            "conv_out [" + std::to_string(conv_out.rows) + ", " + std::to_string(conv_out.cols) +
                "] must have y's rows and at most its columns");
}

// Whether the register kernel runs a's matmul with the conv on its way out: conv width kConvTaps,
// and a decode step of one token a sequence, sequence s at row s.
bool conv_in_decode_kernel(const CudaOps& ops, const MatmulArgs& a, int kernel, const StepInfo& step) {
    bool fused = fused_in_register_kernel(ops, a) && kernel == kConvTaps &&
                 split_decode_takes_conv(a, CudaOps::DecodeGemm::Registers) && step.n_seqs == a.n &&
                 step.host_seqs != nullptr;
    for (int s = 0; fused && s < step.n_seqs; ++s)
        fused = step.host_seqs[s].q_start == s && step.host_seqs[s].n_q == 1;
    return fused;
}

}  // namespace

// A decode step (a token a sequence, sequence s at row s) where the register kernel runs
// (split_decode_takes_conv: 1-4 rows, more than one slice): it runs the conv as the slices' sum
// stores the outputs (ConvStore, matmul_decode.cuh), the same sums in the same order as
// conv1d_silu's kernel, so the same bits, and the conv's launch is gone. Else (prefill, more
// rows, fp32, other weights, rows of 1024 inputs or fewer) the matmul, then conv1d_silu: at 8 and
// 24 rows, the conv in the other kernels' tails measured slower than its own kernel
// (docs/BENCHMARKS.md, thirteenth pass).
void CudaOps::matmul_conv1d_silu(const Weight& w, const Tensor& x, const Tensor& y, const float* conv_w,
                                 int kernel, const GdnState& st, const StepInfo& step,
                                 const Tensor& conv_out) {
    const char* op = "matmul_conv1d_silu";
    check_matmul("cuda", w, x, y);
    check_conv_out(conv_out, y);
    const MatmulArgs a = matmul_args(w, x, y);
    if (!conv_in_decode_kernel(*this, a, kernel, step))
        return Ops::matmul_conv1d_silu(w, x, y, conv_w, kernel, st, step, conv_out);
    check_conv_step(op, x.rows, st, step);
    check_alignment(w);
    launch_split_decode(
        *this, a, ConvStore{conv_w, st.conv, step.seqs, conv_out.as<float>(), conv_out.ld, conv_out.cols});
}

// Where the register kernel takes the input (PQ2_0S or PQ2_0T, at most kRotatedMaxRows rows, an
// input stage_rotated builds) and is the kernel decode_kernel picks (one or two rows; PQ2_0T up
// to four) or the one forced, it builds the input as it stages x. Else the input is staged first
// (Ops::rotated_matmul): at more rows, one kernel that builds it once costs less than every
// block building its slice (docs/BENCHMARKS.md, twelfth pass).
void CudaOps::rotated_matmul(const Weight& w, const RotatedInput& in, const Tensor& staged, const Tensor& y) {
    check_rotated_input("cuda", in, staged);
    check_matmul("cuda", w, staged, y);
    check_alignment(w);
    const MatmulArgs a = matmul_args(w, staged, y);
    const bool fused =
        a.n > 0 && a.out > 0 && a.in > 0 && split_decode_takes(in, a) && fused_in_register_kernel(*this, a);
    if (!fused) return Ops::rotated_matmul(w, in, staged, y);
    launch_split_decode(*this, a, in);
}

// Where the register kernel takes the input (split_decode_takes_add) and is the kernel picked, it
// adds the slices' sums to x as it sums them and leaves the squares of the new rows in parts,
// for the residual norm after it to take inside the next matmuls (norms_in_matmuls). Else the
// matmul, then the add.
Tensor CudaOps::rotated_matmul_add(const Weight& w, const RotatedInput& in, const Tensor& staged,
                                   const Tensor& y, const Tensor& x) {
    check_rotated_input("cuda", in, staged);
    check_matmul("cuda", w, staged, y);
    require_f32(x, "rotated_matmul_add", "x");
    require_same_shape(x, y, "rotated_matmul_add");
    check_alignment(w);
    const MatmulArgs a = matmul_args(w, staged, y);
    if (!split_decode_takes_add(in, a) || !fused_in_register_kernel(*this, a))
        return Ops::rotated_matmul_add(w, in, staged, y, x);
    return launch_split_decode_add(*this, a, in, x);
}

// GDN's input projection of a normed input with the conv on its way out, where the register
// kernel runs both (a decode step's rows, as matmul_conv1d_silu); else the input staged first.
void CudaOps::rotated_matmul_conv1d_silu(const Weight& w, const RotatedInput& in, const Tensor& staged,
                                         const Tensor& y, const float* conv_w, int kernel, const GdnState& st,
                                         const StepInfo& step, const Tensor& conv_out) {
    const char* op = "matmul_conv1d_silu";
    check_rotated_input("cuda", in, staged);
    check_matmul("cuda", w, staged, y);
    check_conv_out(conv_out, y);
    const MatmulArgs a = matmul_args(w, staged, y);
    if (in.kind != RotatedInput::Kind::ResidualNorm || !split_decode_takes(in, a) ||
        !conv_in_decode_kernel(*this, a, kernel, step))
        return Ops::rotated_matmul_conv1d_silu(w, in, staged, y, conv_w, kernel, st, step, conv_out);
    check_conv_step(op, staged.rows, st, step);
    check_alignment(w);
    launch_split_decode(
        *this, a, in,
        ConvStore{conv_w, st.conv, step.seqs, conv_out.as<float>(), conv_out.ld, conv_out.cols});
}

// One row only: whole 27B decode steps at 1, 2 and 4 rows, the norms in the matmuls against
// residual_norm, measured +0.8 %, -0.5 % and the same (docs/BENCHMARKS.md, thirty-third pass).
// The ops themselves take up to kRotatedMaxRows rows. Not where another decode kernel is forced:
// the ops would run as the matmul, the add, rmsnorm and rotate apart.
bool CudaOps::norms_in_matmuls(int64_t rows) const {
    constexpr int64_t kNormsInMatmulsRows = 1;
    const bool registers = decode_gemm_ == DecodeGemm::Auto || decode_gemm_ == DecodeGemm::Registers;
    return norms_in_matmuls_ && fuse_inputs_ && registers && precision_ == Precision::Mixed &&
           comm_ == nullptr && rows >= 1 && rows <= kNormsInMatmulsRows;
}

void CudaOps::matmul(const Weight& w, const Tensor& x, const Tensor& y) {
    check_matmul("cuda", w, x, y);
    check_alignment(w);
    if (x.rows == 0 || w.out == 0) return;
    MatmulArgs a = matmul_args(w, x, y);
    if (w.in == 0) {
        NIWA_CUDA_CHECK(cudaMemset2DAsync(a.y, static_cast<size_t>(a.ldy) * sizeof(float), 0,
                                          static_cast<size_t>(a.out) * sizeof(float),
                                          static_cast<size_t>(a.n), stream_));
        return;
    }
    const bool mixed = precision_ == Precision::Mixed;
    require(
        mixed || a.type != DType::PQ2_0T, "matmul",
        "PQ2_0T is the mixed-precision layout (matmul_layout); in fp32 the weight must be PQ2_0 or PQ2_0S");
    if (mixed && a.n <= kDecodeMaxRows && (a.type == DType::PQ2_0S || a.type == DType::PQ2_0T))
        return launch_decode(*this, a);
    if (mixed && a.n <= kDecodeMaxRows && is_ternary(a.type)) return launch_ternary_decode(*this, a);
    if (mixed && a.n > kDecodeMaxRows) {
        return prefill_gemm_ == PrefillGemm::Tiles ? launch_mma_prefill(*this, a)
                                                   : launch_cublas_prefill(*this, a);
    }
    with_weight_type(a.type, [&](auto tag) {
        constexpr DType T = decltype(tag)::value;
        if (a.n <= kDecodeMaxRows && a.out < kSmallOutRows)
            launch_smallout<T>(*this, a);
        else if (a.n <= kDecodeMaxRows)
            launch_rowwise<T>(stream_, a);
        else
            launch_fp32_tiled<T>(stream_, a);
    });
}

}  // namespace niwa::kernels::cuda
