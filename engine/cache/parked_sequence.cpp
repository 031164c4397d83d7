#include "engine/cache/parked_sequence.h"

#include <cstdlib>
#include <new>

#include <sys/mman.h>

namespace niwa::cache {

namespace {
constexpr size_t kHugePage = size_t(2) << 20;
}

void HostFree::operator()(std::byte* p) const {
    std::free(p);
}

HostBuffer allocate_host(size_t bytes) {
    if (bytes < kHugePage) {
        auto* p = static_cast<std::byte*>(std::malloc(bytes > 0 ? bytes : 1));
        if (!p) throw std::bad_alloc();
        return HostBuffer(p);
    }
    const size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
    auto* p = static_cast<std::byte*>(std::aligned_alloc(kHugePage, rounded));
    if (!p) throw std::bad_alloc();
    madvise(p, rounded, MADV_HUGEPAGE);  // a hint: without huge pages it is only slower
    return HostBuffer(p);
}

}  // namespace niwa::cache
