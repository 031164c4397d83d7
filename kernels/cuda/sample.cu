// top_logits and sample on the GPU. top_logits reduces each row of logits on the device to what a
// draw needs (TopLogits: the k largest logits and every one tied with the k-th, the row's largest
// logit, the rule's total mass at a temperature) and brings back only that. A row is cut into
// segments, a block each, so a few rows still fill the GPU; the host merges a row's segments
// (merge_top_logits) as it merges tensor-parallel ranks' vocabulary slices. sample is top_logits
// and the rule on the host (draw_from_top, the CPU oracle's draw); a row whose draw reaches below
// its candidates is brought back whole and drawn from as the CPU does. Either op returns host
// results, so it waits for the GPU like download().
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "kernels/cuda/cuda_ops.h"
#include "kernels/rank_key.h"
#include "kernels/sample_draw.h"

namespace niwa::kernels::cuda {

namespace {

constexpr int kThreads = 512;
constexpr int kMaxSegments = 16;
constexpr int64_t kMinSegment = 4096;  // tokens: below it a segment's block is mostly start-up
constexpr int kTieRoom = 32;           // candidate slots beyond k a segment keeps for ties at its k-th
constexpr int kAsksByValue = 32;       // rows whose asks travel in the launch, not by an upload

struct InlineAsks {
    TopAsk ask[kAsksByValue];
};

// A segment's reduction; its candidates go to slots [blockIdx.x * cap, + cap).
struct Part {
    double mass;
    float max_logit;
    uint32_t threshold;  // every key >= it is a candidate (0: every token)
    int count;           // candidates found (more than cap: the slots hold only some)
};

template <typename T, typename Op>
__device__ T block_reduce(T v, Op op, T* scratch) {
    for (int off = 16; off > 0; off >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, off));
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    __syncthreads();  // scratch's last use is over
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    v = scratch[0];
    for (int w = 1; w < kThreads / 32; ++w) v = op(v, scratch[w]);
    return v;
}

__global__ void __launch_bounds__(kThreads)
    top_logits_kernel(const float* logits, int64_t ld, int64_t vocab, int segments, const TopAsk* asks,
                      InlineAsks inline_asks, Part* parts, float* vals, int32_t* ids, int cap) {
    __shared__ float f_scratch[kThreads / 32];
    __shared__ double d_scratch[kThreads / 32];
    __shared__ unsigned hist[256];
    __shared__ uint32_t prefix_s;
    __shared__ int remaining_s, found;
    const int64_t r = blockIdx.x / segments, s = blockIdx.x % segments;
    const int64_t b = vocab * s / segments, n = vocab * (s + 1) / segments - b;
    const float* x = logits + r * ld + b;
    const TopAsk ask = asks ? asks[r] : inline_asks.ask[r];

    float mx = -INFINITY;  // comparisons pass over NaN
    for (int64_t i = threadIdx.x; i < n; i += kThreads) mx = x[i] > mx ? x[i] : mx;
    mx = block_reduce(
        mx, [](float a, float c) { return a > c ? a : c; }, f_scratch);

    double mass = 0.0;
    if (ask.temperature > 0.0f && isfinite(mx)) {
        const float scale = 1.4426950408889634f / ask.temperature;
        for (int64_t i = threadIdx.x; i < n; i += kThreads) {
            const float t = (x[i] - mx) * scale;
            mass += t > -126.0f ? exp2f(t) : 0.0f;  // NaN and -inf weigh 0, as on the host
        }
        mass = block_reduce(
            mass, [](double a, double c) { return a + c; }, d_scratch);
    }

    // The k-th largest key: for k 1 the largest's (a number's: ties kept), else by radix, 8 bits a
    // round from the top (the k largest and their ties kept), each round's bins scanned by a warp.
    const int64_t k = ask.k;
    uint32_t threshold = 0;
    if (k == 1 && mx > -INFINITY) {
        threshold = rank_key(mx);
    } else if (k > 0 && k < n) {
        if (threadIdx.x == 0) prefix_s = 0, remaining_s = int(k);
        uint32_t mask = 0;
        for (int shift = 24; shift >= 0; shift -= 8) {
            for (int i = threadIdx.x; i < 256; i += kThreads) hist[i] = 0;
            __syncthreads();
            const uint32_t prefix = prefix_s;
            for (int64_t i = threadIdx.x; i < n; i += kThreads) {
                const uint32_t key = rank_key(x[i]);
                if ((key & mask) == prefix) atomicAdd(&hist[(key >> shift) & 255u], 1u);
            }
            __syncthreads();
            if (threadIdx.x < 32) {
                // The first bin from the top whose count, with those above it, reaches `remaining`
                // (bin 0 if none does): lane l holds bins 255 - 8l down to 248 - 8l.
                const int lane = int(threadIdx.x), rem = remaining_s;
                int c[8], sum = 0;
#pragma unroll
                for (int j = 0; j < 8; ++j) sum += c[j] = int(hist[255 - 8 * lane - j]);
                int incl = sum;
#pragma unroll
                for (int off = 1; off < 32; off <<= 1) {
                    const int t = __shfl_up_sync(0xffffffffu, incl, off);
                    if (lane >= off) incl += t;
                }
                const unsigned reach = __ballot_sync(0xffffffffu, incl >= rem);
                if (lane == (reach ? __ffs(reach) - 1 : 31)) {
                    int above = incl - sum, bin = 255 - 8 * lane;
                    for (int j = 0; j < 8; ++j, --bin) {
                        if (above + c[j] >= rem || bin == 0) break;
                        above += c[j];
                    }
                    remaining_s = rem - above;
                    prefix_s |= uint32_t(bin) << shift;
                }
            }
            mask |= 255u << shift;
            __syncthreads();
        }
        threshold = prefix_s;
    }
    if (threadIdx.x == 0) found = 0;
    __syncthreads();
    if (k > 0) {
        for (int64_t i = threadIdx.x; i < n; i += kThreads) {
            const float v = x[i];
            if (rank_key(v) < threshold) continue;
            const int slot = atomicAdd(&found, 1);
            if (slot < cap) {
                vals[int64_t(blockIdx.x) * cap + slot] = v;
                ids[int64_t(blockIdx.x) * cap + slot] = int32_t(b + i);
            }
        }
    }
    __syncthreads();
    if (threadIdx.x == 0) parts[blockIdx.x] = Part{mass, mx, threshold, k > 0 ? found : 0};
}

// Segments a row is cut into: enough blocks for the GPU's SMs twice over, none shorter than
// kMinSegment tokens.
int segments_for(const CudaOps& ops, int64_t rows, int64_t vocab) {
    const int64_t want = (2 * ops.props().multiProcessorCount + rows - 1) / rows;
    return int(std::clamp<int64_t>(std::min<int64_t>(want, vocab / kMinSegment), 1, kMaxSegments));
}

}  // namespace

void CudaOps::top_logits(const Tensor& logits, const TopAsk* asks, TopLogits* out) {
    require_f32(logits, "top_logits", "logits");
    const int64_t n = logits.rows, vocab = logits.cols;
    if (n == 0) return;
    int k_max = 1;
    for (int64_t r = 0; r < n; ++r) {
        require(asks[r].k >= 0 && asks[r].k <= kMaxTopAsk, "top_logits",
                "k = " + std::to_string(asks[r].k) + " (a reduction keeps 0.." + std::to_string(kMaxTopAsk) +
                    " candidates)");
        k_max = std::max(k_max, asks[r].k);
    }
    const int segments = segments_for(*this, n, vocab);
    const int cap = k_max + kTieRoom;
    const int64_t blocks = n * segments;
    // Workspace: asks[n] (past kAsksByValue rows) | parts[blocks] | vals[blocks][cap] | ids[blocks][cap].
    const bool upload_asks = n > kAsksByValue;
    const size_t ask_bytes = upload_asks ? (size_t(n) * sizeof(TopAsk) + 15) / 16 * 16 : 0;
    const size_t part_bytes = size_t(blocks) * sizeof(Part);
    const size_t cand_bytes = size_t(blocks) * size_t(cap) * sizeof(float);
    auto* base = static_cast<char*>(workspace(Workspace::Sample, ask_bytes + part_bytes + 2 * cand_bytes));
    auto* d_parts = reinterpret_cast<Part*>(base + ask_bytes);
    auto* d_vals = reinterpret_cast<float*>(base + ask_bytes + part_bytes);
    auto* d_ids = reinterpret_cast<int32_t*>(base + ask_bytes + part_bytes + cand_bytes);
    InlineAsks inline_asks{};
    TopAsk* d_asks = nullptr;
    if (upload_asks) {
        d_asks = reinterpret_cast<TopAsk*>(base);
        upload(d_asks, asks, size_t(n) * sizeof(TopAsk));
    } else {
        std::copy(asks, asks + n, inline_asks.ask);
    }
    top_logits_kernel<<<unsigned(blocks), kThreads, 0, stream_>>>(logits.as<const float>(), logits.ld, vocab,
                                                                  segments, d_asks, inline_asks, d_parts,
                                                                  d_vals, d_ids, cap);
    NIWA_CUDA_LAUNCHED("top_logits_kernel");
    auto* host = static_cast<char*>(host_staging(part_bytes + 2 * cand_bytes));
    download(host, d_parts, part_bytes + 2 * cand_bytes);
    const auto* parts = reinterpret_cast<const Part*>(host);
    const auto* vals = reinterpret_cast<const float*>(host + part_bytes);
    const auto* ids = reinterpret_cast<const int32_t*>(host + part_bytes + cand_bytes);
    std::vector<TopLogits> segs(static_cast<size_t>(segments));
    const std::vector<int32_t> no_offsets(size_t(segments), 0);  // the kernel's ids are the row's
    for (int64_t r = 0; r < n; ++r) {
        for (int s = 0; s < segments; ++s) {
            const int64_t blk = r * segments + s;
            const Part& p = parts[blk];
            TopLogits& t = segs[size_t(s)];
            t.size = vocab * (s + 1) / segments - vocab * s / segments;
            t.max_logit = p.max_logit;
            t.mass = p.mass;
            t.logits.clear();
            t.ids.clear();
            if (asks[r].k == 0 || p.count > cap) {
                t.floor = INFINITY;  // none asked, or more ties than slots: none vouched for
                continue;
            }
            t.floor = p.threshold == 0 ? -INFINITY : key_float(p.threshold);
            t.logits.assign(vals + blk * cap, vals + blk * cap + p.count);
            t.ids.assign(ids + blk * cap, ids + blk * cap + p.count);
        }
        out[r] = merge_top_logits(segs, no_offsets, asks[r].temperature);
    }
}

void CudaOps::sample(const Tensor& logits, const SampleParams* params, int32_t* out_ids) {
    require_f32(logits, "sample", "logits");
    require(logits.cols > 0, "sample", "empty vocabulary");
    const int64_t n = logits.rows, vocab = logits.cols;
    if (n == 0) return;
    std::vector<TopAsk> asks(static_cast<size_t>(n));
    for (int64_t r = 0; r < n; ++r) asks[size_t(r)] = top_ask(params[r]);
    std::vector<TopLogits> tops(static_cast<size_t>(n));
    top_logits(logits, asks.data(), tops.data());
    std::vector<float> row;
    for (int64_t r = 0; r < n; ++r) {
        out_ids[r] = draw_from_top(tops[size_t(r)], params[r]);
        if (out_ids[r] >= 0) continue;
        row.resize(static_cast<size_t>(vocab));
        download(row.data(), logits.as<const float>() + r * logits.ld, row.size() * sizeof(float));
        out_ids[r] = sample_row(row.data(), vocab, params[r]);
    }
}

}  // namespace niwa::kernels::cuda
