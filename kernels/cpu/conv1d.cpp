// conv1d_silu: GDN's causal depthwise convolution, continuing each sequence from its conv state
// conv[slot][kernel-1][channels] (oldest input first) and leaving its last kernel-1 inputs there.
#include <string>
#include <vector>

#include "kernels/cpu/cpu_ops.h"

namespace niwa::kernels::cpu {

void CpuOps::conv1d_silu(const Tensor& x, const float* w, int kernel, const GdnState& st,
                         const StepInfo& step, const Tensor& y) {
    require_f32(x, "conv1d_silu", "x");
    require_f32(y, "conv1d_silu", "y");
    require_same_shape(x, y, "conv1d_silu");
    require(kernel >= 1, "conv1d_silu", "kernel " + std::to_string(kernel));
    const int64_t channels = x.cols;
    const int hist = kernel - 1;
    for (int s = 0; s < step.n_seqs; ++s)
        require(step.seqs[s].state_slot >= 0 && step.seqs[s].state_slot < st.n_slots, "conv1d_silu",
                "sequence " + std::to_string(s) + " state slot " + std::to_string(step.seqs[s].state_slot) +
                    " outside " + std::to_string(st.n_slots));

    // One task per (sequence, channel): channels are independent, tokens run in order.
    pool_.parallel_for(
        step.n_seqs * channels,
        [&](int64_t i0, int64_t i1) {
            thread_local std::vector<float> window;
            window.resize(static_cast<size_t>(kernel));
            for (int64_t i = i0; i < i1; ++i) {
                const SeqInfo& si = step.seqs[i / channels];
                const int64_t c = i % channels;
                float* state = st.conv + static_cast<int64_t>(si.state_slot) * hist * channels;
                const float* wc = w + c * kernel;
                for (int j = 0; j < hist; ++j) window[j] = state[j * channels + c];
                for (int t = 0; t < si.n_q; ++t) {
                    const int64_t r = si.q_start + t;
                    window[hist] = row_f32(x, r)[c];
                    float acc = 0.0f;
                    for (int j = 0; j < kernel; ++j) acc += wc[j] * window[j];
                    row_f32(y, r)[c] = silu(acc);
                    for (int j = 0; j < hist; ++j) window[j] = window[j + 1];
                }
                for (int j = 0; j < hist; ++j) state[j * channels + c] = window[j];
            }
        },
        256);
}

}  // namespace niwa::kernels::cpu
