// The bound on a kernel's spin waits for other blocks or other GPUs (a slice's group, a grid
// barrier, a peer rank's flag): a wait that passes kWaitTrapNs of the GPU's clock traps, failing
// the launch with an error the host reports, instead of hanging the GPU. The bound is time, not
// polls: under compute-sanitizer or a shared GPU a block can take seconds to arrive.
// Header for .cu files (C++17).
#pragma once

#include <cstdint>

namespace niwa::kernels::cuda {

// The GPU's clock in nanoseconds.
__device__ __forceinline__ uint64_t globaltimer_ns() {
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

constexpr uint64_t kWaitTrapNs = 20'000'000'000;  // 20 s

}  // namespace niwa::kernels::cuda
