// Collective operations between the ranks of a tensor-parallel group. LocalGroup runs all
// ranks in one process (threads) with an in-memory all-reduce; NCCL comes with CUDA.
#pragma once

#include <barrier>
#include <cstddef>
#include <memory>
#include <vector>

namespace niwa::runtime {

class Communicator {
public:
    virtual ~Communicator() = default;
    virtual int rank() const = 0;
    virtual int world() const = 0;
    // data[i] = sum over ranks of data[i]; every rank gets the same result (same order of
    // summation on every rank, so the ranks stay bit-identical).
    virtual void all_reduce_sum(float* data, size_t n) = 0;
    // dst = the ranks' src buffers concatenated in rank order (sizes may differ per rank).
    virtual void all_gather_v(const void* src, size_t bytes, void* dst) = 0;
};

// A group of `world` ranks inside this process; rank(i) is used by thread i only.
class LocalGroup {
public:
    explicit LocalGroup(int world);
    ~LocalGroup();
    Communicator& rank(int i);
    int world() const { return world_; }

private:
    class Rank;
    friend class Rank;
    int world_;
    std::barrier<> barrier_;
    std::vector<const void*> published_;
    std::vector<size_t> sizes_;
    std::vector<std::unique_ptr<Rank>> ranks_;
};

}  // namespace niwa::runtime
