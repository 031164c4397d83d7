// A kernel timeline without Nsight Systems (the GPU machine's image has none): a CUDA
// injection library (CUDA_INJECTION64_PATH=libkernel_trace.so) that records every kernel's
// start and end through CUPTI's activity API and writes them, one line a kernel, to
// $NIWA_TRACE_OUT (default kernel-trace.csv) when the process exits:
//   start_ns,end_ns,correlation,graph,grid_x,grid_y,grid_z,block,registers,name
// Kernels of one graph launch share its correlation id, so a decode step is one group.
// tests/gpu/trace_summary.py reads the file. Built and run by tests/gpu/run.sh trace.
#include <cupti.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace {

std::FILE* out = nullptr;
std::mutex mu;

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
    *size = size_t{16} << 20;
    *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, *size));
    *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
    std::lock_guard<std::mutex> lock(mu);
    CUpti_Activity* record = nullptr;
    while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
        if (record->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) continue;
        const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
        if (out)
            std::fprintf(out, "%llu,%llu,%u,%u,%d,%d,%d,%d,%u,%s\n",
                         static_cast<unsigned long long>(k->start), static_cast<unsigned long long>(k->end),
                         k->correlationId, k->graphId, k->gridX, k->gridY, k->gridZ,
                         k->blockX * k->blockY * k->blockZ, k->registersPerThread, k->name ? k->name : "?");
    }
    std::free(buffer);
}

void finish() {
    cuptiActivityFlushAll(1);
    std::lock_guard<std::mutex> lock(mu);
    if (out) std::fclose(out);
    out = nullptr;
}

}  // namespace

extern "C" int InitializeInjection() {
    const char* path = std::getenv("NIWA_TRACE_OUT");
    out = std::fopen(path ? path : "kernel-trace.csv", "w");
    if (!out) return 0;
    if (cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed) != CUPTI_SUCCESS ||
        cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS) {
        std::fprintf(stderr, "kernel_trace: CUPTI activity tracing is unavailable\n");
        return 0;
    }
    std::atexit(finish);
    return 1;
}
