// The sm_90a warpgroup mma (wgmma) as the decode kernels issue it: A (64 x 16 fp16, each warp of
// the warpgroup its 16 rows, in the registers and layout of mma.sync's m16n8k16 A fragment) times
// B (16 x N fp16, N = 8..32) read from shared memory through a descriptor, into N / 2 fp32
// accumulators a thread (thread (g, tig) of warp w: d[4 c + i] is row 16 w + g + 8 (i / 2),
// column 8 c + 2 tig + i % 2). Only code built for sm_90a has these instructions
// (__CUDA_ARCH_FEAT_SM90_ALL); elsewhere the wrappers are empty and a kernel using them must not run.
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

// d = (Acc ? d : 0) + A B, m64nNk16, fp16 inputs, fp32 accumulators.
template <int N, bool Acc>
__device__ __forceinline__ void wgmma_f16(float (&d)[N / 2], const uint32_t (&a)[4], uint64_t desc) {
#ifdef NIWA_WGMMA
    constexpr int kScaleD = Acc ? 1 : 0;
    if constexpr (N == 8) {
        asm volatile(
            "{\n.reg .pred p;\nsetp.ne.b32 p, %9, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%0,%1,%2,%3}, {%4,%5,%6,%7}, %8, p, 1, 1, "
            "0;\n}\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "n"(kScaleD)
            : "memory");
    } else if constexpr (N == 16) {
        asm volatile(
            "{\n.reg .pred p;\nsetp.ne.b32 p, %13, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {%0,%1,%2,%3,%4,%5,%6,%7}, {%8,%9,%10,%11}, "
            "%12, "
            "p, 1, 1, 0;\n}\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "n"(kScaleD)
            : "memory");
    } else if constexpr (N == 24) {
        asm volatile(
            "{\n.reg .pred p;\nsetp.ne.b32 p, %17, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n24k16.f32.f16.f16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11}, "
            "{%12,%13,%14,%15}, %16, p, 1, 1, 0;\n}\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
              "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "n"(kScaleD)
            : "memory");
    } else {
        static_assert(N == 32, "wgmma_f16: N is 8, 16, 24 or 32");
        asm volatile(
            "{\n.reg .pred p;\nsetp.ne.b32 p, %21, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16 "
            "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,"
            "%14,%15}, {%16,%17,%18,%19}, %20, p, 1, 1, 0;\n}\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
              "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]),
              "+f"(d[15])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "n"(kScaleD)
            : "memory");
    }
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
    if constexpr (N == 8) {
        asm volatile(
            "wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, %8, 1, 1, 1;\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc)
            : "memory");
    } else if constexpr (N == 16) {
        asm volatile(
            "wgmma.mma_async.sync.aligned.m64n16k8.f32.tf32.tf32 {%0,%1,%2,%3,%4,%5,%6,%7}, {%8,%9,%10,%11}, "
            "%12, 1, 1, 1;\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc)
            : "memory");
    } else if constexpr (N == 24) {
        asm volatile(
            "wgmma.mma_async.sync.aligned.m64n24k8.f32.tf32.tf32 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11}, "
            "{%12,%13,%14,%15}, %16, 1, 1, 1;\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
              "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc)
            : "memory");
    } else {
        static_assert(N == 32, "wgmma_tf32: N is 8, 16, 24 or 32");
        asm volatile(
            "wgmma.mma_async.sync.aligned.m64n32k8.f32.tf32.tf32 "
            "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,"
            "%14,%15}, {%16,%17,%18,%19}, %20, 1, 1, 1;\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
              "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]),
              "+f"(d[15])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc)
            : "memory");
    }
#else
    (void)d, (void)a, (void)desc;
#endif
}

}  // namespace niwa::kernels::cuda
