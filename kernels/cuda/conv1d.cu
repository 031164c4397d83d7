// conv1d_silu: GDN's causal depthwise convolution over each sequence's tokens, continuing from
// its conv state conv[slot][kernel-1][channels] (oldest first) and leaving its last kernel-1
// inputs there. One thread per (channel, sequence, chunk of 64 tokens), so a long prefill runs
// in parallel along the tokens too; each chunk starts its window from the rows (or the state)
// before it.
#include <algorithm>
#include <string>

#include "kernels/cuda/cuda_ops.h"
#include "kernels/cuda/pdl.cuh"

namespace niwa::kernels::cuda {

namespace {

constexpr int kMaxKernel = 8;
constexpr int kChunk = 64;
constexpr int kThreads = 128;

struct ConvArgs {
    const float* x;
    int64_t x_ld;
    const float* w;
    float* state;
    int64_t channels;
    const SeqInfo* seqs;
    float* y;
    int64_t y_ld;
};

// A sequence of one chunk updates its state here: the window ends holding its last inputs.
// Longer ones leave the state to state_kernel, which runs after every chunk has read it.
template <int K>
__global__ void __launch_bounds__(kThreads) conv_kernel(ConvArgs a) {
    constexpr int H = K - 1;
    pdl_wait();  // launched to overlap the matmul before it: its launch is hidden (pdl.cuh)
    pdl_release();
    const int64_t c = int64_t(blockIdx.x) * kThreads + threadIdx.x;
    if (c >= a.channels) return;
    const SeqInfo si = a.seqs[blockIdx.y];
    const int t0 = int(blockIdx.z) * kChunk;
    if (t0 >= si.n_q) return;
    const int t1 = min(si.n_q, t0 + kChunk);
    float* state = a.state + int64_t(si.state_slot) * H * a.channels + c;
    float wc[K], win[K];
#pragma unroll
    for (int j = 0; j < K; ++j) wc[j] = a.w[c * K + j];
#pragma unroll
    for (int j = 0; j < H; ++j) {
        const int tok = t0 - H + j;
        win[j] = tok >= 0 ? a.x[(si.q_start + tok) * a.x_ld + c] : state[int64_t(H + tok) * a.channels];
    }
    for (int t = t0; t < t1; ++t) {
        const int64_t r = si.q_start + t;
        win[H] = a.x[r * a.x_ld + c];
        float acc = 0.0f;
#pragma unroll
        for (int j = 0; j < K; ++j) acc += wc[j] * win[j];
        a.y[r * a.y_ld + c] = acc / (1.0f + expf(-acc));
#pragma unroll
        for (int j = 0; j < H; ++j) win[j] = win[j + 1];
    }
    if (t0 == 0 && si.n_q <= kChunk) {
#pragma unroll
        for (int j = 0; j < H; ++j) state[int64_t(j) * a.channels] = win[j];
    }
}

// The state of a sequence longer than a chunk: its last kernel-1 inputs, all from x.
template <int K>
__global__ void __launch_bounds__(kThreads) state_kernel(ConvArgs a) {
    constexpr int H = K - 1;
    const int64_t c = int64_t(blockIdx.x) * kThreads + threadIdx.x;
    if (c >= a.channels) return;
    const SeqInfo si = a.seqs[blockIdx.y];
    if (si.n_q <= kChunk) return;
    float* state = a.state + int64_t(si.state_slot) * H * a.channels + c;
#pragma unroll
    for (int j = 0; j < H; ++j)
        state[int64_t(j) * a.channels] = a.x[(si.q_start + si.n_q - H + j) * a.x_ld + c];
}

template <int K>
void launch(const ConvArgs& a, int n_seqs, int chunks, bool long_seqs, bool overlap, cudaStream_t stream) {
    const unsigned cblocks = grid_for(a.channels, kThreads);
    NIWA_CUDA_CHECK(launch_overlapping(overlap, conv_kernel<K>,
                                       dim3(cblocks, unsigned(n_seqs), unsigned(chunks)), dim3(kThreads), 0,
                                       stream, a));
    if (!long_seqs) return;
    state_kernel<K><<<dim3(cblocks, unsigned(n_seqs)), kThreads, 0, stream>>>(a);
    NIWA_CUDA_LAUNCHED("conv1d_silu (state)");
}

}  // namespace

int check_conv_step(const char* op, int64_t rows, const GdnState& st, const StepInfo& step) {
    require(step.n_seqs == 0 || step.host_seqs != nullptr, op, "StepInfo::host_seqs is not set");
    int max_q = 0;
    for (int s = 0; s < step.n_seqs; ++s) {
        const SeqInfo& si = step.host_seqs[s];
        require(si.state_slot >= 0 && si.state_slot < st.n_slots, op,
                "sequence " + std::to_string(s) + " state slot " + std::to_string(si.state_slot) +
                    " outside " + std::to_string(st.n_slots));
        require(si.q_start >= 0 && si.n_q >= 0 && si.q_start + int64_t(si.n_q) <= rows, op,
                "sequence " + std::to_string(s) + " rows outside the step's " + std::to_string(rows));
        max_q = std::max(max_q, si.n_q);
    }
    return max_q;
}

void CudaOps::conv1d_silu(const Tensor& x, const float* w, int kernel, const GdnState& st,
                          const StepInfo& step, const Tensor& y) {
    const char* op = "conv1d_silu";
    require_f32(x, op, "x");
    require_f32(y, op, "y");
    require_same_shape(x, y, op);
    require(kernel >= 1 && kernel <= kMaxKernel, op,
            "kernel " + std::to_string(kernel) + "; the CUDA kernel takes 1.." + std::to_string(kMaxKernel));
    const int max_q = check_conv_step(op, x.rows, st, step);
    if (max_q == 0 || x.cols == 0) return;
    const ConvArgs a{x.as<float>(), x.ld, w, st.conv, x.cols, step.seqs, y.as<float>(), y.ld};
    const int chunks = (max_q + kChunk - 1) / kChunk;
    const bool long_seqs = max_q > kChunk;
    switch (kernel) {
        case 1:
            return launch<1>(a, step.n_seqs, chunks, long_seqs, overlap_launches(), stream_);
        case 2:
            return launch<2>(a, step.n_seqs, chunks, long_seqs, overlap_launches(), stream_);
        case 3:
            return launch<3>(a, step.n_seqs, chunks, long_seqs, overlap_launches(), stream_);
        case 4:
            return launch<4>(a, step.n_seqs, chunks, long_seqs, overlap_launches(), stream_);
        case 5:
            return launch<5>(a, step.n_seqs, chunks, long_seqs, overlap_launches(), stream_);
        case 6:
            return launch<6>(a, step.n_seqs, chunks, long_seqs, overlap_launches(), stream_);
        case 7:
            return launch<7>(a, step.n_seqs, chunks, long_seqs, overlap_launches(), stream_);
        default:
            return launch<8>(a, step.n_seqs, chunks, long_seqs, overlap_launches(), stream_);
    }
}

}  // namespace niwa::kernels::cuda
