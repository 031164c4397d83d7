// Timings of single ops on synthetic decode steps, for `niwa-engine bench`: seconds per call,
// measured with CUDA events on the backend's stream after a warm-up call. `ops` must be the
// CUDA backend (make_cuda_ops); anything else throws std::invalid_argument.
#pragma once

#include <functional>

#include "kernels/ops.h"

namespace niwa::kernels::cuda {

class CudaOps;

// Seconds per call of f, which enqueues work on ops' stream: CUDA events around `iters` calls,
// after one warm-up call.
double time_calls(CudaOps& ops, int iters, const std::function<void()>& f);

// Paged attention (a `pool` F32 or F16 pool, 16-token blocks) for `batch` sequences decoding one
// token each after `context` - 1 cached ones; query head h reads KV head h / (n_q_heads / n_kv_heads).
double time_attention_decode(Ops& ops, int batch, int context, int n_q_heads, int n_kv_heads, int head_dim,
                             int iters, DType pool = DType::F32);

// The recurrent gated delta rule for `batch` sequences decoding one token each, every value
// head's dk x dv fp32 state read and written once; value head h reads key head h % n_k_heads.
double time_gdn_decode(Ops& ops, int batch, int n_v_heads, int n_k_heads, int dk, int dv, int iters);

// Prefill forms: `batch` sequences of n_tokens new tokens each from an empty cache on an F16
// pool (attention tiles) / a random state (the chunked delta rule).
double time_attention_prefill(Ops& ops, int batch, int n_tokens, int n_q_heads, int n_kv_heads, int head_dim,
                              int iters);
double time_gdn_prefill(Ops& ops, int batch, int n_tokens, int n_v_heads, int n_k_heads, int dk, int dv,
                        int iters);

}  // namespace niwa::kernels::cuda
