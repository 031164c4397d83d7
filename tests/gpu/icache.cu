// What does code the SMs have not run lately cost a launch? The decode matmul kernels are 60-125
// KB of sm_90a code each (readelf -SW on their cubins: the one-row split kernels 73-105 KB, the
// wgmma kernel 65-67 KB), much of it straight-line, and a decode step runs them between other
// kernels, so each launch may begin with its code out of the instruction caches, fetched from
// the L2 as the warps first reach it. (docs/BENCHMARKS.md, twenty-third pass: the wgmma kernel
// lost ~3.5 µs a call when two unrolled sums added 33 KB of code, run once a call; whether
// fetching that code was the loss is one thing this measures.)
//
// This times launches of kernels that are S KB of straight-line FFMA (16 bytes each; eight
// independent chains a thread so they issue back to back), each instruction run once by every
// warp of 2 blocks of 4 warps an SM:
//   warm  the same kernel again and again;
//   cold  C kernels of the same size and code in turn, C = 2, 4, 8, 16 (C x S KB of code run
//         between two launches of one copy).
// cold - warm is what fetching S KB from further out costs a launch; how it grows with C x S says
// how much code the caches between the SM and the L2 hold. A line of JSON a size. Built and run
// by tests/gpu/run.sh icache: nvcc -O3 -arch=sm_90a icache.cu.
#include <cuda_runtime.h>

#include "cuda_check.h"

#include <cstdio>
#include <cstdlib>
#include <utility>

namespace {

constexpr int kThreads = 128;
constexpr int kCopies = 16;  // the most copies a size
constexpr int kLaunches = 256;

// N FFMA in straight-line code (asm volatile: neither removed nor merged); Copy makes each
// instantiation a kernel of its own, at its own address.
template <int N, int Copy>
__global__ void __launch_bounds__(kThreads) straight_kernel(float a, float b, float* sink) {
    float acc[8];
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[j] = static_cast<float>(threadIdx.x + j + Copy);
#pragma unroll
    for (int i = 0; i < N; ++i)
        asm volatile("fma.rn.f32 %0, %0, %1, %2;" : "+f"(acc[i & 7]) : "f"(a), "f"(b));
    float s = 0.0f;
#pragma unroll
    for (int j = 0; j < 8; ++j) s += acc[j];
    if (s == 1234.5f) sink[threadIdx.x] = s;  // never true; keeps the chains live
}

using Kernel = void (*)(float, float, float*);

template <int N, int... C>
void fill(Kernel* k, std::integer_sequence<int, C...>) {
    ((k[C] = straight_kernel<N, C>), ...);
}

// µs a launch over kLaunches launches, taking the kernels k[0..n) in turn.
float time_launches(const Kernel* k, int n, dim3 grid, float* sink) {
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    for (int i = 0; i < n; ++i) k[i]<<<grid, kThreads>>>(1.0f, 0.5f, sink);  // loaded, run once
    CHECK(cudaEventRecord(start));
    for (int i = 0; i < kLaunches; ++i) k[i % n]<<<grid, kThreads>>>(1.0f, 0.5f, sink);
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    CHECK(cudaGetLastError());
    float ms = 0.0f;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(stop));
    return ms * 1000.0f / kLaunches;
}

// One line: the warm figure, then for C = 2, 4, ... Copies the cold one less the warm one.
template <int N, int Copies>
void measure(dim3 grid, float* sink) {
    Kernel k[Copies];
    fill<N>(k, std::make_integer_sequence<int, Copies>{});
    cudaFuncAttributes attr{};
    CHECK(cudaFuncGetAttributes(&attr, straight_kernel<N, 0>));
    const float warm = time_launches(k, 1, grid, sink);
    std::printf("{\"ffma\": %d, \"code_kb\": %.1f, \"registers\": %d, \"blocks\": %u, \"warm_us\": %.2f", N,
                N * 16 / 1024.0, attr.numRegs, grid.x, warm);
    for (int c = 2; c <= Copies; c *= 2)
        std::printf(", \"cold%d_minus_warm_us\": %.2f", c, time_launches(k, c, grid, sink) - warm);
    std::printf("}\n");
}

}  // namespace

int main() {
    cudaDeviceProp prop{};
    CHECK(cudaGetDeviceProperties(&prop, 0));
    float* sink = nullptr;
    CHECK(cudaMalloc(&sink, kThreads * sizeof(float)));
    const dim3 grid(2u * static_cast<unsigned>(prop.multiProcessorCount));
    std::fprintf(stderr, "%s, %d SMs; %d launches a figure, up to %d copies for cold\n", prop.name,
                 prop.multiProcessorCount, kLaunches, kCopies);
    measure<8, 16>(grid, sink);
    measure<1024, 16>(grid, sink);
    measure<2048, 16>(grid, sink);
    measure<4096, 16>(grid, sink);
    measure<6144, 16>(grid, sink);
    measure<8192, 8>(grid, sink);
    CHECK(cudaFree(sink));
    return 0;
}
