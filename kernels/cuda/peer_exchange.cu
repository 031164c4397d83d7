// PeerExchange (peer_exchange.h): its memory, and the all-reduce kernel.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include "kernels/cuda/cuda_ops.h"
#include "kernels/cuda/pdl.cuh"
#include "kernels/cuda/peer_exchange.h"
#include "kernels/cuda/wait_bound.cuh"

namespace niwa::kernels::cuda {

namespace {

constexpr int kExchangeThreads = 1024;
constexpr int kLineWords = 32;  // a flag a 128-byte line

// What one call's kernel reads and writes (parity 0's addresses; parity 1's are parity_floats on).
struct ExchangeArgs {
    float* data;
    long long count;
    unsigned* epoch;  // this rank's, on its GPU
    int rank, ranks;
    long long parity_floats;
    int n_out;  // places this rank's rows go (Peer: each peer; Host: its slot)
    float* out[kMaxExchangeRanks];
    unsigned* out_flag[kMaxExchangeRanks];
    const float* in[kMaxExchangeRanks];  // rank q's rows as this rank reads them (q != rank)
    const unsigned* in_flag[kMaxExchangeRanks];
};

__device__ __forceinline__ unsigned load_acquire_sys(const unsigned* p) {
    unsigned v;
    asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ void store_release_sys(unsigned* p, unsigned v) {
    asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

__device__ __forceinline__ float4 add4(float4 a, float4 b) {
    return make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
}

// One block. The kernel after it may start at once (it reads nothing of ours before its own wait,
// and a matmul streams its first weights while we wait for the other ranks). N: the most ranks
// it takes (2, 4 or 8); each thread keeps kBatch float4 of every rank's rows in flight (over
// PCIe a read is a microsecond's round trip), eight float4 in all (64 registers a thread at 1024).
template <int N>
__global__ void __launch_bounds__(kExchangeThreads) exchange_kernel(ExchangeArgs a) {
    constexpr int kBatch = 8 / N;
    __shared__ unsigned epoch_sh;
    pdl_release();
    pdl_wait();
    if (threadIdx.x == 0) epoch_sh = *static_cast<volatile unsigned*>(a.epoch) + 1;  // the last call's
    __syncthreads();
    const unsigned e = epoch_sh;
    const long long off = (e & 1u) ? a.parity_floats : 0;
    // Rows start 16-byte aligned in practice (whole allocations, rows of a multiple of 4 floats);
    // the buffers always do (inbox and slots: 256-byte aligned, parity_floats a multiple of 4).
    const bool vec = (reinterpret_cast<uintptr_t>(a.data) & 15u) == 0;
    const long long n4 = vec ? a.count / 4 : 0;
    const int tid = static_cast<int>(threadIdx.x);
    const float4* own = reinterpret_cast<const float4*>(a.data);

    // 1. This rank's rows to every place they go.
    for (long long i = tid; i < n4; i += kExchangeThreads) {
        const float4 v = own[i];
#pragma unroll
        for (int o = 0; o < N; ++o)
            if (o < a.n_out) reinterpret_cast<float4*>(a.out[o] + off)[i] = v;
    }
    for (long long i = 4 * n4 + tid; i < a.count; i += kExchangeThreads) {
        const float v = a.data[i];
#pragma unroll
        for (int o = 0; o < N; ++o)
            if (o < a.n_out) a.out[o][off + i] = v;
    }
    // 2. Raised once every thread's writes are: the barrier, then a system-wide release.
    __syncthreads();
    if (tid == 0) {
        __threadfence_system();
#pragma unroll
        for (int o = 0; o < N; ++o)
            if (o < a.n_out) store_release_sys(a.out_flag[o], e);
    }
    // 3. Every other rank's flag of this epoch (or the next: it may be ahead by one call).
    if (tid < a.ranks && tid != a.rank) {
        const unsigned* flag = a.in_flag[0];
#pragma unroll
        for (int q = 1; q < N; ++q)
            if (q == tid) flag = a.in_flag[q];
        const uint64_t start = globaltimer_ns();
        while (static_cast<int>(load_acquire_sys(flag) - e) < 0) {
            if (globaltimer_ns() - start > kWaitTrapNs) __trap();
            __nanosleep(32);
        }
        __threadfence_system();
    }
    __syncthreads();
    // 4. The sum in rank order, the same on every rank; the others' rows read past the caches
    // (their lines held from two epochs ago are stale), kBatch a thread loaded before any is used.
    for (long long i0 = tid; i0 < n4; i0 += kBatch * kExchangeThreads) {
        float4 v[kBatch][N];
#pragma unroll
        for (int b = 0; b < kBatch; ++b) {
            const long long i = i0 + static_cast<long long>(b) * kExchangeThreads;
#pragma unroll
            for (int q = 0; q < N; ++q)
                if (q < a.ranks && i < n4)
                    v[b][q] =
                        q == a.rank ? own[i] : __ldcv(reinterpret_cast<const float4*>(a.in[q] + off) + i);
        }
#pragma unroll
        for (int b = 0; b < kBatch; ++b) {
            const long long i = i0 + static_cast<long long>(b) * kExchangeThreads;
            if (i >= n4) break;
            float4 s = v[b][0];
#pragma unroll
            for (int q = 1; q < N; ++q)
                if (q < a.ranks) s = add4(s, v[b][q]);
            reinterpret_cast<float4*>(a.data)[i] = s;
        }
    }
    for (long long i = 4 * n4 + tid; i < a.count; i += kExchangeThreads) {
        float s = 0.0f;
#pragma unroll
        for (int q = 0; q < N; ++q)
            if (q < a.ranks) {
                const float v = q == a.rank ? a.data[i] : __ldcv(a.in[q] + off + i);
                s = q == 0 ? v : s + v;
            }
        a.data[i] = s;
    }
    if (tid == 0) *a.epoch = e;
}

std::string cuda_message(cudaError_t err) {
    return std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err);
}

void require_cuda(cudaError_t err, const std::string& what) {
    if (err == cudaSuccess) return;
    cudaGetLastError();  // clear it: the caller goes on without the exchange
    throw std::runtime_error("tensor-parallel exchange: " + what + " failed (" + cuda_message(err) + ")");
}

}  // namespace

bool PeerExchange::peers_reach(const std::vector<int>& devices) {
    for (int a : devices)
        for (int b : devices) {
            if (a == b) continue;
            int can = 0;
            if (cudaDeviceCanAccessPeer(&can, a, b) != cudaSuccess || !can) {
                cudaGetLastError();
                return false;
            }
        }
    return true;
}

bool PeerExchange::chosen_path(const std::vector<int>& devices, Path* path) {
    const char* env = std::getenv("NIWA_TP_EXCHANGE");
    const std::string mode = env && *env ? env : (kOnByDefault ? "auto" : "off");
    if (mode == "host")
        *path = Path::Host;
    else if (mode == "peer")
        *path = Path::Peer;
    else if (mode == "auto")
        *path = peers_reach(devices) ? Path::Peer : Path::Host;
    else
        return false;
    return true;
}

size_t PeerExchange::chosen_max_bytes() {
    const char* env = std::getenv("NIWA_TP_EXCHANGE_BYTES");
    if (!env || !*env) return kDefaultMaxBytes;
    const long long n = std::atoll(env);
    return n > 0 ? static_cast<size_t>(n) : kDefaultMaxBytes;
}

PeerExchange::PeerExchange(const std::vector<CudaOps*>& ranks, Path path, size_t max_bytes, Gpus gpus)
    : path_(path), max_floats_((max_bytes / sizeof(float) + 63) / 64 * 64) {
    const int n = static_cast<int>(ranks.size());
    if (n < 2 || n > kMaxExchangeRanks)
        throw std::runtime_error("tensor-parallel exchange: 2.." + std::to_string(kMaxExchangeRanks) +
                                 " ranks, got " + std::to_string(n));
    std::vector<int> devices;
    for (CudaOps* r : ranks) {
        for (int d : devices)
            if (d == r->device()) {
                if (gpus == Gpus::OneARank || path == Path::Peer)
                    throw std::runtime_error("tensor-parallel exchange: two ranks share GPU " +
                                             std::to_string(d));
                shared_gpus_ = true;
            }
        devices.push_back(r->device());
    }
    if (path == Path::Peer && !peers_reach(devices))
        throw std::runtime_error("tensor-parallel exchange: these GPUs have no peer access to each other");
    int current = 0;
    cudaGetDevice(&current);
    try {
        const size_t slot_bytes = 2 * max_floats_ * sizeof(float);
        for (int r = 0; r < n; ++r) {
            Rank k;
            k.device = devices[size_t(r)];
            require_cuda(cudaSetDevice(k.device), "cudaSetDevice");
            const size_t words = size_t(1 + n) * kLineWords * sizeof(unsigned);
            require_cuda(cudaMalloc(&k.words, words), "cudaMalloc of the flags");
            ranks_.push_back(k);
            require_cuda(cudaMemset(k.words, 0, words), "cudaMemset");
            if (path == Path::Peer) {
                require_cuda(cudaMalloc(&ranks_.back().inbox, size_t(n) * slot_bytes),
                             "cudaMalloc of an inbox");
                for (int q : devices) {
                    if (q == k.device) continue;
                    const cudaError_t err = cudaDeviceEnablePeerAccess(q, 0);
                    if (err == cudaErrorPeerAccessAlreadyEnabled)
                        cudaGetLastError();
                    else
                        require_cuda(err, "cudaDeviceEnablePeerAccess");
                }
            }
        }
        if (path == Path::Host) {
            const size_t bytes = size_t(n) * slot_bytes + size_t(n) * kLineWords * sizeof(unsigned);
            void* p = nullptr;
            require_cuda(cudaHostAlloc(&p, bytes, cudaHostAllocPortable | cudaHostAllocMapped),
                         "cudaHostAlloc of " + std::to_string(bytes) + " bytes of mapped page-locked memory");
            std::memset(p, 0, bytes);
            host_base_ = p;
            void* dp = nullptr;
            require_cuda(cudaHostGetDevicePointer(&dp, p, 0), "cudaHostGetDevicePointer");
            host_slots_ = static_cast<float*>(dp);
            host_flags_ = reinterpret_cast<unsigned*>(static_cast<char*>(dp) + size_t(n) * slot_bytes);
        }
        for (const Rank& k : ranks_) {
            require_cuda(cudaSetDevice(k.device), "cudaSetDevice");
            require_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");  // the zeroed flags
        }
    } catch (...) {
        release();
        cudaSetDevice(current);
        throw;
    }
    cudaSetDevice(current);
}

PeerExchange::~PeerExchange() {
    release();
}

void PeerExchange::release() {
    int current = 0;
    cudaGetDevice(&current);
    for (Rank& k : ranks_) {
        cudaSetDevice(k.device);
        if (k.inbox) cudaFree(k.inbox);
        if (k.words) cudaFree(k.words);
        k.inbox = nullptr;
        k.words = nullptr;
    }
    if (host_base_) cudaFreeHost(host_base_);
    host_base_ = nullptr;
    host_slots_ = nullptr;
    host_flags_ = nullptr;
    cudaSetDevice(current);
}

void PeerExchange::all_reduce(int rank, float* data, size_t count, cudaStream_t stream, bool overlap) const {
    const int n = ranks();
    require(rank >= 0 && rank < n, "all_reduce_sum", "rank out of the exchange");
    require(count <= max_floats_, "all_reduce_sum",
            std::to_string(count) + " floats is more than the exchange takes (" +
                std::to_string(max_floats_) + ")");
    if (count == 0) return;
    ExchangeArgs a{};
    a.data = data;
    a.count = static_cast<long long>(count);
    a.epoch = ranks_[size_t(rank)].words;
    a.rank = rank;
    a.ranks = n;
    a.parity_floats = static_cast<long long>(max_floats_);
    const size_t sender = 2 * max_floats_;  // floats between two senders' slots
    if (path_ == Path::Peer) {
        for (int q = 0; q < n; ++q) {
            const Rank& k = ranks_[size_t(q)];
            if (q != rank) {
                a.out[a.n_out] = k.inbox + size_t(rank) * sender;
                a.out_flag[a.n_out] = k.words + size_t(1 + rank) * kLineWords;
                ++a.n_out;
            }
            const Rank& me = ranks_[size_t(rank)];
            a.in[q] = me.inbox + size_t(q) * sender;
            a.in_flag[q] = me.words + size_t(1 + q) * kLineWords;
        }
    } else {
        a.n_out = 1;
        a.out[0] = host_slots_ + size_t(rank) * sender;
        a.out_flag[0] = host_flags_ + size_t(rank) * kLineWords;
        for (int q = 0; q < n; ++q) {
            a.in[q] = host_slots_ + size_t(q) * sender;
            a.in_flag[q] = host_flags_ + size_t(q) * kLineWords;
        }
    }
    auto* kernel = n <= 2 ? exchange_kernel<2> : n <= 4 ? exchange_kernel<4> : exchange_kernel<8>;
    NIWA_CUDA_CHECK(
        launch_overlapping(overlap && !shared_gpus_, kernel, dim3(1), dim3(kExchangeThreads), 0, stream, a));
}

}  // namespace niwa::kernels::cuda
