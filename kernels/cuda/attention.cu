// kv_store and paged causal attention: the host side plans each step from StepInfo::host_seqs
// (which rows decode, which prefill, how many splits) and launches attention_decode.cu's and
// the prefill kernels (attention_prefill.cu in fp32, attention_prefill_mma.cu on tensor cores).
// The pool may be F32, F16 or BF16; softmax is fp32 always.
#include <algorithm>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernels/cuda/attention_kernels.h"
#include "kernels/cuda/pdl.cuh"

namespace niwa::kernels::cuda {

namespace {

using namespace attn;

// A sequence with at most this many new tokens is planned as decode rows (split-K over the
// cache); longer ones as prefill tiles.
constexpr int kDecodeMaxQ = 4;

// One block per token row; a slot outside the pool is skipped (the host cannot see kv_slots).
template <typename T>
__global__ void kv_store_kernel(const float* k, int64_t k_ld, const float* v, int64_t v_ld, T* kpool,
                                T* vpool, const int32_t* kv_slots, int width, int64_t n_slots) {
    pdl_wait();  // launched to overlap qk_norm_rope: its launch is hidden (pdl.cuh)
    pdl_release();
    const int64_t t = blockIdx.x;
    const int64_t slot = kv_slots[t];
    if (slot < 0 || slot >= n_slots) return;
    for (int c = threadIdx.x; c < width; c += blockDim.x) {
        kpool[slot * width + c] = from_f32<T>(k[t * k_ld + c]);
        vpool[slot * width + c] = from_f32<T>(v[t * v_ld + c]);
    }
}

// Rows [r0, r0 + gridDim.x) that no sequence owns come out zero, as on the CPU.
__global__ void zero_rows_kernel(float* out, int64_t ld, int64_t r0, int64_t cols) {
    float* row = out + (r0 + blockIdx.x) * ld;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) row[c] = 0.0f;
}

// The query heads of each KV head, in groups of at most kMaxGroup.
HeadGroups make_groups(const int32_t* kv_of_q, int64_t n_heads, int n_kv) {
    HeadGroups g;
    for (int kvh = 0; kvh < n_kv; ++kvh) {
        int in_group = kMaxGroup;
        for (int64_t h = 0; h < n_heads; ++h) {
            if (kv_of_q[h] != kvh) continue;
            if (in_group == kMaxGroup) {
                require(g.n < kMaxGroups, "attention",
                        std::to_string(n_heads) + " query heads need more than " +
                            std::to_string(kMaxGroups) + " head groups");
                g.kv[g.n] = int16_t(kvh);
                g.count[g.n] = 0;
                ++g.n;
                in_group = 0;
            }
            g.head[g.n - 1][in_group++] = int16_t(h);
            g.count[g.n - 1] = int8_t(in_group);
        }
    }
    return g;
}

// The most splits the step's decode rows may use: their longest context in units of
// min_tokens, rounded down to a power of two. Launches depend on this bucket, not on the
// exact lengths (the kernels read those from the device), so a recorded step stays valid for
// the next ones until the bucket changes.
int64_t decode_split_cap(const StepInfo& step, int min_tokens) {
    int max_ctx = 0;
    for (int s = 0; s < step.n_seqs; ++s) {
        const SeqInfo& si = step.host_seqs[s];
        if (si.n_q > 0 && si.n_q <= kDecodeMaxQ) max_ctx = std::max(max_ctx, si.pos0 + si.n_q);
    }
    if (max_ctx == 0) return 0;
    int64_t units = (max_ctx + min_tokens - 1) / min_tokens, cap = 1;
    while (cap * 2 <= units) cap *= 2;
    return cap;
}

template <typename T>
void run_decode(CudaOps& ops, const AttnArgs& a, const HeadGroups& g,
                const std::vector<std::pair<int, int>>& rows, int64_t split_cap, int64_t n_heads, int d) {
    for (size_t first = 0; first < rows.size(); first += kMaxDecodeEntries) {
        const size_t n = std::min(rows.size() - first, size_t(kMaxDecodeEntries));
        DecodeEntries e;
        e.n = int(n);
        for (size_t i = 0; i < n; ++i) {
            e.seq[i] = rows[first + i].first;
            e.row[i] = rows[first + i].second;
        }
        const int64_t blocks = int64_t(n) * g.n;
        const bool tensor = !std::is_same_v<T, float> && ops.precision() == Precision::Mixed;
        const int64_t resident =
            int64_t(decode_blocks_per_sm<T>(ops, d, tensor)) * ops.props().multiProcessorCount;
        // Split-K (CudaOps::attn_waves, attn_min_split_tokens): as many splits as fill the
        // waves of the kernel's resident blocks (as many as the SMs hold at once) the cap asks
        // for, within the cap. A block pays fixed costs (its q, its first tile's latency, merging
        // its warps) in which its SM's share of the bandwidth goes unused, so at short contexts
        // fewer blocks win; at long ones a second wave evens the SMs' loads.
        const int64_t want = ops.attn_waves(split_cap) * resident / blocks;
        e.n_splits = int(std::max<int64_t>(1, std::min({want, split_cap, int64_t(kMaxDecodeSplits)})));
        Partials p;
        p.n_q_heads = int(n_heads);
        if (e.n_splits > 1) {
            const size_t parts = n * size_t(e.n_splits) * size_t(n_heads);
            auto* ws = static_cast<float*>(
                ops.workspace(CudaOps::Workspace::Attention, parts * (size_t(d) + 2) * sizeof(float)));
            p.acc = ws;
            p.ml = ws + parts * size_t(d);
        }
        if constexpr (!std::is_same_v<T, float>) {
            if (tensor)
                launch_decode_mma<T>(a, g, e, p, d, ops.overlap_launches(), ops.stream());
            else
                launch_decode<T>(a, g, e, p, d, ops.stream());
        } else {
            launch_decode<T>(a, g, e, p, d, ops.stream());
        }
        if (e.n_splits > 1) launch_decode_combine(a, e, p, d, ops.overlap_launches(), ops.stream());
    }
}

// Precision::Mixed on a 16-bit pool runs the tensor-core kernel; otherwise the fp32 one.
template <typename T>
void run_prefill(CudaOps& ops, const AttnArgs& a, const HeadGroups& g, const std::vector<int>& seqs,
                 const SeqInfo* host_seqs, int d) {
    const bool tensor = !std::is_same_v<T, float> && ops.precision() == Precision::Mixed;
    int tile_rows = kPrefillRows;
    if constexpr (!std::is_same_v<T, float>)
        if (tensor) tile_rows = prefill_mma_rows<T>(ops, d);
    int max_group = 1;
    for (int i = 0; i < g.n; ++i) max_group = std::max(max_group, int(g.count[i]));
    for (size_t first = 0; first < seqs.size(); first += kMaxPrefillEntries) {
        const size_t n = std::min(seqs.size() - first, size_t(kMaxPrefillEntries));
        PrefillEntries e;
        e.n = int(n);
        e.tile_start[0] = 0;
        for (size_t i = 0; i < n; ++i) {
            const int s = seqs[first + i];
            e.seq[i] = s;
            const int64_t rows = int64_t(host_seqs[s].n_q) * max_group;
            e.tile_start[i + 1] = e.tile_start[i] + int32_t((rows + tile_rows - 1) / tile_rows);
        }
        if constexpr (!std::is_same_v<T, float>) {
            if (tensor) {
                launch_prefill_mma<T>(a, g, e, d, tile_rows, ops.stream());
                continue;
            }
        }
        launch_prefill<T>(a, g, e, d, ops.stream());
    }
}

template <typename T>
void run_attention(CudaOps& ops, const AttnArgs& a, const HeadGroups& g, const StepInfo& step,
                   int64_t n_heads, int d) {
    thread_local std::vector<std::pair<int, int>> decode_rows;
    thread_local std::vector<int> prefill;
    decode_rows.clear();
    prefill.clear();
    for (int s = 0; s < step.n_seqs; ++s) {
        const SeqInfo& si = step.host_seqs[s];
        if (si.n_q == 0) continue;
        if (si.n_q > kDecodeMaxQ) {
            prefill.push_back(s);
            continue;
        }
        for (int i = 0; i < si.n_q; ++i) decode_rows.emplace_back(s, i);
    }
    if (!decode_rows.empty())
        run_decode<T>(ops, a, g, decode_rows, decode_split_cap(step, ops.attn_min_split_tokens()), n_heads,
                      d);
    if (!prefill.empty()) run_prefill<T>(ops, a, g, prefill, step.host_seqs, d);
}

}  // namespace

namespace attn {

void check_pool(const KvLayer& kv, const char* op) {
    require(
        kv.type == DType::F32 || kv.type == DType::F16 || kv.type == DType::BF16, op,
        std::string("KV pool of type ") + dtype_name(kv.type) + "; the CUDA backend takes F32, F16 or BF16");
    require(kv.k != nullptr && kv.v != nullptr && kv.block_tokens > 0 && kv.n_kv_heads > 0 && kv.head_dim > 0,
            op, "empty KV pool geometry");
}

}  // namespace attn

uint64_t CudaOps::launch_key(const StepInfo& step) const {
    return step.host_seqs ? uint64_t(decode_split_cap(step, attn_min_split_tokens_)) : 0;
}

void CudaOps::kv_store(const KvLayer& kv, const Tensor& k, const Tensor& v, const StepInfo& step) {
    check_pool(kv, "kv_store");
    require_f32(k, "kv_store", "k");
    require_f32(v, "kv_store", "v");
    const int64_t width = int64_t(kv.n_kv_heads) * kv.head_dim;
    require(k.cols == width && v.cols == width && k.rows >= step.n_tokens && v.rows >= step.n_tokens,
            "kv_store", "k/v rows must be [n_tokens, n_kv_heads * head_dim]");
    if (step.n_tokens == 0) return;
    const int64_t n_slots = int64_t(kv.n_blocks) * kv.block_tokens;
    const unsigned grid = unsigned(step.n_tokens);
    const int threads = width >= 256 ? 256 : 128;
    with_pool_element(kv.type, [&](auto element) {
        using T = decltype(element);
        NIWA_CUDA_CHECK(launch_overlapping(overlap_launches(), kv_store_kernel<T>, dim3(grid), dim3(threads),
                                           0, stream_, k.as<float>(), k.ld, v.as<float>(), v.ld,
                                           static_cast<T*>(kv.k), static_cast<T*>(kv.v), step.kv_slots,
                                           int(width), n_slots));
    });
}

void CudaOps::attention(const Tensor& q, const KvLayer& kv, const int32_t* kv_of_q, float scale,
                        const StepInfo& step, const Tensor& out) {
    check_pool(kv, "attention");
    check_attention("cuda", q, kv, kv_of_q, out);
    const int d = kv.head_dim;
    require(d == 64 || d == 128 || d == 256, "attention",
            "head_dim " + std::to_string(d) + "; the CUDA kernels take 64, 128 or 256");
    const int64_t n_heads = q.cols / d;
    require(step.n_seqs == 0 || step.host_seqs != nullptr, "attention", "StepInfo::host_seqs is not set");

    // Rows no sequence owns are zeroed; the others are checked against q.
    thread_local std::vector<std::pair<int64_t, int64_t>> owned;
    owned.clear();
    for (int s = 0; s < step.n_seqs; ++s) {
        const SeqInfo& si = step.host_seqs[s];
        require(si.q_start >= 0 && si.n_q >= 0 && si.q_start + int64_t(si.n_q) <= q.rows && si.pos0 >= 0,
                "attention",
                "sequence " + std::to_string(s) + " rows [" + std::to_string(si.q_start) + ", " +
                    std::to_string(si.q_start + si.n_q) + ") outside the step's " + std::to_string(q.rows));
        if (si.n_q > 0) owned.emplace_back(si.q_start, si.q_start + si.n_q);
    }
    std::sort(owned.begin(), owned.end());
    int64_t next = 0;
    owned.emplace_back(q.rows, q.rows);
    for (const auto& [r0, r1] : owned) {
        if (r0 > next) {
            zero_rows_kernel<<<unsigned(r0 - next), 256, 0, stream_>>>(out.as<float>(), out.ld, next,
                                                                       out.cols);
            NIWA_CUDA_LAUNCHED("attention (padding rows)");
        }
        next = std::max(next, r1);
    }
    if (step.n_seqs == 0 || q.rows == 0) return;

    const HeadGroups groups = make_groups(kv_of_q, n_heads, kv.n_kv_heads);
    const AttnArgs args{q.as<float>(), out.as<float>(),  q.ld,          out.ld,    kv.k,
                        kv.v,          kv.block_tokens,  kv.n_kv_heads, step.seqs, step.block_tables,
                        scale,         reads_early(step)};
    with_pool_element(kv.type, [&](auto element) {
        run_attention<decltype(element)>(*this, args, groups, step, n_heads, d);
    });
}

}  // namespace niwa::kernels::cuda
