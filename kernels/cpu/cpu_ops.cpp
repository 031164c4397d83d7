// The CPU backend's memory (plain aligned host memory), argument checks and its factory.
#include "kernels/cpu/cpu_ops.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>

namespace niwa::kernels {

std::unique_ptr<Ops> make_cpu_ops(int threads) {
    return std::make_unique<cpu::CpuOps>(threads);
}

namespace cpu {

namespace {
constexpr size_t kAlign = 64;  // a cache line: no false sharing between buffers
}

void* CpuOps::alloc(size_t bytes) {
    const size_t rounded = (std::max<size_t>(bytes, 1) + kAlign - 1) / kAlign * kAlign;
    void* p = std::aligned_alloc(kAlign, rounded);
    if (p == nullptr) throw std::bad_alloc();
    return p;
}

void CpuOps::free(void* p) {
    std::free(p);
}

void CpuOps::upload(void* dst, const void* host_src, size_t bytes) {
    if (bytes > 0) std::memcpy(dst, host_src, bytes);
}

void CpuOps::download(void* host_dst, const void* src, size_t bytes) {
    if (bytes > 0) std::memcpy(host_dst, src, bytes);
}

void CpuOps::copy(void* dst, const void* src, size_t bytes) {
    if (bytes > 0 && dst != src) std::memmove(dst, src, bytes);
}

void CpuOps::zero(void* dst, size_t bytes) {
    if (bytes > 0) std::memset(dst, 0, bytes);
}

}  // namespace cpu
}  // namespace niwa::kernels
