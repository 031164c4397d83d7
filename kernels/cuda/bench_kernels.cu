// time_matmul (bench_kernels.h): CUDA events around the real op on the backend's stream, over
// copies of the weight that overflow the L2.
#include "kernels/cuda/bench_kernels.h"

#include <algorithm>
#include <random>
#include <stdexcept>
#include <vector>

#include "kernels/cuda/cuda_ops.h"

namespace niwa::kernels {

KernelTiming time_matmul(Ops& ops, const Weight& w, int n_rows, int iters) {
    auto* cuda = dynamic_cast<cuda::CudaOps*>(&ops);
    if (cuda == nullptr)
        throw std::invalid_argument(std::string("time_matmul needs the CUDA backend, not ") + ops.name());
    if (n_rows <= 0 || iters <= 0)
        throw std::invalid_argument("time_matmul: n_rows and iters must be positive");
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<float> hx(static_cast<size_t>(n_rows) * static_cast<size_t>(w.in));
    for (float& v : hx) v = dist(rng);
    const Tensor x{ops.alloc(hx.size() * sizeof(float)), DType::F32, n_rows, w.in, w.in};
    const Tensor y{ops.alloc(static_cast<size_t>(n_rows) * static_cast<size_t>(w.out) * sizeof(float)),
                   DType::F32, n_rows, w.out, w.out};
    ops.upload(x.data, hx.data(), hx.size() * sizeof(float));
    // In a step each matrix is read once, from DRAM; back to back, one that the L2 holds would
    // come from there. So the calls go round copies of w that together fill twice the L2.
    const size_t bytes = static_cast<size_t>(w.out) * w.row_stride;
    const size_t l2 = static_cast<size_t>(cuda->props().l2CacheSize);
    const int copies =
        static_cast<int>(std::clamp<size_t>((2 * l2 + bytes - 1) / std::max<size_t>(bytes, 1), 1, 64));
    std::vector<Weight> ws(static_cast<size_t>(copies), w);
    cudaEvent_t start = nullptr, stop = nullptr;
    float ms = 0.0f;
    auto release = [&] {
        if (start) cudaEventDestroy(start);
        if (stop) cudaEventDestroy(stop);
        for (size_t i = 1; i < ws.size(); ++i)
            if (ws[i].data != w.data) ops.free(const_cast<void*>(ws[i].data));
        ops.free(x.data);
        ops.free(y.data);
    };
    try {
        for (size_t i = 1; i < ws.size(); ++i) {
            void* p = ops.alloc(bytes);
            NIWA_CUDA_CHECK(cudaMemcpyAsync(p, w.data, bytes, cudaMemcpyDeviceToDevice, cuda->stream()));
            ws[i].data = p;
        }
        for (const Weight& c : ws) ops.matmul(c, x, y);
        NIWA_CUDA_CHECK(cudaEventCreate(&start));
        NIWA_CUDA_CHECK(cudaEventCreate(&stop));
        NIWA_CUDA_CHECK(cudaEventRecord(start, cuda->stream()));
        for (int i = 0; i < iters; ++i) ops.matmul(ws[static_cast<size_t>(i % copies)], x, y);
        NIWA_CUDA_CHECK(cudaEventRecord(stop, cuda->stream()));
        NIWA_CUDA_CHECK(cudaEventSynchronize(stop));
        NIWA_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    } catch (...) {
        release();
        throw;
    }
    release();
    const double n = n_rows, in = static_cast<double>(w.in), out = static_cast<double>(w.out);
    KernelTiming t;
    t.seconds = ms * 1e-3 / iters;
    t.bytes = out * static_cast<double>(dtype_row_bytes(w.type, w.in)) + n * in * 4.0 + n * out * 4.0;
    t.flops = 2.0 * n * in * out;
    return t;
}

}  // namespace niwa::kernels
