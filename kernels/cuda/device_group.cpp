// join_device_group (devices.h) and CudaOps::all_reduce_sum for the CUDA backend: the ranks of
// one process, one GPU each, joined by NCCL (ncclCommInitAll). An all-reduce is one NCCL call
// on the rank's stream, so it is recorded into a step's graph like any kernel and the step
// never waits for the host. A build without NCCL, or ranks sharing a GPU (NCCL needs one GPU
// per rank), leave the ranks to meet in host memory.
#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/cuda/cuda_ops.h"
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

}  // namespace

bool join_device_group(const std::vector<Ops*>& ranks, std::string* why) {
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
    for (size_t i = 0; i < comms.size(); ++i) cuda_ranks[i]->join(comms[i]);
    return true;
}

namespace cuda {

bool CudaOps::all_reduce_sum(const Tensor& t) {
    if (!comm_) return false;
    require_f32(t, "all_reduce_sum", "t");
    require(t.ld >= t.cols, "all_reduce_sum", "rows overlap (ld < cols)");
    check_nccl(
        ncclAllReduce(t.data, t.data, static_cast<size_t>(t.rows * t.ld), ncclFloat, ncclSum, comm_, stream_),
        "all-reduce");
    return true;
}

void CudaOps::leave_group() {
    if (comm_) ncclCommDestroy(comm_);
    comm_ = nullptr;
}

}  // namespace cuda

#else  // no NCCL in this build

bool join_device_group(const std::vector<Ops*>& ranks, std::string* why) {
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
