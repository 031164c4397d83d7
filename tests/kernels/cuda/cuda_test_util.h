// Helpers for the CUDA op tests: the CPU backend is the oracle; inputs are fresh random host
// tensors copied to the GPU, outputs are poisoned (NaN) on the GPU before the op runs, and a
// result comes back as a HostTensor to compare with relative_error.
#pragma once

#include <QtTest>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "kernels/ops.h"
#include "tests/kernels/kernel_test_util.h"

namespace niwa::kernels::test {

// Both backends; fails the test (never skips) when there is no GPU.
struct Backends {
    std::unique_ptr<Ops> cpu = make_cpu_ops(0);
    std::unique_ptr<Ops> gpu;
    explicit Backends(Precision p = Precision::Fp32) { gpu = make_cuda_ops(0, p); }
};

// A copy of a host tensor (padding included) in a backend's memory; freed with it.
struct DeviceTensor {
    Ops* ops = nullptr;
    Tensor t;
    size_t bytes = 0;

    DeviceTensor(Ops& o, const HostTensor& h) : ops(&o), t(h.t), bytes(h.buf.size() * sizeof(float)) {
        t.data = o.alloc(bytes);
        o.upload(t.data, h.buf.data(), bytes);
    }
    // rows x cols with row stride ld, every byte 0xFF (a NaN in fp32).
    DeviceTensor(Ops& o, int64_t rows, int64_t cols, int64_t ld)
        : ops(&o), t{nullptr, DType::F32, rows, cols, ld}, bytes(size_t(rows * ld) * sizeof(float)) {
        t.data = o.alloc(bytes);
        std::vector<unsigned char> poison(bytes, 0xFF);
        o.upload(t.data, poison.data(), bytes);
    }
    ~DeviceTensor() {
        if (t.data) ops->free(t.data);
    }
    DeviceTensor(const DeviceTensor&) = delete;
    DeviceTensor& operator=(const DeviceTensor&) = delete;

    HostTensor download() const {
        HostTensor h(t.rows, t.cols, t.ld);
        ops->download(h.buf.data(), t.data, bytes);
        return h;
    }
};

// Any bytes (weights, tables, small vectors) copied to a backend; freed with it.
struct DeviceBytes {
    Ops* ops = nullptr;
    void* p = nullptr;
    DeviceBytes(Ops& o, const void* src, size_t n) : ops(&o), p(o.alloc(n)) { o.upload(p, src, n); }
    template <typename T>
    DeviceBytes(Ops& o, const std::vector<T>& v) : DeviceBytes(o, v.data(), v.size() * sizeof(T)) {}
    ~DeviceBytes() { ops->free(p); }
    DeviceBytes(const DeviceBytes&) = delete;
    DeviceBytes& operator=(const DeviceBytes&) = delete;
    template <typename T>
    T* as() const {
        return static_cast<T*>(p);
    }
};

// max |a - b| / max |b| over the first `cols` of every row (padding ignored); infinite when
// `a` holds a NaN or infinity where `b` is finite (a poisoned element never written).
inline double tensor_error(const HostTensor& a, const HostTensor& b) {
    std::vector<double> va, vb;
    for (int64_t r = 0; r < b.t.rows; ++r)
        for (int64_t c = 0; c < b.t.cols; ++c) {
            if (!std::isfinite(a.at(r, c)) && std::isfinite(b.at(r, c))) return INFINITY;
            va.push_back(a.at(r, c));
            vb.push_back(b.at(r, c));
        }
    return relative_error(va, vb);
}

// max |a - b| / max |b| between two GPU results of the same shape, over the elements where b is a
// number (NaN in b: padding neither wrote); infinite where a is not finite there.
inline double relative_gap(const std::vector<float>& a, const std::vector<float>& b) {
    double diff = 0.0, peak = 0.0;
    for (size_t i = 0; i < b.size(); ++i) {
        if (std::isnan(b[i])) continue;
        if (!std::isfinite(a[i])) return INFINITY;
        diff = std::max(diff, double(std::fabs(a[i] - b[i])));
        peak = std::max(peak, double(std::fabs(b[i])));
    }
    return diff / peak;
}

// Whether two GPU results hold the same bits everywhere (NaN padding included).
inline bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace niwa::kernels::test
