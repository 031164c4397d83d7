// Shared by the paged-attention files (attention.cu plans; attention_decode.cu,
// attention_prefill.cu and attention_prefill_mma.cu launch): launch parameters passed by value,
// and the device helpers that read KV pool rows of any pool type into fp32. C++17, included by
// .cu files only.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include "kernels/cuda/cuda_ops.h"
#include "kernels/cuda/mma.cuh"

namespace niwa::kernels::cuda::attn {

// A GQA group: up to kMaxGroup query heads reading one KV head, handled by one block so the
// KV rows are read once for all of them. A KV head with more query heads is split.
constexpr int kMaxGroup = 6;  // 27B's group; a larger one costs one more read of the KV head
constexpr int kMaxGroups = 64;

struct HeadGroups {
    int n = 0;
    int16_t kv[kMaxGroups];
    int8_t count[kMaxGroups];
    int16_t head[kMaxGroups][kMaxGroup];
};

// What every attention kernel reads: q/out views, the pool, the step's device tables.
struct AttnArgs {
    const float* q = nullptr;
    float* out = nullptr;
    int64_t q_ld = 0, out_ld = 0;
    const void* k = nullptr;
    const void* v = nullptr;
    int block_tokens = 0;
    int n_kv_heads = 0;
    const SeqInfo* seqs = nullptr;
    const int32_t* block_tables = nullptr;
    float scale = 1.0f;
    bool settled = false;  // CudaOps::reads_early: the tensor-core decode loads cached tokens early
};

// Decode: one entry per query row, split-K over its cached tokens in `n_splits` parts (at most
// kMaxDecodeSplits, what the combine pass merges: two a lane of one warp).
constexpr int kMaxDecodeEntries = 192;
constexpr int kMaxDecodeSplits = 64;
struct DecodeEntries {
    int n = 0;
    int n_splits = 1;
    int32_t seq[kMaxDecodeEntries];
    int32_t row[kMaxDecodeEntries];  // row within the sequence
};

// Split-K partials: acc [entry][split][n_q_heads][D], ml [entry][split][n_q_heads][2].
struct Partials {
    float* acc = nullptr;
    float* ml = nullptr;
    int n_q_heads = 0;
};

// Prefill: one entry per sequence; its query tiles (of (token, head-in-group) rows) are
// blocks tile_start[e] .. tile_start[e + 1] - 1 of the grid's x.
constexpr int kMaxPrefillEntries = 256;
struct PrefillEntries {
    int n = 0;
    int32_t seq[kMaxPrefillEntries];
    int32_t tile_start[kMaxPrefillEntries + 1];
};
constexpr int kPrefillRows = 32;  // query rows of an fp32 kernel's tile
constexpr int kPrefillKeys = 32;  // keys of an fp32 kernel's KV tile

template <typename T>
__device__ __forceinline__ float to_f32(T x);
template <>
__device__ __forceinline__ float to_f32(float x) {
    return x;
}
template <>
__device__ __forceinline__ float to_f32(__half x) {
    return __half2float(x);
}
template <>
__device__ __forceinline__ float to_f32(__nv_bfloat16 x) {
    return __bfloat162float(x);
}

// The pool's element type and geometry checked for `op` (attention.cu).
void check_pool(const KvLayer& kv, const char* op);

// f(T{}) for the pool's element type T (F16: __half, BF16: __nv_bfloat16, else float; check_pool
// admits only these).
template <typename F>
decltype(auto) with_pool_element(DType type, F&& f) {
    switch (type) {
        case DType::F16:
            return f(__half{});
        case DType::BF16:
            return f(__nv_bfloat16{});
        default:
            return f(float{});
    }
}

// An fp32 value as a pool element (round to nearest even).
template <typename T>
__device__ __forceinline__ T from_f32(float x);
template <>
__device__ __forceinline__ float from_f32(float x) {
    return x;
}
template <>
__device__ __forceinline__ __half from_f32(float x) {
    return __float2half_rn(x);
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_f32(float x) {
    return __float2bfloat16_rn(x);
}

// N consecutive pool elements at p (aligned to N * sizeof(T)) as fp32, in one load.
template <typename T, int N>
__device__ __forceinline__ void load_f32(const T* p, float* out) {
    constexpr int kBytes = N * int(sizeof(T));
    static_assert(kBytes == 2 || kBytes == 4 || kBytes == 8 || kBytes == 16, "one load of 2..16 bytes");
    alignas(16) T v[N];
    if constexpr (kBytes == 16)
        *reinterpret_cast<uint4*>(v) = __ldg(reinterpret_cast<const uint4*>(p));
    else if constexpr (kBytes == 8)
        *reinterpret_cast<uint2*>(v) = __ldg(reinterpret_cast<const uint2*>(p));
    else if constexpr (kBytes == 4)
        *reinterpret_cast<unsigned*>(v) = __ldg(reinterpret_cast<const unsigned*>(p));
    else
        v[0] = p[0];
#pragma unroll
    for (int i = 0; i < N; ++i) out[i] = to_f32(v[i]);
}

// The tensor-core kernels' mma operand type: the pool's own (K and V reach the tensor cores
// unconverted; Q and P are rounded to it).
template <typename T>
struct Operand;
template <>
struct Operand<__half> {
    static __device__ __forceinline__ uint32_t pack(float lo, float hi) { return f16x2_bits(lo, hi); }
    static __device__ __forceinline__ void mma(float (&c)[4], const uint32_t (&a)[4], uint32_t b0,
                                               uint32_t b1) {
        mma_f16(c, a[0], a[1], a[2], a[3], b0, b1);
    }
};
template <>
struct Operand<__nv_bfloat16> {
    static __device__ __forceinline__ uint32_t pack(float lo, float hi) {
        const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
        return *reinterpret_cast<const uint32_t*>(&v);
    }
    static __device__ __forceinline__ void mma(float (&c)[4], const uint32_t (&a)[4], uint32_t b0,
                                               uint32_t b1) {
        mma_bf16(c, a[0], a[1], a[2], a[3], b0, b1);
    }
};

// Calls f(std::integral_constant<int, D>{}) for head_dim d: the kernels take 64, 128 and 256.
template <typename F>
void with_head_dim(int d, F&& f) {
    switch (d) {
        case 64:
            return f(std::integral_constant<int, 64>{});
        case 128:
            return f(std::integral_constant<int, 128>{});
        case 256:
            return f(std::integral_constant<int, 256>{});
        default:
            require(false, "attention",
                    "head_dim " + std::to_string(d) + " (the CUDA kernels take 64, 128, 256)");
    }
}

// Offset of cached token j of a sequence, KV head kvh, in pool elements.
__device__ __forceinline__ int64_t pool_offset(const AttnArgs& a, const SeqInfo& si, int j, int kvh, int d) {
    const int64_t block = a.block_tables[si.table_start + j / a.block_tokens];
    const int64_t slot = block * a.block_tokens + j % a.block_tokens;
    return (slot * a.n_kv_heads + kvh) * d;
}

// Launchers (host): T is float, __half or __nv_bfloat16; d is 64, 128 or 256.
template <typename T>
void launch_decode(const AttnArgs& a, const HeadGroups& g, const DecodeEntries& e, const Partials& p, int d,
                   cudaStream_t stream);
// The tensor-core decode (Precision::Mixed, T __half or __nv_bfloat16): the same entries,
// splits and partials as launch_decode.
// `overlap`: launched to overlap the kernel before it (pdl.cuh).
template <typename T>
void launch_decode_mma(const AttnArgs& a, const HeadGroups& g, const DecodeEntries& e, const Partials& p,
                       int d, bool overlap, cudaStream_t stream);
// Blocks of the decode kernel (the tensor-core one when `tensor`) an SM of ops' device holds at
// once (asked once a device: blocks_per_sm).
template <typename T>
int decode_blocks_per_sm(const CudaOps& ops, int d, bool tensor);
// Merges the splits' partials (at most kMaxDecodeSplits; d at most 256) into the output rows.
void launch_decode_combine(const AttnArgs& a, const DecodeEntries& e, const Partials& p, int d, bool overlap,
                           cudaStream_t stream);
template <typename T>
void launch_prefill(const AttnArgs& a, const HeadGroups& g, const PrefillEntries& e, int d,
                    cudaStream_t stream);

// The tensor-core prefill (Precision::Mixed, T __half or __nv_bfloat16): its tiles' query rows
// at head_dim d on ops' device (the rows whose kernel's shared memory, static included, a block
// may have), and its launcher for entries planned with tiles of that many rows.
template <typename T>
int prefill_mma_rows(const CudaOps& ops, int d);
template <typename T>
void launch_prefill_mma(const AttnArgs& a, const HeadGroups& g, const PrefillEntries& e, int d, int rows,
                        cudaStream_t stream);

}  // namespace niwa::kernels::cuda::attn
