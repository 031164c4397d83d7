// Small all-reduces between the tensor-parallel ranks of one process (one GPU each) without
// NCCL's protocol. A decode step all-reduces a few rows of the hidden size 129 times (20 KB a
// row at 27B), where a collective's fixed cost, not its bytes, is what the step pays.
//
// A call is one kernel of one block on the rank's stream, so it is recorded into step graphs
// like any kernel: it writes the rank's rows where every other rank reads them, raises the
// rank's flag, waits for the others' flags and sums all ranks' rows in rank order (every rank
// gets the same bits). Where the rows go (Path):
// - Peer: where every GPU reaches every other's memory (peer access: NVLink, or PCIe where the
//   driver allows it), into each peer's inbox on that GPU; a rank reads only its own GPU.
// - Host: otherwise (GeForce cards, WSL2), page-locked host memory that every GPU maps: a rank
//   writes its slot over the bus and reads the others' slots from there.
//
// Each rank's calls are numbered by an epoch, a counter on its GPU that the kernel advances, and
// every rank makes the same calls in the same order, so call k of one rank meets call k of the
// others. A sender's buffers alternate by the epoch's parity: it writes epoch e + 2 only after it
// has seen every flag of epoch e + 1, and a rank raises that flag only after its epoch e kernel,
// which read epoch e's rows, has finished. A flag not raised within kWaitTrapNs (wait_bound.cuh;
// a rank that stopped calling) traps the kernel instead of hanging the GPU.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <vector>

namespace niwa::kernels::cuda {

class CudaOps;

constexpr int kMaxExchangeRanks = 8;

class PeerExchange {
public:
    enum class Path { Peer, Host };

    // Whether ranks may share a GPU. The engine never lets them (join_device_group refuses): each
    // rank's kernel spins until the others have written, so all of them must be resident at once,
    // which a grid filling the GPU beside them prevents. With only exchange calls on the GPU they
    // are, so a machine of one GPU runs the Host path's protocol for real (the tests, `bench
    // --all-reduce`); the Peer path needs distinct GPUs.
    enum class Gpus { OneARank, Shared };

    // The exchange between `ranks` (in rank order, one GPU each unless `gpus` is Shared,
    // 2..kMaxExchangeRanks) by `path`, for all-reduces of at most max_bytes. Throws
    // std::runtime_error, naming what failed and with CUDA's message, when the memory can't be had
    // (page-locked host memory is limited under WSL2) or a Peer path's GPUs don't reach each other.
    PeerExchange(const std::vector<CudaOps*>& ranks, Path path, size_t max_bytes, Gpus gpus = Gpus::OneARank);
    ~PeerExchange();
    PeerExchange(const PeerExchange&) = delete;
    PeerExchange& operator=(const PeerExchange&) = delete;

    // Whether every GPU of `devices` has peer access to every other.
    static bool peers_reach(const std::vector<int>& devices);
    // The path by the environment: NIWA_TP_EXCHANGE=peer or host, or auto (Peer where the GPUs
    // reach each other, else Host); off or unset (while kOnByDefault is false): false, no exchange
    // (NCCL does every all-reduce).
    static bool chosen_path(const std::vector<int>& devices, Path* path);
    // Off until measured against NCCL on two GPUs (docs/BENCHMARKS.md, tensor parallel): the
    // exchange has been built and compiled, not yet run.
    static constexpr bool kOnByDefault = false;
    // The largest all-reduce the exchange takes (NIWA_TP_EXCHANGE_BYTES, else kDefaultMaxBytes).
    static size_t chosen_max_bytes();
    static constexpr size_t kDefaultMaxBytes = size_t(64) << 10;

    Path path() const { return path_; }
    size_t max_bytes() const { return max_floats_ * sizeof(float); }
    int ranks() const { return static_cast<int>(ranks_.size()); }

    // Sums `count` floats at `data` (on rank `rank`'s GPU, count * 4 <= max_bytes) over the ranks,
    // in place, on `stream` (the rank's), launched to overlap the kernel before it where
    // `overlap` (pdl.cuh) and the ranks have a GPU each. Every rank must make the same calls in the
    // same order. (Ranks sharing a GPU never overlap: a rank's queued calls, each started early by
    // the one before, would take every SM while the other rank's call waits for one.)
    void all_reduce(int rank, float* data, size_t count, cudaStream_t stream, bool overlap = false) const;

private:
    struct Rank {
        int device = 0;
        float* inbox = nullptr;     // Peer: [sender][parity][max_floats_] on this rank's GPU
        unsigned* words = nullptr;  // this rank's epoch, then (Peer) its flags, a line a sender
    };
    void release();

    Path path_;
    bool shared_gpus_ = false;  // two ranks on one GPU (Gpus::Shared)
    size_t max_floats_;
    std::vector<Rank> ranks_;
    void* host_base_ = nullptr;       // Host: the page-locked allocation (host address)
    float* host_slots_ = nullptr;     // Host: [sender][parity][max_floats_], as the GPUs address it
    unsigned* host_flags_ = nullptr;  // Host: a line a sender, after the slots
};

}  // namespace niwa::kernels::cuda
