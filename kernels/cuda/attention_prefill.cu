// Paged causal attention for prefill sequences, flash-attention style in fp32: one block per
// (sequence, GQA group, tile of 32 query rows), where a row is a (token, head of the group)
// pair so the group's heads share every K/V tile. K/V tiles of 32 keys are gathered from the
// pool into shared memory; each row keeps an online softmax and its output in registers.
#include "kernels/cuda/attention_kernels.h"

namespace niwa::kernels::cuda::attn {

namespace {

constexpr int kThreads = 256;  // 8 threads per query row
constexpr int kRows = kPrefillRows;
constexpr int kKeys = kPrefillKeys;
static_assert(kThreads == kRows * 8 && kKeys == 32, "a row's 8 threads take 4 keys each");

template <int D>
constexpr size_t smem_bytes() {
    return sizeof(float) * (size_t(kRows) * (D + 4) + size_t(kKeys) * (D + 4) + size_t(kKeys) * D);
}

template <typename T, int D>
__global__ void __launch_bounds__(kThreads) prefill_kernel(AttnArgs a, HeadGroups g, PrefillEntries e) {
    constexpr int kLd = D + 4;  // padded rows: the 8 threads of a row read 8 keys conflict-free
    constexpr int kCh = 16 / int(sizeof(T));
    extern __shared__ float4 smem4[];
    float* qs = reinterpret_cast<float*>(smem4);
    float* ks = qs + kRows * kLd;
    float* vs = ks + kKeys * kLd;

    int lo = 0, hi = e.n - 1;  // the entry whose tiles hold blockIdx.x
    while (lo < hi) {
        const int mid = (lo + hi + 1) / 2;
        if (e.tile_start[mid] <= int(blockIdx.x))
            lo = mid;
        else
            hi = mid - 1;
    }
    const int tile = int(blockIdx.x) - e.tile_start[lo];
    const int gi = blockIdx.y, gn = g.count[gi], kvh = g.kv[gi];
    const SeqInfo si = a.seqs[e.seq[lo]];
    const int n_rows = si.n_q * gn;
    const int m0 = tile * kRows;
    if (m0 >= n_rows) return;  // a tile only a larger group needs

    const int tid = threadIdx.x, lane = tid & 31;
    const int r = tid / 8, cg = tid % 8;
    const bool valid = m0 + r < n_rows;
    const int t = valid ? (m0 + r) / gn : 0;  // a row past the end attends like token 0, unwritten
    const int head = g.head[gi][valid ? (m0 + r) % gn : 0];
    const int pos = si.pos0 + t;
    const int max_pos = si.pos0 + (min(n_rows, m0 + kRows) - 1) / gn;

    for (int idx = tid; idx < kRows * D; idx += kThreads) {
        const int rr = idx / D, c = idx % D, m = m0 + rr;
        float x = 0.0f;
        if (m < n_rows)
            x = a.q[(si.q_start + m / gn) * a.q_ld + int64_t(g.head[gi][m % gn]) * D + c] * a.scale;
        qs[rr * kLd + c] = x;
    }

    const T* kpool = static_cast<const T*>(a.k);
    const T* vpool = static_cast<const T*>(a.v);
    float o[D / 32][4] = {};
    float row_max = -INFINITY, row_sum = 0.0f;  // row_sum: this thread's share
    for (int k0 = 0; k0 <= max_pos; k0 += kKeys) {
        __syncthreads();  // the previous tile is consumed (and the Q tile stored)
        for (int idx = tid; idx < kKeys * D / kCh; idx += kThreads) {
            const int n = idx / (D / kCh), c = (idx % (D / kCh)) * kCh, j = k0 + n;
            float kf[kCh], vf[kCh];
            if (j <= max_pos) {
                const int64_t off = pool_offset(a, si, j, kvh, D) + c;
                load_f32<T, kCh>(kpool + off, kf);
                load_f32<T, kCh>(vpool + off, vf);
            } else {
#pragma unroll
                for (int i = 0; i < kCh; ++i) kf[i] = vf[i] = 0.0f;  // never NaN: p = 0 multiplies V
            }
#pragma unroll
            for (int i = 0; i < kCh; ++i) {
                ks[n * kLd + c + i] = kf[i];
                vs[n * D + c + i] = vf[i];
            }
        }
        __syncthreads();

        float s[4] = {};
#pragma unroll 8
        for (int c = 0; c < D; c += 4) {
            const float4 qv = *reinterpret_cast<const float4*>(&qs[r * kLd + c]);
#pragma unroll
            for (int jj = 0; jj < 4; ++jj) {
                const float4 kv = *reinterpret_cast<const float4*>(&ks[(cg + 8 * jj) * kLd + c]);
                s[jj] = fmaf(qv.x, kv.x, s[jj]);
                s[jj] = fmaf(qv.y, kv.y, s[jj]);
                s[jj] = fmaf(qv.z, kv.z, s[jj]);
                s[jj] = fmaf(qv.w, kv.w, s[jj]);
            }
        }
        float mx = -INFINITY;
#pragma unroll
        for (int jj = 0; jj < 4; ++jj) {
            if (k0 + cg + 8 * jj > pos) s[jj] = -INFINITY;
            mx = fmaxf(mx, s[jj]);
        }
#pragma unroll
        for (int off = 1; off < 8; off <<= 1) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, off));
        const float mn = fmaxf(row_max, mx);  // finite: key 0 is in the first tile of every row
        const float corr = expf(row_max - mn);
        row_max = mn;
        float p[4];
        row_sum *= corr;
#pragma unroll
        for (int jj = 0; jj < 4; ++jj) {
            p[jj] = expf(s[jj] - mn);
            row_sum += p[jj];
        }
#pragma unroll
        for (int jj = 0; jj < D / 32; ++jj)
#pragma unroll
            for (int c = 0; c < 4; ++c) o[jj][c] *= corr;
#pragma unroll
        for (int n = 0; n < kKeys; ++n) {
            const float pn = __shfl_sync(0xffffffffu, p[n / 8], (lane & ~7) | (n % 8));
#pragma unroll
            for (int jj = 0; jj < D / 32; ++jj) {
                const float4 vv = *reinterpret_cast<const float4*>(&vs[n * D + 32 * jj + cg * 4]);
                o[jj][0] = fmaf(pn, vv.x, o[jj][0]);
                o[jj][1] = fmaf(pn, vv.y, o[jj][1]);
                o[jj][2] = fmaf(pn, vv.z, o[jj][2]);
                o[jj][3] = fmaf(pn, vv.w, o[jj][3]);
            }
        }
    }
#pragma unroll
    for (int off = 1; off < 8; off <<= 1) row_sum += __shfl_xor_sync(0xffffffffu, row_sum, off);
    if (!valid) return;
    float* out = a.out + (si.q_start + t) * a.out_ld + int64_t(head) * D;
#pragma unroll
    for (int jj = 0; jj < D / 32; ++jj)
#pragma unroll
        for (int c = 0; c < 4; ++c) out[32 * jj + cg * 4 + c] = o[jj][c] / row_sum;
}

template <typename T, int D>
void launch(const AttnArgs& a, const HeadGroups& g, const PrefillEntries& e, cudaStream_t stream) {
    constexpr size_t kSmem = smem_bytes<D>();
    NIWA_CUDA_CHECK(
        cudaFuncSetAttribute(prefill_kernel<T, D>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kSmem)));
    const dim3 grid(unsigned(e.tile_start[e.n]), unsigned(g.n));
    prefill_kernel<T, D><<<grid, kThreads, kSmem, stream>>>(a, g, e);
    NIWA_CUDA_LAUNCHED("attention prefill");
}

}  // namespace

template <typename T>
void launch_prefill(const AttnArgs& a, const HeadGroups& g, const PrefillEntries& e, int d,
                    cudaStream_t stream) {
    with_head_dim(d, [&](auto hd) { launch<T, decltype(hd)::value>(a, g, e, stream); });
}

template void launch_prefill<float>(const AttnArgs&, const HeadGroups&, const PrefillEntries&, int,
                                    cudaStream_t);
template void launch_prefill<__half>(const AttnArgs&, const HeadGroups&, const PrefillEntries&, int,
                                     cudaStream_t);
template void launch_prefill<__nv_bfloat16>(const AttnArgs&, const HeadGroups&, const PrefillEntries&, int,
                                            cudaStream_t);

}  // namespace niwa::kernels::cuda::attn
