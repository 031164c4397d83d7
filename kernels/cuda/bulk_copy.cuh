// The sm_90 bulk copy engine (cp.async.bulk, the TMA without a tensor map) and the shared-memory
// barriers (mbarrier) that count its bytes: one thread asks for a contiguous global range to land
// in shared memory, and every thread waits on the barrier's phase. Outside sm_90 code the
// wrappers are empty and a kernel using them must not run.
#pragma once

#include <cstdint>

#include "kernels/cuda/mma.cuh"

namespace niwa::kernels::cuda {

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define NIWA_BULK_COPY 1
#endif

// A barrier of `Count` arrivals a phase (by default one: the thread that asks for the copy), made
// visible to the copy engine; the block synchronises before any other thread waits on it.
template <unsigned Count = 1>
__device__ __forceinline__ void mbarrier_init(uint64_t* bar) {
#ifdef NIWA_BULK_COPY
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "n"(Count) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
#else
    (void)bar;
#endif
}

// One arrival on the barrier's current phase, without bytes to wait for.
__device__ __forceinline__ void mbarrier_arrive(uint64_t* bar) {
#ifdef NIWA_BULK_COPY
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_addr(bar)) : "memory");
#else
    (void)bar;
#endif
}

// One arrival on the barrier's current phase that also makes it wait for `bytes` more to land
// (the bulk copies that follow name the barrier).
__device__ __forceinline__ void mbarrier_arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
#ifdef NIWA_BULK_COPY
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)), "r"(bytes)
                 : "memory");
#else
    (void)bar, (void)bytes;
#endif
}

// `bytes` (a multiple of 16, both ends 16-byte aligned) from global `src` to shared `dst`, counted
// on the barrier as they land; a phase expecting them (mbarrier_arrive_expect_tx) completes when
// all have landed.
__device__ __forceinline__ void bulk_copy_async(void* dst, const void* src, uint32_t bytes, uint64_t* bar) {
#ifdef NIWA_BULK_COPY
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
            smem_addr(dst)),
        "l"(src), "r"(bytes), "r"(smem_addr(bar))
        : "memory");
#else
    (void)dst, (void)src, (void)bytes, (void)bar;
#endif
}

// One bulk copy and its arrival: the barrier's phase completes when the bytes have landed. Called
// by one thread.
__device__ __forceinline__ void bulk_copy_to_shared(void* dst, const void* src, uint32_t bytes,
                                                    uint64_t* bar) {
    mbarrier_arrive_expect_tx(bar, bytes);
    bulk_copy_async(dst, src, bytes, bar);
}

// Waits until the barrier's phase of parity `parity` (0 for its first, 1 for its second, ...)
// has completed.
__device__ __forceinline__ void mbarrier_wait(uint64_t* bar, uint32_t parity) {
#ifdef NIWA_BULK_COPY
    uint32_t done = 0;
    while (!done)
        asm volatile(
            "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, "
            "p;\n}\n"
            : "=r"(done)
            : "r"(smem_addr(bar)), "r"(parity)
            : "memory");
#else
    (void)bar, (void)parity;
#endif
}

// Generic-proxy stores to global memory made visible to a later bulk copy that reads them.
__device__ __forceinline__ void fence_async_global() {
#ifdef NIWA_BULK_COPY
    asm volatile("fence.proxy.async.global;" ::: "memory");
#endif
}

}  // namespace niwa::kernels::cuda
