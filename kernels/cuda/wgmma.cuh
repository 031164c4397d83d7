// The sm_90a warpgroup mma (wgmma) as the decode kernels issue it: A (64 x 16 fp16, each warp of
// the warpgroup its 16 rows, in the registers and layout of mma.sync's m16n8k16 A fragment) times
// B (16 x N fp16, N = 8..32) read from shared memory through a descriptor, into N / 2 fp32
// accumulators a thread (thread (g, tig) of warp w: d[4 c + i] is row 16 w + g + 8 (i / 2),
// column 8 c + 2 tig + i % 2); and the same with tf32 inputs, k8 (wgmma_tf32: the bias sums' share of
// a tile-slice). Only code built for sm_90a has these instructions (__CUDA_ARCH_FEAT_SM90_ALL);
// elsewhere the wrappers are empty and a kernel using them must not run.
#pragma once

#include <cstdint>

#include "kernels/cuda/mma.cuh"

namespace niwa::kernels::cuda {

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define NIWA_WGMMA 1
#endif

// Orders this thread's register writes before the wgmma that read them (and its reads of an
// accumulator before the wgmma that write it).
__device__ __forceinline__ void wgmma_fence() {
#ifdef NIWA_WGMMA
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#endif
}

__device__ __forceinline__ void wgmma_commit() {
#ifdef NIWA_WGMMA
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#endif
}

// Waits until at most N committed groups are in flight (their registers may then be touched).
template <int N>
__device__ __forceinline__ void wgmma_wait() {
#ifdef NIWA_WGMMA
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
#endif
}

// Generic-proxy stores to shared memory made visible to the wgmma that read it (then a barrier).
__device__ __forceinline__ void fence_async_shared() {
#ifdef NIWA_WGMMA
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}

// Pins accumulators in their registers across the wgmma that use them: without it the compiler may
// reuse them (a wgmma that overwrites them reads them as far as it knows), and ptxas then
// serialises every wgmma of the kernel.
template <int N>
__device__ __forceinline__ void wgmma_fence_operands(float (&d)[N]) {
#pragma unroll
    for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// A K-major operand in shared memory without swizzle, from `p` (16-byte aligned): core matrices
// of 8 rows x 16 bytes (row r at 16 r), `k_stride` bytes apart along K and `n_stride` along N.
__device__ __forceinline__ uint64_t wgmma_desc(const void* p, uint32_t k_stride, uint32_t n_stride) {
    const uint32_t addr = smem_addr(p);
    return static_cast<uint64_t>((addr & 0x3FFFF) >> 4) | (static_cast<uint64_t>(k_stride >> 4) << 16) |
           (static_cast<uint64_t>(n_stride >> 4) << 32);
}

// One register-A wgmma m64nN of N = 8, 16, 24 or 32 into d (N / 2 accumulators a thread) from a,
// desc and the scale-d immediate kScaleD: TYPES is what follows the shape's N ("k16.f32.f16.f16"),
// TAIL what follows imm-scale-b (an fp16 B's imm-trans-b; nothing for tf32).
// clang-format off
#define NIWA_WGMMA_PRED(n) "{\n.reg .pred p;\nsetp.ne.b32 p, %" #n ", 0;\n"
#define NIWA_WGMMA_IN "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "n"(kScaleD)
#define NIWA_WGMMA_D8 "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
#define NIWA_WGMMA_D16 NIWA_WGMMA_D8, "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
#define NIWA_WGMMA_D24 NIWA_WGMMA_D16, "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11])
#define NIWA_WGMMA_D32 NIWA_WGMMA_D24, "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
#define NIWA_WGMMA_RS(TYPES, TAIL)                                                                           \
    if constexpr (N == 8) {                                                                                  \
        asm volatile(NIWA_WGMMA_PRED(9) "wgmma.mma_async.sync.aligned.m64n8" TYPES                           \
                                        " {%0,%1,%2,%3}, {%4,%5,%6,%7}, %8, p, 1, 1" TAIL ";\n}\n"           \
                     : NIWA_WGMMA_D8 : NIWA_WGMMA_IN                                                         \
                     : "memory");                                                                            \
    } else if constexpr (N == 16) {                                                                          \
        asm volatile(NIWA_WGMMA_PRED(13) "wgmma.mma_async.sync.aligned.m64n16" TYPES                         \
                                         " {%0,%1,%2,%3,%4,%5,%6,%7}, {%8,%9,%10,%11}, %12, p, 1, 1" TAIL    \
                                         ";\n}\n"                                                            \
                     : NIWA_WGMMA_D16 : NIWA_WGMMA_IN                                                        \
                     : "memory");                                                                            \
    } else if constexpr (N == 24) {                                                                          \
        asm volatile(NIWA_WGMMA_PRED(17) "wgmma.mma_async.sync.aligned.m64n24" TYPES                         \
                                         " {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11}, {%12,%13,%14,%15}, "     \
                                         "%16, p, 1, 1" TAIL ";\n}\n"                                        \
                     : NIWA_WGMMA_D24 : NIWA_WGMMA_IN                                                        \
                     : "memory");                                                                            \
    } else {                                                                                                 \
        static_assert(N == 32, "a wgmma's N is 8, 16, 24 or 32");                                            \
        asm volatile(NIWA_WGMMA_PRED(21) "wgmma.mma_async.sync.aligned.m64n32" TYPES                         \
                                         " {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15}, "        \
                                         "{%16,%17,%18,%19}, %20, p, 1, 1" TAIL ";\n}\n"                     \
                     : NIWA_WGMMA_D32 : NIWA_WGMMA_IN                                                        \
                     : "memory");                                                                            \
    }
// clang-format on

// d = (Acc ? d : 0) + A B, m64nNk16, fp16 inputs, fp32 accumulators.
template <int N, bool Acc>
__device__ __forceinline__ void wgmma_f16(float (&d)[N / 2], const uint32_t (&a)[4], uint64_t desc) {
#ifdef NIWA_WGMMA
    constexpr int kScaleD = Acc ? 1 : 0;
    NIWA_WGMMA_RS("k16.f32.f16.f16", ", 0")
#else
    (void)d, (void)a, (void)desc;
#endif
}

// d += A B, m64nNk8, tf32 inputs (fp32 bits whose low 13 the tensor cores ignore), fp32
// accumulators as wgmma_f16's. A: 64 x 8 in registers, each warp its 16 rows, thread (g, tig) of a
// warp a[0] (row g, column tig), a[1] (g + 8, tig), a[2] (g, tig + 4), a[3] (g + 8, tig + 4); B: 8 x N
// from shared memory through a descriptor.
template <int N>
__device__ __forceinline__ void wgmma_tf32(float (&d)[N / 2], const uint32_t (&a)[4], uint64_t desc) {
#ifdef NIWA_WGMMA
    constexpr int kScaleD = 1;
    NIWA_WGMMA_RS("k8.f32.tf32.tf32", "")
#else
    (void)d, (void)a, (void)desc;
#endif
}
#undef NIWA_WGMMA_RS
#undef NIWA_WGMMA_D32
#undef NIWA_WGMMA_D24
#undef NIWA_WGMMA_D16
#undef NIWA_WGMMA_D8
#undef NIWA_WGMMA_IN
#undef NIWA_WGMMA_PRED

}  // namespace niwa::kernels::cuda
