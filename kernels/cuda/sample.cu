// sample: one token per row of logits, the CPU oracle's semantics (kernels/cpu/sample.cpp).
// The GPU reduces each row to what the choice needs and only that comes back: greedy rows to
// their argmax (first index of the maximum); rows with 0 < top_k <= kMaxTopK to their top_k
// candidates (an exact radix select on the logits' bits, ties at the threshold all kept), which
// the host filters and draws from with the CPU's own rule (draw_token, kernels/sample_draw.h). Every filter
// depends only on ratios of probabilities inside the top_k, so the rest of the vocabulary is not needed. Rows
// without top_k fall back to the whole row on the host. This op returns host ids, so it waits for the GPU
// like download().
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cuda/cuda_ops.h"
#include "kernels/sample_draw.h"

namespace niwa::kernels::cuda {

namespace {

constexpr int kMaxTopK = 1024;
constexpr int kCap = 2048;  // candidates kept per row (top_k plus ties at the threshold)
constexpr int kThreads = 1024;
constexpr int kGreedy = -1;  // mode per row: greedy, 0 = the host does it, k > 0 = top k

// An unsigned key with the order of the floats, every NaN the lowest (as the CPU ranks them).
__device__ __forceinline__ uint32_t order_key(float f) {
    const uint32_t u = __float_as_uint(f);
    if (f != f) return 0;
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

__device__ void argmax_row(const float* x, int64_t vocab, int32_t* out) {
    __shared__ float best_v[32];
    __shared__ int64_t best_i[32];
    float v = -INFINITY;
    int64_t bi = -1;
    for (int64_t i = threadIdx.x; i < vocab; i += blockDim.x) {
        const float xi = x[i];  // a NaN is never taken: it ranks below every number
        if (xi == xi && (bi < 0 || xi > v)) v = xi, bi = i;  // ascending i: the first maximum stays
    }
    for (int off = 16; off > 0; off >>= 1) {
        const float ov = __shfl_xor_sync(0xffffffffu, v, off);
        const int64_t oi = __shfl_xor_sync(0xffffffffu, bi, off);
        if (oi >= 0 && (bi < 0 || ov > v || (ov == v && oi < bi))) v = ov, bi = oi;
    }
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    if (lane == 0) best_v[warp] = v, best_i[warp] = bi;
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int w = 1; w < static_cast<int>(blockDim.x >> 5); ++w)
            if (best_i[w] >= 0 && (bi < 0 || best_v[w] > v || (best_v[w] == v && best_i[w] < bi)))
                v = best_v[w], bi = best_i[w];
        *out = static_cast<int32_t>(bi < 0 ? 0 : bi);
    }
}

// Every logit >= the k-th largest: count and (value, id) pairs, the first kCap of them.
__device__ void top_k_row(const float* x, int64_t vocab, int k, int* count, float* vals, int32_t* ids) {
    __shared__ unsigned hist[256];
    __shared__ uint32_t prefix, mask;
    __shared__ int remaining, found;
    if (threadIdx.x == 0) prefix = 0, mask = 0, remaining = k, found = 0;
    for (int shift = 24; shift >= 0; shift -= 8) {
        for (int b = threadIdx.x; b < 256; b += blockDim.x) hist[b] = 0;
        __syncthreads();
        const uint32_t p = prefix, m = mask;
        for (int64_t i = threadIdx.x; i < vocab; i += blockDim.x) {
            const uint32_t key = order_key(x[i]);
            if ((key & m) == p) atomicAdd(&hist[(key >> shift) & 255u], 1u);
        }
        __syncthreads();
        if (threadIdx.x == 0) {
            int above = 0, b = 255;
            for (; b > 0; --b) {
                if (above + static_cast<int>(hist[b]) >= remaining) break;
                above += static_cast<int>(hist[b]);
            }
            remaining -= above;
            prefix |= static_cast<uint32_t>(b) << shift;
            mask |= 255u << shift;
        }
        __syncthreads();
    }
    const uint32_t threshold = prefix;
    for (int64_t i = threadIdx.x; i < vocab; i += blockDim.x) {
        const float v = x[i];
        if (order_key(v) < threshold) continue;
        const int slot = atomicAdd(&found, 1);
        if (slot < kCap) vals[slot] = v, ids[slot] = static_cast<int32_t>(i);
    }
    __syncthreads();
    if (threadIdx.x == 0) *count = found;
}

__global__ void __launch_bounds__(kThreads)
    sample_kernel(const float* logits, int64_t ld, int64_t vocab, const int* modes, int32_t* argmax,
                  int* counts, float* vals, int32_t* ids) {
    const int64_t r = blockIdx.x;
    const float* x = logits + r * ld;
    const int mode = modes[r];
    if (mode == kGreedy) argmax_row(x, vocab, &argmax[r]);
    if (mode > 0) top_k_row(x, vocab, mode, &counts[r], vals + r * kCap, ids + r * kCap);
}

}  // namespace

void CudaOps::sample(const Tensor& logits, const SampleParams* params, int32_t* out_ids) {
    require_f32(logits, "sample", "logits");
    require(logits.cols > 0, "sample", "empty vocabulary");
    const int64_t n = logits.rows, vocab = logits.cols;
    if (n == 0) return;
    std::vector<int> modes(static_cast<size_t>(n));
    bool any_top_k = false;
    for (int64_t r = 0; r < n; ++r) {
        const SampleParams& sp = params[r];
        const bool greedy = sp.temperature <= 0.0f || sp.top_k == 1;
        const bool top_k = sp.top_k > 0 && sp.top_k <= kMaxTopK;
        modes[r] = greedy ? kGreedy : top_k ? static_cast<int>(std::min<int64_t>(sp.top_k, vocab)) : 0;
        any_top_k = any_top_k || (!greedy && top_k);
    }
    // Workspace: modes[n] | argmax[n] | counts[n] | vals[n][kCap] | ids[n][kCap].
    const size_t small = static_cast<size_t>(n) * sizeof(int);
    const size_t cand = static_cast<size_t>(n) * kCap * sizeof(float);
    auto* base = static_cast<char*>(workspace(Workspace::Sample, 3 * small + 2 * cand));
    auto* d_modes = reinterpret_cast<int*>(base);
    auto* d_argmax = reinterpret_cast<int32_t*>(base + small);
    auto* d_counts = reinterpret_cast<int*>(base + 2 * small);
    auto* d_vals = reinterpret_cast<float*>(base + 3 * small);
    auto* d_ids = reinterpret_cast<int32_t*>(base + 3 * small + cand);
    upload(d_modes, modes.data(), small);
    sample_kernel<<<static_cast<unsigned>(n), kThreads, 0, stream_>>>(
        logits.as<const float>(), logits.ld, vocab, d_modes, d_argmax, d_counts, d_vals, d_ids);
    NIWA_CUDA_LAUNCHED("sample_kernel");

    std::vector<char> host(3 * small + (any_top_k ? 2 * cand : 0));
    download(host.data() + small, base + small, host.size() - small);
    const auto* argmax = reinterpret_cast<const int32_t*>(host.data() + small);
    const auto* counts = reinterpret_cast<const int*>(host.data() + 2 * small);
    const auto* vals = reinterpret_cast<const float*>(host.data() + 3 * small);
    const auto* ids = reinterpret_cast<const int32_t*>(host.data() + 3 * small + cand);
    std::vector<std::pair<float, int32_t>> candidates;
    std::vector<float> row;
    for (int64_t r = 0; r < n; ++r) {
        if (modes[r] == kGreedy) {
            out_ids[r] = argmax[r];
            continue;
        }
        candidates.clear();
        if (modes[r] > 0 && counts[r] <= kCap) {
            for (int i = 0; i < counts[r]; ++i)
                candidates.emplace_back(vals[r * kCap + i], ids[r * kCap + i]);
        } else {
            row.resize(static_cast<size_t>(vocab));
            download(row.data(), logits.as<const float>() + r * logits.ld, row.size() * sizeof(float));
            for (int64_t i = 0; i < vocab; ++i) candidates.emplace_back(row[i], static_cast<int32_t>(i));
        }
        out_ids[r] = draw_token(candidates, params[r]);
    }
}

}  // namespace niwa::kernels::cuda
