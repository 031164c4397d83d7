// One sequence's caches copied out to host RAM while it waits (preempted): the KV rows of
// its cached tokens in every attention layer and its recurrent state (conv + delta-rule) in
// every GDN layer, of every rank, one after another in one buffer. Model::park fills it,
// Model::restore copies it back into whatever blocks and slot the sequence gets next.
#pragma once

#include <cstddef>
#include <memory>

namespace niwa::cache {

struct HostFree {
    void operator()(std::byte* p) const;
};
using HostBuffer = std::unique_ptr<std::byte[], HostFree>;

// Uninitialised host memory for parked caches, in transparent huge pages where the kernel
// offers them: a fresh buffer is written once by a device-to-host copy, and faulting it in
// 4 KiB pages (not 2 MiB ones) made that copy several times slower than the copy back.
HostBuffer allocate_host(size_t bytes);

struct ParkedSequence {
    int n_tokens = 0;  // cached tokens (positions [0, n_tokens))
    size_t bytes = 0;
    HostBuffer data;
};

}  // namespace niwa::cache
