// Could a decode matmul's K slices meet inside a thread block cluster instead of through the L2?
// Two things decide it (docs/BENCHMARKS.md, forty-sixth pass):
//   places  how many clusters of C blocks of the wgmma decode kernel's footprint (384 threads,
//           157.5 KB of dynamic shared memory: one block an SM) the GPU holds at once
//           (cudaOccupancyMaxActiveClusters), so how many SMs a one-wave launch of C-slice
//           clusters keeps busy: a cluster's blocks share a GPC, and GPCs do not divide by C;
//   sync    what one round of the cluster barrier (barrier.cluster arrive.release / wait.acquire)
//           costs 24 clusters of C blocks, against one round of what the decode kernels do now to
//           meet (sum_slices: a block barrier, thread 0's atom.acq_rel.gpu on its group's
//           counter, a block barrier) in 130 blocks, each alone on an SM.
// A line of JSON a measurement. Built and run by tests/gpu/run.sh clusters:
// nvcc -O3 -arch=sm_90a -I. clusters.cu.
#include <cuda_runtime.h>

#include "cuda_check.h"
#include "kernels/cuda/wait_bound.cuh"

#include <cstdint>
#include <cstdio>

namespace {

using niwa::kernels::cuda::globaltimer_ns;

constexpr int kThreads = 384;
constexpr size_t kSmem = 157 * 1024 + 512;
constexpr int kRounds = 10000;
constexpr int kClusters = 24;
constexpr int kBlocks = 130;

// Only queried, never launched: its footprint is the launch configuration's.
__global__ void __launch_bounds__(kThreads, 1) footprint() {}

__global__ void cluster_rounds(uint64_t* ns) {
    const uint64_t t0 = globaltimer_ns();
    for (int r = 0; r < kRounds; ++r)
        asm volatile(
            "barrier.cluster.arrive.release.aligned;\n"
            "barrier.cluster.wait.acquire.aligned;" ::
                : "memory");
    if (threadIdx.x == 0 && blockIdx.x == 0) *ns = globaltimer_ns() - t0;
}

// A block alone on its SM by the grid (130 blocks, 132 SMs), as the wgmma kernel's are by its
// shared memory.
__global__ void __launch_bounds__(kThreads) counter_rounds(unsigned* counters, uint64_t* ns) {
    const uint64_t t0 = globaltimer_ns();
    for (int r = 0; r < kRounds; ++r) {
        __syncthreads();
        if (threadIdx.x == 0) {
            // Returned, as sum_slices' count is (asm volatile: never removed though unread).
            [[maybe_unused]] unsigned prev;
            asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;"
                         : "=r"(prev)
                         : "l"(counters + blockIdx.x)
                         : "memory");
        }
        __syncthreads();
    }
    if (threadIdx.x == 0 && blockIdx.x == 0) *ns = globaltimer_ns() - t0;
}

cudaLaunchConfig_t clustered(dim3 grid, size_t smem, int c, cudaLaunchAttribute* attr) {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = grid;
    cfg.blockDim = dim3(kThreads);
    cfg.dynamicSmemBytes = smem;
    attr->id = cudaLaunchAttributeClusterDimension;
    attr->val.clusterDim.x = static_cast<unsigned>(c);
    attr->val.clusterDim.y = 1;
    attr->val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    return cfg;
}

double per_round(const uint64_t* ns) {
    uint64_t h = 0;
    CHECK(cudaMemcpy(&h, ns, sizeof h, cudaMemcpyDeviceToHost));
    return static_cast<double>(h) / kRounds;
}

}  // namespace

int main() {
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    std::printf("{\"gpu\": \"%s\", \"sms\": %d}\n", prop.name, prop.multiProcessorCount);
    CHECK(cudaFuncSetAttribute(footprint, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               static_cast<int>(kSmem)));
    CHECK(cudaFuncSetAttribute(footprint, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    for (const int c : {1, 2, 3, 4, 5, 6, 7, 8, 16}) {
        cudaLaunchAttribute attr;
        const cudaLaunchConfig_t cfg = clustered(dim3(c), kSmem, c, &attr);
        int n = 0;
        CHECK(cudaOccupancyMaxActiveClusters(&n, footprint, &cfg));
        std::printf(
            "{\"places\": \"one block an SM\", \"cluster_blocks\": %d, \"clusters\": %d, \"sms_busy\": %d}\n",
            c, n, n * c);
    }
    uint64_t* ns = nullptr;
    unsigned* counters = nullptr;
    CHECK(cudaMalloc(&ns, sizeof *ns));
    CHECK(cudaMalloc(&counters, kBlocks * sizeof *counters));
    CHECK(cudaMemset(counters, 0, kBlocks * sizeof *counters));
    for (int rep = 0; rep < 2; ++rep) {
        for (const int c : {5, 6}) {
            cudaLaunchAttribute attr;
            const cudaLaunchConfig_t cfg = clustered(dim3(c * kClusters), 0, c, &attr);
            CHECK(cudaLaunchKernelEx(&cfg, cluster_rounds, ns));
            CHECK(cudaDeviceSynchronize());
            std::printf(
                "{\"sync\": \"cluster barrier\", \"cluster_blocks\": %d, \"clusters\": %d, \"ns_a_round\": "
                "%.0f}\n",
                c, kClusters, per_round(ns));
        }
        counter_rounds<<<kBlocks, kThreads>>>(counters, ns);
        CHECK(cudaGetLastError());
        CHECK(cudaDeviceSynchronize());
        std::printf(
            "{\"sync\": \"block barrier, atom.acq_rel.gpu, block barrier\", \"blocks\": %d, \"ns_a_round\": "
            "%.0f}\n",
            kBlocks, per_round(ns));
    }
    CHECK(cudaFree(ns));
    CHECK(cudaFree(counters));
    return 0;
}
