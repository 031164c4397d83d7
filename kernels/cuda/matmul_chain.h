// One-row ternary matmuls run in order inside one persistent kernel (matmul_chain.cu): the first
// piece of a batch-1 decode step as one kernel (docs/BENCHMARKS.md, thirtieth pass). Each link
// waits for the one before at a grid-wide barrier instead of a kernel boundary, its first weights
// already loading; its x is the link before's partial sums, summed as it is staged, or a vector of
// its own. The arithmetic is the register decode kernel's with x in int8 (matmul_decode_x8.cuh,
// CudaOps::decode_x8), in its order: each link's y is bit for bit what CudaOps::matmul gives at one
// row of x with decode_x8 on. C++17 (included by .cu files and by the tests and the bench).
#pragma once

#include <cstddef>
#include <vector>

#include "kernels/ops.h"

namespace niwa::kernels::cuda {

class CudaOps;

// y = w x at one row of x: w PQ2_0T (whole runs of 1024 inputs and tiles of 16 rows, the layout
// CudaOps::matmul_layout gives such matrices in mixed precision), x and y fp32 vectors in the
// backend's memory, y w.out values.
struct ChainLink {
    Weight w;
    const float* x = nullptr;  // w.in values, or nullptr: the link before's y (its w.out == w.in)
    float* y = nullptr;
};

// A chain's links, planned once (each link's K slices and row groups over one wave of blocks),
// then run as often as wanted on the backend's stream (run() records into a CUDA graph as well).
// Throws std::invalid_argument, naming the link and what to fix, for a link it cannot run.
class MatmulChain {
public:
    MatmulChain(CudaOps& ops, const std::vector<ChainLink>& links);
    ~MatmulChain();
    MatmulChain(const MatmulChain&) = delete;
    MatmulChain& operator=(const MatmulChain&) = delete;

    // Enqueues the chain: every link's y is written when it ends.
    void run();
    int blocks() const { return blocks_; }  // the persistent grid: every block resident at once
    size_t weight_bytes() const { return weight_bytes_; }

private:
    CudaOps& ops_;
    int count_ = 0, blocks_ = 0;
    bool wait_ = true;  // false: NIWA_CHAIN_WAIT=0 in the environment (matmul_chain.cu)
    size_t weight_bytes_ = 0;
    void* args_ = nullptr;         // the links as the kernel reads them
    float* partial_ = nullptr;     // two buffers of partial sums, links alternating
    unsigned* barrier_ = nullptr;  // arrivals, zeroed before each run
};

}  // namespace niwa::kernels::cuda
