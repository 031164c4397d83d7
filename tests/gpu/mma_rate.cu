// How many m16n8k16 fp16 mma (fp32 accumulate: the decode matmuls' instruction,
// kernels/cuda/mma.cuh) can an SM issue, by warps an SM and independent accumulator chains a warp?
// The decode matmuls do one such mma per 256 weights: 64 per 16 x 1024 tile-slice, so an SM
// streaming its share of the copy rate (~32 GB/s, ~7.5 tile-slices a µs) needs ~480 a µs. The
// kernels: `mma` (chains of mma only), `decode` (each mma fed as the decode kernels feed it:
// four LOP3s building its A fragment from two code words, one shared-memory load of x, and per
// iteration a shift of each word and its next value) and `decode_no_load` (the same with x in
// registers, no shared-memory load); on sm_90, also `wgmma_decode` (the warpgroup mma with
// the decoded fragment as its register operand and x read from shared memory by descriptor; one
// counts as a warp's m16n8k16). Prints one JSON line per configuration: mma per µs per SM.
// Built and run by tests/gpu/run.sh mma_rate: nvcc -O3 -arch=sm_90a -I. mma_rate.cu (the mma as the
// kernels issue it, from kernels/cuda/mma.cuh).
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>

#include "kernels/cuda/mma.cuh"

namespace {

using niwa::kernels::cuda::mma_f16;

constexpr int kIters = 4096;

__device__ __forceinline__ uint32_t lop(uint32_t w, uint32_t m, uint32_t o) {
    uint32_t r;
    asm volatile("lop3.b32 %0, %1, %2, %3, 0xEA;" : "=r"(r) : "r"(w), "r"(m), "r"(o));
    return r;
}

// The sm_90a warpgroup mma with its A operand (64 x 16 weights, a warp's 16 rows) in registers and
// B (x: 16 x 8) read from shared memory through a descriptor: no load instruction per mma. Only
// its rate is measured here: B's descriptor points at 256 bytes of shared memory (no swizzle,
// core matrices 128 bytes apart), whatever they hold.
__device__ __forceinline__ void wgmma_fence() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#endif
}

__device__ __forceinline__ void wgmma_commit_and_wait() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
#endif
}

__device__ __forceinline__ void wgmma(float (&c)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
                                      uint64_t desc) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile(
        "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%0,%1,%2,%3}, {%4,%5,%6,%7}, %8, 1, 1, 1, 0;\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(desc)
        : "memory");
#else
    (void)c, (void)a0, (void)a1, (void)a2, (void)a3, (void)desc;
#endif
}

__device__ __forceinline__ uint64_t smem_desc(const void* p) {
    const auto addr = static_cast<uint64_t>(static_cast<uint32_t>(__cvta_generic_to_shared(p)));
    return ((addr & 0x3FFFF) >> 4) | (uint64_t{128 >> 4} << 16) | (uint64_t{256 >> 4} << 32);
}

enum Mode { kBare, kDecode, kDecodeNoLoad, kWgmmaDecode };

template <int C, Mode M>
__global__ void rate_kernel(float* out, uint32_t seed) {
    __shared__ __align__(128) uint2 xs[256];
    xs[threadIdx.x % 256] = make_uint2(seed * threadIdx.x, seed ^ threadIdx.x);
    __syncthreads();
    float c[C][4] = {};
    // Two code words (rows g and g + 8), new each iteration; pair masks as the decode kernels
    // hold them in registers.
    uint32_t wa = seed + threadIdx.x, wb = seed * 3 + threadIdx.x, o = 0x64006400u;
    uint32_t m[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) m[k] = 0x00030003u << (2 * k);
    const int lane = threadIdx.x & 31;
    const uint64_t desc = smem_desc(xs);
    for (int i = 0; i < kIters; ++i) {
        // One shift a word per iteration (the kernels shift a word once for its pairs 5-7).
        const uint32_t sa = wa >> 10, sb = wb >> 10;
        if constexpr (M == kWgmmaDecode) {
            // C A fragments decoded, one fence, C warpgroup mma in flight on their own
            // accumulators, then waited for (their A registers are read asynchronously until then;
            // a fence between a register's write and the mma reading it, so one for all of them).
            uint32_t f[C][4];
#pragma unroll
            for (int k = 0; k < C; ++k) {
                const uint32_t a = k & 1 ? sa : wa, b = k & 1 ? sb : wb;
                f[k][0] = lop(a, m[k & 3], o);
                f[k][1] = lop(b, m[k & 3], o);
                f[k][2] = lop(a, m[(k + 1) & 3], o);
                f[k][3] = lop(b, m[(k + 1) & 3], o);
            }
            wgmma_fence();
#pragma unroll
            for (int k = 0; k < C; ++k) wgmma(c[k], f[k][0], f[k][1], f[k][2], f[k][3], desc);
            wgmma_commit_and_wait();
        } else {
#pragma unroll
            for (int k = 0; k < C; ++k) {
                if constexpr (M != kBare) {
                    const uint32_t a = k & 1 ? sa : wa, b = k & 1 ? sb : wb;
                    const uint2 x = M == kDecode ? xs[(i * C + k + lane / 4) & 255] : make_uint2(o, lane);
                    mma_f16(c[k], lop(a, m[k & 3], o), lop(b, m[k & 3], o), lop(a, m[(k + 1) & 3], o),
                            lop(b, m[(k + 1) & 3], o), x.x, x.y);
                } else {
                    mma_f16(c[k], wa, wa + 1, wb, wb + 1, o, o);
                }
            }
        }
        wa = wa * 1664525u + 1013904223u;
        wb = wb * 22695477u + 1u;
    }
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < C; ++k) s += c[k][0] + c[k][1] + c[k][2] + c[k][3];
    if (s == 1.2345f) out[threadIdx.x] = s;  // never: keeps the chains live
}

const char* const kModeNames[] = {"mma", "decode", "decode_no_load", "wgmma_decode"};

template <int C, Mode M>
void run(int sms, int warps_per_sm, float* out) {
    // Blocks of up to 8 warps, enough of them for warps_per_sm on every SM (one wave).
    const int block_warps = warps_per_sm < 8 ? warps_per_sm : 8;
    const int blocks = sms * (warps_per_sm / block_warps);
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    rate_kernel<C, M><<<blocks, block_warps * 32>>>(out, 1);
    cudaEventRecord(a);
    rate_kernel<C, M><<<blocks, block_warps * 32>>>(out, 2);
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms = 0.0f;
    cudaEventElapsedTime(&ms, a, b);
    const double per_sm = static_cast<double>(warps_per_sm) * kIters * C / (ms * 1e3);
    std::printf("{\"kernel\": \"%s\", \"warps_per_sm\": %d, \"chains\": %d, \"mma_per_us_per_sm\": %.1f}\n",
                kModeNames[M], warps_per_sm, C, per_sm);
    cudaEventDestroy(a);
    cudaEventDestroy(b);
}

template <Mode M>
void sweep(int sms, float* out) {
    for (const int w : {4, 8, 16, 32}) {
        run<1, M>(sms, w, out);
        run<2, M>(sms, w, out);
        run<4, M>(sms, w, out);
        run<8, M>(sms, w, out);
    }
}

}  // namespace

int main() {
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    float* out = nullptr;
    cudaMalloc(&out, 1024 * sizeof(float));
    sweep<kBare>(prop.multiProcessorCount, out);
    sweep<kDecode>(prop.multiProcessorCount, out);
    sweep<kDecodeNoLoad>(prop.multiProcessorCount, out);
    if (prop.major == 9) sweep<kWgmmaDecode>(prop.multiProcessorCount, out);  // built for sm_90a
    cudaFree(out);
    const cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) {
        std::fprintf(stderr, "mma_rate: %s\n", cudaGetErrorString(err));
        return 1;
    }
    return 0;
}
