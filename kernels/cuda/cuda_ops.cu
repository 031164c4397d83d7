// The CUDA backend's device, stream and memory, its argument checks and its factory.
#include "kernels/cuda/cuda_ops.h"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

namespace niwa::kernels {

std::unique_ptr<Ops> make_cuda_ops(int device, Precision precision) {
    return std::make_unique<cuda::CudaOps>(device, precision);
}

namespace cuda {

bool env_switched_off(const char* name) {
    const char* v = std::getenv(name);
    return v && std::string(v) == "0";
}

namespace {

// A positive count from the environment, 0 where `name` is unset or not one.
long long env_count(const char* name) {
    const char* v = std::getenv(name);
    if (!v) return 0;
    char* end = nullptr;
    const long long n = std::strtoll(v, &end, 10);
    return end != v && *end == '\0' && n > 0 ? n : 0;
}

}  // namespace

void check(cudaError_t err, const char* what, const char* file, int line) {
    if (err == cudaSuccess) return;
    throw std::runtime_error(std::string("CUDA error in ") + what + " (" + file + ":" + std::to_string(line) +
                             "): " + cudaGetErrorName(err) + ": " + cudaGetErrorString(err));
}

CudaOps::CudaOps(int device, Precision precision) : device_(device), precision_(precision) {
    int n = 0;
    const cudaError_t err = cudaGetDeviceCount(&n);
    if (err != cudaSuccess || n == 0)
        throw std::runtime_error(std::string("the CUDA backend found no usable GPU (") +
                                 (err == cudaSuccess ? "no device" : cudaGetErrorString(err)) +
                                 "); check nvidia-smi, or use --backend cpu");
    if (device < 0 || device >= n)
        throw std::runtime_error("GPU " + std::to_string(device) + " does not exist; this machine has " +
                                 std::to_string(n));
    NIWA_CUDA_CHECK(cudaSetDevice(device));
    NIWA_CUDA_CHECK(cudaGetDeviceProperties(&props_, device));
    NIWA_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    overlap_ = props_.major >= 9 && !env_switched_off("NIWA_PDL");
    const char* gemm = std::getenv("NIWA_PREFILL_GEMM");
    if (gemm && std::string(gemm) == "cublas") prefill_gemm_ = PrefillGemm::Cublas;
    if (gemm && std::string(gemm) == "tiles") prefill_gemm_ = PrefillGemm::Tiles;
    const char* decode = std::getenv("NIWA_DECODE_GEMM");
    if (decode && std::string(decode) == "registers") decode_gemm_ = DecodeGemm::Registers;
    if (decode && std::string(decode) == "staged") decode_gemm_ = DecodeGemm::Staged;
    if (decode && std::string(decode) == "ring") decode_gemm_ = DecodeGemm::Ring;
    if (decode && std::string(decode) == "wgmma") decode_gemm_ = DecodeGemm::Wgmma;
    fuse_inputs_ = !env_switched_off("NIWA_FUSE_INPUTS");
    norms_in_matmuls_ = !env_switched_off("NIWA_NORMS_IN_MATMULS");
    early_reads_ = !env_switched_off("NIWA_EARLY_READS");
    if (env_switched_off("NIWA_SHARED_SUMS")) shared_sum_outputs_ = kNeverShared;
    if (const long long n = env_count("NIWA_SHARED_SUM_OUTPUTS")) shared_sum_outputs_ = n;
    if (const long long n = env_count("NIWA_ATTN_WAVES")) attn_waves_ = static_cast<int>(std::min(n, 64LL));
    if (const long long n = env_count("NIWA_ATTN_MIN_SPLIT_TOKENS"))
        attn_min_split_tokens_ = static_cast<int>(std::min(n, 1LL << 20));
    record_halves_ = !env_switched_off("NIWA_RECORD_HALVES");
    wgmma_bias_mma_ = !env_switched_off("NIWA_WGMMA_BIAS_MMA");
    ab_first_ = !env_switched_off("NIWA_AB_FIRST");
    decode_x8_ = !env_switched_off("NIWA_DECODE_X8");
    if (const long long mb = env_count("NIWA_WGMMA_MIN_MB")) wgmma_min_bytes_ = static_cast<size_t>(mb) << 20;
}

CudaOps::~CudaOps() {
    cudaSetDevice(device_);
    if (stream_) cudaStreamSynchronize(stream_);
    leave_group();
    for (Buffer& b : workspace_)
        if (b.p) cudaFree(b.p);
    if (host_staging_.p) cudaFreeHost(host_staging_.p);
    if (blas_) cublasDestroy(blas_);
    if (stream_) cudaStreamDestroy(stream_);
}

void CudaOps::bind() {
    NIWA_CUDA_CHECK(cudaSetDevice(device_));
}

Ops::MemoryInfo CudaOps::memory_info() const {
    NIWA_CUDA_CHECK(cudaSetDevice(device_));
    MemoryInfo m;
    NIWA_CUDA_CHECK(cudaMemGetInfo(&m.free, &m.total));
    std::lock_guard<std::mutex> lock(mu_);
    m.allocated = allocated_;
    return m;
}

void* CudaOps::alloc(size_t bytes) {
    NIWA_CUDA_CHECK(cudaSetDevice(device_));
    void* p = nullptr;
    const cudaError_t err = cudaMalloc(&p, bytes + kTailPad);
    if (err == cudaErrorMemoryAllocation) {
        cudaGetLastError();  // clear the sticky-free error state
        size_t free_b = 0, total_b = 0;
        cudaMemGetInfo(&free_b, &total_b);
        throw std::runtime_error("out of GPU memory on GPU " + std::to_string(device_) + ": asked for " +
                                 std::to_string(bytes >> 20) + " MiB with " + std::to_string(free_b >> 20) +
                                 " MiB free; lower --mem-fraction, --max-seqs or --max-context");
    }
    NIWA_CUDA_CHECK(err);
    // The pad is read (a row's last vector load) but never used: zeroed, so nothing reads memory
    // that was never written (compute-sanitizer initcheck). Outside a recording only: a graph
    // would replay the memset every step, so what is allocated while recording stays unzeroed.
    if (!capturing()) NIWA_CUDA_CHECK(cudaMemsetAsync(static_cast<char*>(p) + bytes, 0, kTailPad, stream_));
    std::lock_guard<std::mutex> lock(mu_);
    sizes_[p] = bytes;
    allocated_ += bytes;
    return p;
}

bool CudaOps::capturing() const {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    NIWA_CUDA_CHECK(cudaStreamIsCapturing(stream_, &status));
    return status != cudaStreamCaptureStatusNone;
}

size_t CudaOps::static_smem_of(const void* kernel) const {
    std::lock_guard<std::mutex> lock(mu_);
    const auto it = static_smem_.find(kernel);
    if (it != static_smem_.end()) return it->second;
    NIWA_CUDA_CHECK(cudaSetDevice(device_));
    cudaFuncAttributes attr{};
    NIWA_CUDA_CHECK(cudaFuncGetAttributes(&attr, kernel));
    static_smem_[kernel] = attr.sharedSizeBytes;
    return attr.sharedSizeBytes;
}

void CudaOps::free(void* p) {
    if (!p) return;
    NIWA_CUDA_CHECK(cudaFree(p));
    std::lock_guard<std::mutex> lock(mu_);
    const auto it = sizes_.find(p);
    if (it != sizes_.end()) {
        allocated_ -= it->second;
        sizes_.erase(it);
    }
}

void CudaOps::upload(void* dst, const void* host_src, size_t bytes) {
    // From pageable memory the copy is staged before the call returns, so the caller may
    // reuse its buffer at once; stream order keeps it before later kernels.
    if (bytes > 0) NIWA_CUDA_CHECK(cudaMemcpyAsync(dst, host_src, bytes, cudaMemcpyHostToDevice, stream_));
}

void CudaOps::download(void* host_dst, const void* src, size_t bytes) {
    if (bytes == 0) return;
    NIWA_CUDA_CHECK(cudaMemcpyAsync(host_dst, src, bytes, cudaMemcpyDeviceToHost, stream_));
    NIWA_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void CudaOps::download_rows(void* host_dst, size_t dst_pitch, const void* src, size_t src_pitch,
                            size_t row_bytes, size_t rows) {
    check_download_rows(name(), dst_pitch, src_pitch, row_bytes);
    if (rows == 0 || row_bytes == 0) return;
    if (dst_pitch == row_bytes && src_pitch == row_bytes) {  // packed rows: one plain copy
        download(host_dst, src, rows * row_bytes);
        return;
    }
    NIWA_CUDA_CHECK(cudaMemcpy2DAsync(host_dst, dst_pitch, src, src_pitch, row_bytes, rows,
                                      cudaMemcpyDeviceToHost, stream_));
    NIWA_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void CudaOps::copy(void* dst, const void* src, size_t bytes) {
    if (bytes > 0 && dst != src)
        NIWA_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream_));
}

void CudaOps::zero(void* dst, size_t bytes) {
    if (bytes > 0) NIWA_CUDA_CHECK(cudaMemsetAsync(dst, 0, bytes, stream_));
}

void CudaOps::synchronize() {
    NIWA_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void* CudaOps::alloc_host(size_t bytes) {
    NIWA_CUDA_CHECK(cudaSetDevice(device_));
    void* p = nullptr;
    const cudaError_t err = cudaMallocHost(&p, bytes);
    if (err == cudaErrorMemoryAllocation) {
        cudaGetLastError();  // clear the error state
        throw std::runtime_error("GPU " + std::to_string(device_) + ": could not page-lock " +
                                 std::to_string(bytes >> 20) +
                                 " MiB of host memory; free some RAM or lower --step-tokens");
    }
    NIWA_CUDA_CHECK(err);
    return p;
}

void CudaOps::free_host(void* p) {
    if (!p) return;
    NIWA_CUDA_CHECK(cudaSetDevice(device_));
    NIWA_CUDA_CHECK(cudaFreeHost(p));
}

void* CudaOps::host_staging(size_t bytes) {
    if (host_staging_.bytes < bytes) {
        if (host_staging_.p) {
            NIWA_CUDA_CHECK(cudaStreamSynchronize(stream_));
            NIWA_CUDA_CHECK(cudaFreeHost(host_staging_.p));
            host_staging_ = {};
        }
        NIWA_CUDA_CHECK(cudaMallocHost(&host_staging_.p, bytes));
        host_staging_.bytes = bytes;
    }
    return host_staging_.p;
}

void* CudaOps::workspace(Workspace id, size_t bytes) {
    Buffer& b = workspace_[static_cast<int>(id)];
    if (b.bytes < bytes) {
        if (b.p) {
            NIWA_CUDA_CHECK(cudaStreamSynchronize(stream_));
            free(b.p);
            b = {};
        }
        b.p = alloc(bytes);
        b.bytes = bytes;
        ++epoch_;
        // Zeroed once: some of a workspace is read before a kernel writes it (the rows of x past
        // n that a bulk copy brings along, sample's whole candidate lists), none of it used.
        if (!capturing()) NIWA_CUDA_CHECK(cudaMemsetAsync(b.p, 0, bytes, stream_));
    }
    return b.p;
}

cublasHandle_t CudaOps::blas() {
    if (!blas_) {
        NIWA_CUDA_CHECK(cudaSetDevice(device_));
        if (cublasCreate(&blas_) != CUBLAS_STATUS_SUCCESS) {
            blas_ = nullptr;
            throw std::runtime_error("cuBLAS could not start on GPU " + std::to_string(device_) +
                                     " (out of memory?); lower --mem-fraction");
        }
        if (cublasSetStream(blas_, stream_) != CUBLAS_STATUS_SUCCESS)
            throw std::runtime_error("cuBLAS could not take the backend's stream");
    }
    return blas_;
}

namespace {

class GraphRecording final : public Ops::Recording {
public:
    GraphRecording(cudaGraphExec_t exec, cudaStream_t stream, int device)
        : exec_(exec), stream_(stream), device_(device) {}
    ~GraphRecording() override {
        cudaSetDevice(device_);
        cudaGraphExecDestroy(exec_);
    }
    void replay() override { NIWA_CUDA_CHECK(cudaGraphLaunch(exec_, stream_)); }

private:
    cudaGraphExec_t exec_;
    cudaStream_t stream_;
    int device_;
};

}  // namespace

std::unique_ptr<Ops::Recording> CudaOps::record(const std::function<void()>& issue) {
    NIWA_CUDA_CHECK(cudaSetDevice(device_));
    NIWA_CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
    cudaGraph_t graph = nullptr;
    try {
        issue();
    } catch (...) {
        // End the capture whatever went wrong, so the stream is usable again.
        if (cudaStreamEndCapture(stream_, &graph) == cudaSuccess && graph) cudaGraphDestroy(graph);
        cudaGetLastError();
        throw;
    }
    const cudaError_t ended = cudaStreamEndCapture(stream_, &graph);
    if (ended != cudaSuccess) {
        cudaGetLastError();
        if (graph) cudaGraphDestroy(graph);
        NIWA_CUDA_CHECK(ended);
    }
    cudaGraphExec_t exec = nullptr;
    const cudaError_t made = cudaGraphInstantiateWithFlags(&exec, graph, 0);
    cudaGraphDestroy(graph);
    NIWA_CUDA_CHECK(made);
    return std::make_unique<GraphRecording>(exec, stream_, device_);
}

}  // namespace cuda
}  // namespace niwa::kernels
