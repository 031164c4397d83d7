// Paged causal attention for prefill on tensor cores (Precision::Mixed, F16 and BF16 pools),
// flash-attention style: one block per (sequence, GQA group, tile of query rows), a row being a
// (token, head of the group) pair so the group's heads share every K/V tile. Each warp owns 16
// rows; S = Q·Kᵀ and O += P·V run as mma.sync m16n8k16 in the pool's own 16-bit type (fp16 or
// bf16: K and V reach the tensor cores unconverted; Q and P are rounded to it) with fp32
// accumulation; the online softmax is fp32. Q is scaled, converted and kept in shared memory;
// K/V tiles are gathered from the pool by cp.async into two buffers, the next tile loading while
// the current one is used.
#include <string>

#include "kernels/cuda/attention_kernels.h"
#include "kernels/cuda/mma.cuh"

namespace niwa::kernels::cuda::attn {

namespace {

constexpr float kLog2e = 1.4426950408889634f;  // scores are kept in log2 units: exp2 is one MUFU op

// The tile shapes: rows of Q a block (16 a warp) and keys of a K/V tile. The large one needs
// sm_90's shared memory at head_dim 256; the small one fits any 99 KiB device (sm_120).
template <int R, int N>
struct Shape {
    static constexpr int kRows = R, kKeys = N, kThreads = 2 * R;
};
using Large = Shape<128, 64>;
using Small = Shape<64, 32>;

template <int D, typename S>
constexpr size_t smem_bytes() {
    return sizeof(uint16_t) * size_t(D + 8) * size_t(S::kRows + 4 * S::kKeys);
}

template <typename T, int D, typename S>
__global__ void __launch_bounds__(S::kThreads, D <= 64 ? 2 : 1)
    prefill_mma_kernel(AttnArgs a, HeadGroups g, PrefillEntries e) {
    constexpr int kRows = S::kRows, kKeys = S::kKeys, kThreads = S::kThreads;
    constexpr int kLd = D + 8;  // padded rows: ldmatrix's 8 row addresses fall in distinct banks
    constexpr int kCh = D / 8;  // 16-byte chunks of a row
    using Op = Operand<T>;
    extern __shared__ uint4 smem_tiles[];
    T* qs = reinterpret_cast<T*>(smem_tiles);  // [kRows][kLd]
    T* ks = qs + kRows * kLd;                  // [2][kKeys][kLd]
    T* vs = ks + 2 * kKeys * kLd;              // [2][kKeys][kLd]

    // The grid runs backwards over (tile, group) so the longest tiles (a sequence's last) start first.
    const int idx = int(gridDim.x - 1 - blockIdx.x);
    const int gi = idx % g.n, ti = idx / g.n;
    int lo = 0, hi = e.n - 1;  // the entry whose tiles hold ti
    while (lo < hi) {
        const int mid = (lo + hi + 1) / 2;
        if (e.tile_start[mid] <= ti)
            lo = mid;
        else
            hi = mid - 1;
    }
    const int gn = g.count[gi], kvh = g.kv[gi];
    const SeqInfo si = a.seqs[e.seq[lo]];
    const int n_rows = si.n_q * gn;
    const int m0 = (ti - e.tile_start[lo]) * kRows;
    if (m0 >= n_rows) return;  // a tile only a larger group needs
    const int last = min(n_rows, m0 + kRows) - 1;
    const int max_pos = si.pos0 + last / gn;
    const int n_tiles = max_pos / kKeys + 1;

    const T* kpool = static_cast<const T*>(a.k);
    const T* vpool = static_cast<const T*>(a.v);
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    auto load_tile = [&](int it) {
        T* kt = ks + (it & 1) * kKeys * kLd;
        T* vt = vs + (it & 1) * kKeys * kLd;
        for (int c = tid; c < kKeys * kCh; c += kThreads) {
            const int n = c / kCh, ch = c % kCh, j = it * kKeys + n;
            const bool valid = j <= max_pos;  // keys past the last are zeros: P = 0 multiplies them
            const int64_t off = valid ? pool_offset(a, si, j, kvh, D) + ch * 8 : 0;
            cp_async16_or_zero(kt + n * kLd + ch * 8, kpool + off, valid);
            cp_async16_or_zero(vt + n * kLd + ch * 8, vpool + off, valid);
        }
        cp_async_commit();
    };
    load_tile(0);

    // Q, scaled into log2 units; rows past the end are zero (they attend like their tile's last).
    // Warp w converts rows w, w + kWarps, ..., kBatch rows at a time with all their loads in
    // flight (a block's first tile waits on this); a lane takes 2 columns of every 64.
    constexpr int kWarps = kThreads / 32, kBatch = D >= 128 ? 4 : 16;
    static_assert(kRows % (kWarps * kBatch) == 0, "whole batches of rows");
    const float qscale = a.scale * kLog2e;
    for (int r0 = warp; r0 < kRows; r0 += kWarps * kBatch) {
        float x[kBatch][D / 32];
#pragma unroll
        for (int b = 0; b < kBatch; ++b) {
            const int m = m0 + r0 + b * kWarps;
            const float* src =
                a.q + (si.q_start + m / gn) * a.q_ld + int64_t(g.head[gi][m % gn]) * D + 2 * lane;
#pragma unroll
            for (int i = 0; i < D / 32; ++i) x[b][i] = m < n_rows ? src[64 * (i / 2) + (i & 1)] : 0.0f;
        }
#pragma unroll
        for (int b = 0; b < kBatch; ++b)
#pragma unroll
            for (int i = 0; i < D / 64; ++i)
                *reinterpret_cast<uint32_t*>(qs + (r0 + b * kWarps) * kLd + 64 * i + 2 * lane) =
                    Op::pack(x[b][2 * i] * qscale, x[b][2 * i + 1] * qscale);
    }

    // This thread's rows are the warp's gr and gr + 8; the warp's first and last positions bound
    // the keys it reads and the tiles it masks.
    const int gr = lane >> 2, tq = lane & 3;
    const int w0 = m0 + 16 * warp;
    const int pos[2] = {si.pos0 + min(w0 + gr, last) / gn, si.pos0 + min(w0 + gr + 8, last) / gn};
    const int w_min_pos = si.pos0 + min(w0, last) / gn;
    const int w_max_pos = w0 <= last ? si.pos0 + min(w0 + 15, last) / gn : -1;

    float o[D / 8][4] = {};
    float row_max[2] = {-INFINITY, -INFINITY}, row_sum[2] = {0.0f, 0.0f};  // row_sum: this thread's share
    for (int it = 0; it < n_tiles; ++it) {
        if (it + 1 < n_tiles)
            load_tile(it + 1);  // into the buffer the previous iteration finished with
        else
            cp_async_commit();  // an empty group keeps the wait below uniform
        cp_async_wait<1>();
        __syncthreads();  // tile it (and Q) visible to all
        const int k0 = it * kKeys;
        if (k0 <= w_max_pos) {
            const T* kt = ks + (it & 1) * kKeys * kLd;
            const T* vt = vs + (it & 1) * kKeys * kLd;
            float s[kKeys / 8][4] = {};
#pragma unroll
            for (int kd = 0; kd < D; kd += 16) {
                uint32_t qa[4];
                ldmatrix_x4(qa, qs + (16 * warp + (lane & 15)) * kLd + kd + (lane >> 4) * 8);
#pragma unroll
                for (int np = 0; np < kKeys / 16; ++np) {
                    uint32_t kb[4];
                    ldmatrix_x4(
                        kb, kt + (16 * np + (lane >> 4) * 8 + (lane & 7)) * kLd + kd + ((lane >> 3) & 1) * 8);
                    Op::mma(s[2 * np], qa, kb[0], kb[1]);
                    Op::mma(s[2 * np + 1], qa, kb[2], kb[3]);
                }
            }
            if (k0 + kKeys - 1 > w_min_pos) {
#pragma unroll
                for (int nt = 0; nt < kKeys / 8; ++nt)
#pragma unroll
                    for (int i = 0; i < 4; ++i)
                        if (k0 + 8 * nt + 2 * tq + (i & 1) > pos[i >> 1]) s[nt][i] = -INFINITY;
            }
            // Online softmax; the new maximum is finite: every row's first tile holds key 0.
            float mx[2] = {row_max[0], row_max[1]};
#pragma unroll
            for (int nt = 0; nt < kKeys / 8; ++nt) {
                mx[0] = fmaxf(mx[0], fmaxf(s[nt][0], s[nt][1]));
                mx[1] = fmaxf(mx[1], fmaxf(s[nt][2], s[nt][3]));
            }
            float corr[2];
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 1));
                mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 2));
                corr[h] = exp2f(row_max[h] - mx[h]);
                row_max[h] = mx[h];
                row_sum[h] *= corr[h];
            }
            // P in the A-operand layout: key tile 2kk + half is columns 8 half .. 8 half + 7 of step kk.
            uint32_t pa[kKeys / 16][4];
#pragma unroll
            for (int nt = 0; nt < kKeys / 8; ++nt) {
                const float p0 = exp2f(s[nt][0] - mx[0]), p1 = exp2f(s[nt][1] - mx[0]);
                const float p2 = exp2f(s[nt][2] - mx[1]), p3 = exp2f(s[nt][3] - mx[1]);
                row_sum[0] += p0 + p1;
                row_sum[1] += p2 + p3;
                pa[nt / 2][2 * (nt & 1)] = Op::pack(p0, p1);
                pa[nt / 2][2 * (nt & 1) + 1] = Op::pack(p2, p3);
            }
#pragma unroll
            for (int dn = 0; dn < D / 8; ++dn) {
                o[dn][0] *= corr[0];
                o[dn][1] *= corr[0];
                o[dn][2] *= corr[1];
                o[dn][3] *= corr[1];
            }
#pragma unroll
            for (int kk = 0; kk < kKeys / 16; ++kk)
#pragma unroll
                for (int dp = 0; dp < D / 16; ++dp) {
                    uint32_t vb[4];
                    ldmatrix_x4_trans(vb, vt + (16 * kk + (lane & 7) + ((lane >> 3) & 1) * 8) * kLd +
                                              16 * dp + (lane >> 4) * 8);
                    Op::mma(o[2 * dp], pa[kk], vb[0], vb[1]);
                    Op::mma(o[2 * dp + 1], pa[kk], vb[2], vb[3]);
                }
        }
        __syncthreads();  // tile it consumed before the next iteration loads over it
    }
    cp_async_wait<0>();
    if (w0 > last) return;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        row_sum[h] += __shfl_xor_sync(0xffffffffu, row_sum[h], 1);
        row_sum[h] += __shfl_xor_sync(0xffffffffu, row_sum[h], 2);
        const int m = w0 + gr + 8 * h;
        if (m > last) continue;
        const float inv = 1.0f / row_sum[h];
        float* out = a.out + (si.q_start + m / gn) * a.out_ld + int64_t(g.head[gi][m % gn]) * D + 2 * tq;
#pragma unroll
        for (int dn = 0; dn < D / 8; ++dn) {
            out[8 * dn] = o[dn][2 * h] * inv;
            out[8 * dn + 1] = o[dn][2 * h + 1] * inv;
        }
    }
}

template <typename T, int D, typename S>
void launch(const AttnArgs& a, const HeadGroups& g, const PrefillEntries& e, cudaStream_t stream) {
    constexpr size_t kSmem = smem_bytes<D, S>();
    NIWA_CUDA_CHECK(cudaFuncSetAttribute(prefill_mma_kernel<T, D, S>,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, int(kSmem)));
    const unsigned blocks = unsigned(e.tile_start[e.n]) * unsigned(g.n);
    prefill_mma_kernel<T, D, S><<<blocks, S::kThreads, kSmem, stream>>>(a, g, e);
    NIWA_CUDA_LAUNCHED("attention prefill (tensor cores)");
}

template <typename T, typename S>
void launch_shape(const AttnArgs& a, const HeadGroups& g, const PrefillEntries& e, int d,
                  cudaStream_t stream) {
    with_head_dim(d, [&](auto hd) { launch<T, decltype(hd)::value, S>(a, g, e, stream); });
}

// Shared memory of a block of the kernel launch<T, D, S> runs at head_dim d on ops' device: its
// dynamic part and its static __shared__ memory (together within the opt-in size, or
// cudaFuncSetAttribute fails).
template <typename T, typename S>
size_t block_smem(const CudaOps& ops, int d) {
    size_t bytes = 0;
    with_head_dim(d, [&](auto hd) {
        constexpr int D = decltype(hd)::value;
        bytes = smem_bytes<D, S>() + ops.static_smem(prefill_mma_kernel<T, D, S>);
    });
    return bytes;
}

}  // namespace

template <typename T>
int prefill_mma_rows(const CudaOps& ops, int d) {
    const size_t optin = ops.props().sharedMemPerBlockOptin;
    if (block_smem<T, Large>(ops, d) <= optin) return Large::kRows;
    const size_t small = block_smem<T, Small>(ops, d);
    require(small <= optin, "attention",
            "the tensor-core prefill needs " + std::to_string(small) +
                " bytes of shared memory a block; this device allows " + std::to_string(optin));
    return Small::kRows;
}

template <typename T>
void launch_prefill_mma(const AttnArgs& a, const HeadGroups& g, const PrefillEntries& e, int d, int rows,
                        cudaStream_t stream) {
    if (rows == Large::kRows) return launch_shape<T, Large>(a, g, e, d, stream);
    require(rows == Small::kRows, "attention",
            "tensor-core prefill tiles of " + std::to_string(rows) + " rows");
    launch_shape<T, Small>(a, g, e, d, stream);
}

template int prefill_mma_rows<__half>(const CudaOps&, int);
template int prefill_mma_rows<__nv_bfloat16>(const CudaOps&, int);
template void launch_prefill_mma<__half>(const AttnArgs&, const HeadGroups&, const PrefillEntries&, int, int,
                                         cudaStream_t);
template void launch_prefill_mma<__nv_bfloat16>(const AttnArgs&, const HeadGroups&, const PrefillEntries&,
                                                int, int, cudaStream_t);

}  // namespace niwa::kernels::cuda::attn
