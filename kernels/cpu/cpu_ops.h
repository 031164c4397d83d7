// The CPU backend: the fp32 oracle every other backend is checked against. One class, its
// ops defined in one file per family (matmul.cpp, attention.cpp, gdn.cpp, ...).
#pragma once

#include <cmath>
#include <string>

#include "kernels/cpu/thread_pool.h"
#include "kernels/op_checks.h"
#include "kernels/ops.h"

namespace niwa::kernels::cpu {

class CpuOps final : public Ops {
public:
    explicit CpuOps(int threads) : pool_(threads) {}
    const char* name() const override { return "cpu"; }
    bool host_memory() const override { return true; }

    void* alloc(size_t bytes) override;
    void free(void* p) override;
    void upload(void* dst, const void* host_src, size_t bytes) override;
    void download(void* host_dst, const void* src, size_t bytes) override;
    void copy(void* dst, const void* src, size_t bytes) override;
    void zero(void* dst, size_t bytes) override;
    void synchronize() override {}

    void matmul(const Weight& w, const Tensor& x, const Tensor& y) override;
    void rotate(const Tensor& x, const Rotation& r, bool signs_first, const Tensor& y) override;
    void embed(const Weight& table, const int32_t* ids, int64_t row0, const Tensor& y) override;
    void rmsnorm(const Tensor& x, const float* w, float eps, const Tensor& y) override;
    void l2norm(const Tensor& x, float eps, const Tensor& y) override;
    void add(const Tensor& a, const Tensor& b, const Tensor& y) override;
    void swiglu(const Tensor& gate, const Tensor& up, const Tensor& y) override;
    void sigmoid_mul(const Tensor& x, const Tensor& gate, const Tensor& y) override;
    void rope(const Tensor& x, int head_dim, int n_rot, float theta, const StepInfo& step) override;

    void kv_store(const KvLayer& kv, const Tensor& k, const Tensor& v, const StepInfo& step) override;
    void attention(const Tensor& q, const KvLayer& kv, const int32_t* kv_of_q, float scale,
                   const StepInfo& step, const Tensor& out) override;

    void conv1d_silu(const Tensor& x, const float* w, int kernel, const GdnState& st, const StepInfo& step,
                     const Tensor& y) override;
    void gdn_gates(const Tensor& alpha, const Tensor& beta, const float* a, const float* dt_bias) override;
    void gated_delta_rule(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& g,
                          const Tensor& beta, const int32_t* key_of_v, int dk, int dv, float scale,
                          const GdnState& st, const StepInfo& step, GdnMode mode, const Tensor& o) override;
    void rmsnorm_gated(const Tensor& x, const float* w, const Tensor& z, float eps, const Tensor& y) override;

    void sample(const Tensor& logits, const SampleParams* params, int32_t* out_ids) override;

private:
    ThreadPool pool_;
};

// Argument checks for the op files (kernels/op_checks.h, naming this backend).
inline void require(bool ok, const char* op, const std::string& what) {
    check_arg("cpu", ok, op, what);
}
inline void require_f32(const Tensor& t, const char* op, const char* name) {
    check_f32("cpu", t, op, name);
}
inline void require_same_shape(const Tensor& a, const Tensor& b, const char* op) {
    check_same_shape("cpu", a, b, op);
}

// Row r of an fp32 tensor.
inline float* row_f32(const Tensor& t, int64_t r) {
    return t.as<float>() + r * t.ld;
}

// fp32 dot product in eight interleaved partial sums: the same accuracy class as one running
// sum, but the compiler can vectorise it.
inline float dot_f32(const float* a, const float* b, int64_t n) {
    float lanes[8] = {};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int l = 0; l < 8; ++l) lanes[l] += a[i + l] * b[i + l];
    float sum = 0.0f;
    for (; i < n; ++i) sum += a[i] * b[i];
    for (float l : lanes) sum += l;
    return sum;
}

inline float silu(float x) {
    return x / (1.0f + std::exp(-x));
}
inline float sigmoid(float x) {
    return 1.0f / (1.0f + std::exp(-x));
}

}  // namespace niwa::kernels::cpu
