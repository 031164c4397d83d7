#include "engine/cli/bench_all_reduce.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#ifdef NIWA_HAVE_CUDA
#include "kernels/cuda/cuda_ops.h"
#include "kernels/cuda/peer_exchange.h"
#include "kernels/devices.h"
#endif

namespace niwa::cli {

#ifdef NIWA_HAVE_CUDA
namespace {

using kernels::cuda::CudaOps;
using kernels::cuda::PeerExchange;

constexpr int kCalls = 200;  // a graph's calls: more than a step's 129
constexpr int kRuns = 3;     // the best of

// Runs fn(rank) for every rank, each on a thread of its own, as the engine drives its ranks (one
// thread issuing NCCL calls for several GPUs could wait in a call for a rank it has not reached).
void on_rank_threads(int n, const std::function<void(int)>& fn) {
    std::vector<std::thread> threads;
    for (int r = 1; r < n; ++r) threads.emplace_back(fn, r);
    fn(0);
    for (std::thread& t : threads) t.join();
}

// Seconds a call of `call(rank)`, each rank's kCalls calls recorded into a graph and the graphs
// replayed together (the slowest rank's time, the best of kRuns replays).
double time_calls(const std::vector<CudaOps*>& ranks, const std::function<void(int)>& call) {
    const int n = static_cast<int>(ranks.size());
    std::vector<std::unique_ptr<kernels::Ops::Recording>> recs(static_cast<size_t>(n));
    on_rank_threads(n, [&](int r) {
        ranks[size_t(r)]->bind();
        ranks[size_t(r)]->synchronize();
        recs[size_t(r)] = ranks[size_t(r)]->record([&, r] {
            for (int i = 0; i < kCalls; ++i) call(r);
        });
    });
    std::vector<cudaEvent_t> start(static_cast<size_t>(n)), stop(static_cast<size_t>(n));
    for (int r = 0; r < n; ++r) {
        ranks[size_t(r)]->bind();
        NIWA_CUDA_CHECK(cudaEventCreate(&start[size_t(r)]));
        NIWA_CUDA_CHECK(cudaEventCreate(&stop[size_t(r)]));
    }
    double best = 1e30;
    for (int run = 0; run <= kRuns; ++run) {  // run 0 warms up
        on_rank_threads(n, [&](int r) {
            CudaOps* o = ranks[size_t(r)];
            o->bind();
            NIWA_CUDA_CHECK(cudaEventRecord(start[size_t(r)], o->stream()));
            recs[size_t(r)]->replay();
            NIWA_CUDA_CHECK(cudaEventRecord(stop[size_t(r)], o->stream()));
        });
        double slowest = 0;
        for (int r = 0; r < n; ++r) {
            ranks[size_t(r)]->bind();
            NIWA_CUDA_CHECK(cudaEventSynchronize(stop[size_t(r)]));
            float ms = 0;
            NIWA_CUDA_CHECK(cudaEventElapsedTime(&ms, start[size_t(r)], stop[size_t(r)]));
            slowest = std::max(slowest, double(ms) / 1e3);
        }
        if (run > 0) best = std::min(best, slowest / kCalls);
    }
    for (int r = 0; r < n; ++r) {
        ranks[size_t(r)]->bind();
        cudaEventDestroy(start[size_t(r)]);
        cudaEventDestroy(stop[size_t(r)]);
    }
    return best;
}

// Sets an environment variable for its lifetime, then puts the old value back.
struct ScopedEnv {
    std::string name, old;
    bool had = false;
    ScopedEnv(const char* n, const char* value) : name(n) {
        if (const char* v = std::getenv(n)) {
            had = true;
            old = v;
        }
        setenv(n, value, 1);
    }
    ~ScopedEnv() {
        if (had)
            setenv(name.c_str(), old.c_str(), 1);
        else
            unsetenv(name.c_str());
    }
};

}  // namespace

nlohmann::ordered_json bench_all_reduce(int64_t hidden, int n, const std::vector<int64_t>& batches,
                                        bool json) {
    const auto gpus = kernels::list_gpus();
    if (n < 2) throw std::invalid_argument("bench --all-reduce needs --tp 2 or more");  // run_bench checks
    if (gpus.empty()) throw std::runtime_error("bench --all-reduce needs a GPU (this machine has none)");
    // Fewer GPUs than ranks: every rank on GPU 0, the exchange's Host path alone (NCCL and the
    // Peer path need a GPU a rank). Its figures are the protocol's over this GPU's one link.
    const bool shared = int(gpus.size()) < n;
    std::vector<std::unique_ptr<kernels::Ops>> owned;
    std::vector<CudaOps*> ranks;
    std::vector<kernels::Ops*> ops;
    std::vector<int> devices;
    for (int r = 0; r < n; ++r) {
        owned.push_back(kernels::make_cuda_ops(shared ? 0 : r, kernels::Precision::Mixed));
        ranks.push_back(dynamic_cast<CudaOps*>(owned.back().get()));
        ops.push_back(owned.back().get());
        devices.push_back(shared ? 0 : r);
    }
    std::string why;
    if (!shared) {
        const ScopedEnv nccl_only("NIWA_TP_EXCHANGE", "off");
        if (!kernels::join_device_group(ops, &why)) throw std::runtime_error("bench --all-reduce: " + why);
    }
    const int64_t most = *std::max_element(batches.begin(), batches.end());
    std::vector<float*> data;
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<float> host(size_t(most * hidden));
    for (CudaOps* o : ranks) {
        for (float& v : host) v = dist(rng);
        o->bind();
        data.push_back(static_cast<float*>(o->alloc(host.size() * sizeof(float))));
        o->upload(data.back(), host.data(), host.size() * sizeof(float));
    }
    std::vector<std::pair<std::string, std::unique_ptr<PeerExchange>>> ways;
    if (!shared) ways.emplace_back("nccl", nullptr);
    const size_t bytes = size_t(most * hidden) * sizeof(float);
    if (!shared && PeerExchange::peers_reach(devices))
        ways.emplace_back("peer", std::make_unique<PeerExchange>(ranks, PeerExchange::Path::Peer, bytes));
    try {
        ways.emplace_back("host", std::make_unique<PeerExchange>(
                                      ranks, PeerExchange::Path::Host, bytes,
                                      shared ? PeerExchange::Gpus::Shared : PeerExchange::Gpus::OneARank));
    } catch (const std::exception& e) {
        if (shared) throw;
        if (!json) std::printf("no host exchange: %s\n", e.what());
    }
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    if (!json && shared)
        std::printf(
            "all-reduce of %d ranks on one GPU (%s; this machine has %zu), the host path only, µs a "
            "call:\n%8s %10s",
            n, gpus[0].name.c_str(), gpus.size(), "rows", "bytes");
    else if (!json)
        std::printf("all-reduce over %d GPUs (%s), µs a call:\n%8s %10s", n, gpus[0].name.c_str(), "rows",
                    "bytes");
    if (!json)
        for (const auto& w : ways) std::printf(" %8s", w.first.c_str());
    if (!json) std::printf("\n");
    for (int64_t rows : batches) {
        const size_t count = size_t(rows * hidden);
        nlohmann::ordered_json row{
            {"rows", rows}, {"bytes", count * sizeof(float)}, {"gpus", shared ? 1 : n}};
        if (!json) std::printf("%8lld %10zu", static_cast<long long>(rows), count * sizeof(float));
        for (const auto& [name, ex] : ways) {
            const PeerExchange* e = ex.get();
            const double s = time_calls(ranks, [&](int r) {
                CudaOps* o = ranks[size_t(r)];
                if (e)
                    e->all_reduce(r, data[size_t(r)], count, o->stream(), o->overlap_launches());
                else
                    o->all_reduce_sum(
                        kernels::Tensor{data[size_t(r)], kernels::DType::F32, rows, hidden, hidden});
            });
            row[name + "_us"] = s * 1e6;
            if (!json) std::printf(" %8.2f", s * 1e6);
        }
        if (!json) std::printf("\n");
        out.push_back(row);
    }
    for (size_t r = 0; r < ranks.size(); ++r) {
        ranks[r]->bind();
        ranks[r]->free(data[r]);
    }
    return out;
}

#else

nlohmann::ordered_json bench_all_reduce(int64_t, int, const std::vector<int64_t>&, bool) {
    throw std::runtime_error("bench --all-reduce needs a build with CUDA");
}

#endif

}  // namespace niwa::cli
