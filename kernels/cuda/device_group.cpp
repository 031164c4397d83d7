// join_device_group (devices.h) and CudaOps::all_reduce_sum for the CUDA backend: the ranks of
// one process, one GPU each, joined by NCCL (ncclCommInitAll). An all-reduce is one NCCL call
// on the rank's stream, so it is recorded into a step's graph like any kernel and the step
// never waits for the host. A build without NCCL, or ranks sharing a GPU (NCCL needs one GPU
// per rank), leave the ranks to meet in host memory.
#include <algorithm>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/cuda/cuda_ops.h"
#include "kernels/cuda/peer_exchange.h"
#include "kernels/devices.h"

#ifdef NIWA_HAVE_NCCL
#include <nccl.h>
#endif

namespace niwa::kernels {

#ifdef NIWA_HAVE_NCCL

namespace {

void check_nccl(ncclResult_t r, const char* what) {
    if (r != ncclSuccess)
        throw std::runtime_error(std::string("NCCL ") + what + ": " + ncclGetErrorString(r));
}

// One small all-reduce on every rank, issued together from this thread (a group call: one
// thread driving several communicators), then waited for: NCCL connects the ranks on their
// first collective, which must not happen while a step is being recorded.
void connect(const std::vector<cuda::CudaOps*>& ranks, const std::vector<ncclComm_t>& comms) {
    constexpr size_t kCount = 256;
    std::vector<void*> buffers;
    try {
        for (cuda::CudaOps* r : ranks) {
            r->bind();
            buffers.push_back(r->alloc(kCount * sizeof(float)));
            r->zero(buffers.back(), kCount * sizeof(float));
        }
        check_nccl(ncclGroupStart(), "group start");
        for (size_t i = 0; i < ranks.size(); ++i)
            check_nccl(ncclAllReduce(buffers[i], buffers[i], kCount, ncclFloat, ncclSum, comms[i],
                                     ranks[i]->stream()),
                       "first all-reduce");
        check_nccl(ncclGroupEnd(), "group end");
        for (cuda::CudaOps* r : ranks) r->synchronize();
    } catch (...) {
        for (size_t i = 0; i < buffers.size(); ++i) ranks[i]->free(buffers[i]);
        throw;
    }
    for (size_t i = 0; i < buffers.size(); ++i) ranks[i]->free(buffers[i]);
}

// The group's exchange for small all-reduces (peer_exchange.h), or null (NCCL does them all);
// *how says which, and why.
std::shared_ptr<const cuda::PeerExchange> make_exchange(const std::vector<cuda::CudaOps*>& ranks,
                                                        const std::vector<int>& devices, std::string* how) {
    using Path = cuda::PeerExchange::Path;
    Path path = Path::Host;
    if (!cuda::PeerExchange::chosen_path(devices, &path)) {
        *how =
            "every all-reduce by NCCL (NIWA_TP_EXCHANGE=auto|peer|host takes the small ones by the exchange)";
        return nullptr;
    }
    const size_t max_bytes = cuda::PeerExchange::chosen_max_bytes();
    try {
        auto ex = std::make_shared<const cuda::PeerExchange>(ranks, path, max_bytes);
        *how =
            "all-reduces up to " + std::to_string(ex->max_bytes() >> 10) + " KiB by the exchange through " +
            (path == Path::Peer ? "the GPUs' peer access" : "mapped host memory") + ", larger ones by NCCL";
        return ex;
    } catch (const std::exception& e) {
        *how = std::string("every all-reduce by NCCL: ") + e.what();
        return nullptr;
    }
}

}  // namespace

bool join_device_group(const std::vector<Ops*>& ranks, std::string* why, std::string* how) {
    auto fail = [&](const std::string& reason) {
        if (why) *why = reason;
        return false;
    };
    if (ranks.size() < 2) return fail("a single rank");
    const char* mode = std::getenv("NIWA_TP_COMM");
    if (mode && std::string(mode) == "host") return fail("NIWA_TP_COMM=host");
    std::vector<cuda::CudaOps*> cuda_ranks;
    std::vector<int> devices;
    for (Ops* o : ranks) {
        auto* c = dynamic_cast<cuda::CudaOps*>(o);
        if (!c) return fail("not every rank runs on a GPU");
        if (c->in_device_group()) return fail("a rank is in a device group already");
        if (std::find(devices.begin(), devices.end(), c->device()) != devices.end())
            return fail("two ranks share GPU " + std::to_string(c->device()) + "; NCCL needs a GPU per rank");
        cuda_ranks.push_back(c);
        devices.push_back(c->device());
    }
    std::vector<ncclComm_t> comms(ranks.size(), nullptr);
    const ncclResult_t made = ncclCommInitAll(comms.data(), static_cast<int>(comms.size()), devices.data());
    if (made != ncclSuccess)
        return fail(std::string("NCCL could not join the GPUs: ") + ncclGetErrorString(made));
    try {
        connect(cuda_ranks, comms);
    } catch (const std::exception& e) {
        for (ncclComm_t c : comms) ncclCommDestroy(c);
        return fail(e.what());
    }
    std::string exchange_how;
    const auto exchange = make_exchange(cuda_ranks, devices, &exchange_how);
    for (size_t i = 0; i < comms.size(); ++i) cuda_ranks[i]->join(comms[i], exchange, static_cast<int>(i));
    if (how) *how = exchange_how;
    return true;
}

namespace cuda {

void CudaOps::join(ncclComm* comm, std::shared_ptr<const PeerExchange> exchange, int rank) {
    comm_ = comm;
    exchange_ = std::move(exchange);
    rank_ = rank;
}

bool CudaOps::all_reduce_sum(const Tensor& t) {
    if (!comm_) return false;
    require_f32(t, "all_reduce_sum", "t");
    require(t.ld >= t.cols, "all_reduce_sum", "rows overlap (ld < cols)");
    const size_t count = static_cast<size_t>(t.rows * t.ld);
    if (exchange_ && count * sizeof(float) <= exchange_->max_bytes()) {
        exchange_->all_reduce(rank_, t.as<float>(), count, stream_, overlap_);
        return true;
    }
    check_nccl(ncclAllReduce(t.data, t.data, count, ncclFloat, ncclSum, comm_, stream_), "all-reduce");
    return true;
}

void CudaOps::leave_group() {
    if (comm_) ncclCommDestroy(comm_);
    comm_ = nullptr;
    exchange_.reset();  // the last rank to leave frees it, on every GPU
    cudaSetDevice(device_);
}

}  // namespace cuda

#else  // no NCCL in this build

bool join_device_group(const std::vector<Ops*>& ranks, std::string* why, std::string*) {
    if (why) *why = ranks.size() < 2 ? "a single rank" : "this niwa-engine was built without NCCL";
    return false;
}

namespace cuda {

bool CudaOps::all_reduce_sum(const Tensor&) {
    return false;
}

void CudaOps::leave_group() {}

}  // namespace cuda

#endif

}  // namespace niwa::kernels
