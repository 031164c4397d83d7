// The CUDA backend: one class, its ops defined in one .cu file per family (matmul.cu,
// attention.cu, gated_delta_rule.cu, ...). Every op is asynchronous on the backend's stream;
// host arrays in the interface (kv_of_q, key_of_v, StepInfo::host_seqs) are read at launch.
// This header is included by .cu files: C++17 only.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "kernels/op_checks.h"
#include "kernels/ops.h"

struct ncclComm;  // nccl.h's communicator (device_group.cpp)

namespace niwa::kernels::cuda {

class PeerExchange;

// Throws std::runtime_error naming the call, the file and line, and CUDA's message.
void check(cudaError_t err, const char* what, const char* file, int line);
#define NIWA_CUDA_CHECK(expr) ::niwa::kernels::cuda::check((expr), #expr, __FILE__, __LINE__)
// After a kernel launch: reports launch-configuration errors at once.
#define NIWA_CUDA_LAUNCHED(name) ::niwa::kernels::cuda::check(cudaGetLastError(), name, __FILE__, __LINE__)
// Whether the environment sets `name` to "0": the switches that turn a path off for measurements.
bool env_switched_off(const char* name);

class CudaOps final : public Ops {
public:
    CudaOps(int device, Precision precision);
    ~CudaOps() override;
    const char* name() const override { return "cuda"; }

    int device() const { return device_; }
    Precision precision() const { return precision_; }
    cudaStream_t stream() const { return stream_; }
    const cudaDeviceProp& props() const { return props_; }
    // Bytes of static __shared__ memory `kernel` has on this device (its architecture's code
    // decides them; asked of the driver once a kernel). A block's dynamic shared memory may take
    // the opt-in size (sharedMemPerBlockOptin) less these, and more than sharedMemPerBlock
    // (48 KiB) less these only once the kernel is allowed it (allow_max_smem).
    template <typename K>
    size_t static_smem(K* kernel) const {
        return static_smem_of(reinterpret_cast<const void*>(kernel));
    }
    // Whether kernels that support it are launched to overlap the one before them (pdl.cuh):
    // on sm_90 and later, unless NIWA_PDL=0 in the environment (for measurements).
    bool overlap_launches() const { return overlap_; }
    // How matmuls of more than 32 rows run in Precision::Mixed: Auto takes cuBLAS on fp16
    // weights dequantized to scratch (matmul_cublas.cu), measured faster than the tensor-core
    // tiles (matmul_prefill.cu) on every layer shape from 48 rows (docs/BENCHMARKS.md); Cublas
    // and Tiles force one, for tests and measurements (NIWA_PREFILL_GEMM=cublas|tiles in the
    // environment does the same).
    enum class PrefillGemm { Auto, Cublas, Tiles };
    PrefillGemm prefill_gemm() const { return prefill_gemm_; }
    void set_prefill_gemm(PrefillGemm g) { prefill_gemm_ = g; }
    // Which kernel multiplies PQ2_0S weights by at most 32 rows of x: the register kernel
    // (matmul_decode_split.cu), its ring form (the same arithmetic, whole runs streamed through
    // shared memory; where the device holds it, else the register kernel) or the staged kernel
    // (matmul_decode.cu), or on an sm_90 GPU the wgmma kernel (matmul_decode_wgmma.cu: PQ2_0T
    // of whole runs, where sm_90a code was built; elsewhere Auto's pick stands in). Auto picks per
    // shape and row count as measured fastest on the H200 (decode_kernel in matmul.cu,
    // docs/BENCHMARKS.md); the others force one, for tests and measurements
    // (NIWA_DECODE_GEMM=registers|ring|staged|wgmma).
    enum class DecodeGemm { Auto, Registers, Ring, Staged, Wgmma };
    DecodeGemm decode_gemm() const { return decode_gemm_; }
    // Whether this device runs the wgmma decode kernel: an sm_90 GPU, and sm_90a code built.
    bool has_wgmma_decode() const;
    void set_decode_gemm(DecodeGemm g) { decode_gemm_ = g; }
    // The smallest matrix Auto gives the wgmma kernel at 9-32 rows (decode_kernel, matmul.cu):
    // kWgmmaMinBytes, or NIWA_WGMMA_MIN_MB=N in the environment (for measurements).
    static constexpr size_t kWgmmaMinBytes = size_t(4) << 20;
    size_t wgmma_min_bytes() const { return wgmma_min_bytes_; }
    // Whether rotated_matmul builds its input inside the register decode kernel
    // (matmul_decode.cuh, stage_rotated) where that kernel runs and takes it (1-4 rows), and
    // matmul_conv1d_silu runs the conv as a decode kernel stores its outputs (decode steps);
    // else they run the ops they are made of. On unless NIWA_FUSE_INPUTS=0 in the environment
    // (for measurements); tests set both.
    bool fuse_inputs() const { return fuse_inputs_; }
    void set_fuse_inputs(bool on) { fuse_inputs_ = on; }
    // Whether norms_in_matmuls says yes where it may (else the model runs residual_norm): on
    // unless NIWA_NORMS_IN_MATMULS=0 in the environment (for measurements); tests set both.
    void set_norms_in_matmuls(bool on) { norms_in_matmuls_ = on; }
    // Whether kernels read `step`'s history before their PDL wait (the attention decode its
    // cached tokens, the recurrent delta rule its state): where the step is settled
    // (StepInfo::settled), unless NIWA_EARLY_READS=0 in the environment (for measurements).
    bool reads_early(const StepInfo& step) const { return step.settled && early_reads_; }
    // Whether each wgmma block copies its record's x in two halves, its first tile's units waiting
    // for their own half only (else whole before its first tile): on unless NIWA_RECORD_HALVES=0
    // in the environment (for measurements; docs/BENCHMARKS.md, forty-second pass).
    bool record_halves() const { return record_halves_; }
    void set_record_halves(bool on) { record_halves_ = on; }
    // Whether the wgmma decode kernel subtracts x's bias sums on the tensor cores once a
    // tile-slice (three tf32 wgmma, the sums split exactly in three), rather than one FADD an output a
    // quant block as the register kernel does (then its bits are the register kernel's): on
    // unless NIWA_WGMMA_BIAS_MMA=0 in the environment (for measurements); tests set both.
    bool wgmma_bias_mma() const { return wgmma_bias_mma_; }
    void set_wgmma_bias_mma(bool on) { wgmma_bias_mma_ = on; }
    // Whether the register decode kernel at 1-4 rows of x multiplies with x as two int8 values an
    // input, a scale per row and 128-input quant block (matmul_decode_x8.cuh): twice the weights an
    // mma, where the fp16 mma fed with decoded weights cannot keep up with the copy rate, and x
    // within 2^-16 of its block's largest value, nearer than fp16 (docs/BENCHMARKS.md,
    // twenty-seventh pass). On unless NIWA_DECODE_X8=0 in the environment (for measurements);
    // tests set it.
    bool decode_x8() const { return decode_x8_; }
    void set_decode_x8(bool on) { decode_x8_ = on; }
    // From how many outputs of a decode matmul's row group its slices share the sum of their
    // partials (matmul_decode.cuh, sum_slices) rather than the last of them summing it alone:
    // kSharedSumOutputs (docs/BENCHMARKS.md, thirty-first pass: 1024 against 4096, +4.8 % at 4 rows,
    // +1.5 % at 8, 1-2 rows unchanged), NIWA_SHARED_SUM_OUTPUTS=N in the environment, or
    // never where NIWA_SHARED_SUMS=0 (for measurements); tests also set 1 (always).
    static constexpr int64_t kSharedSumOutputs = 1024;
    static constexpr int64_t kNeverShared = INT64_MAX;
    int64_t shared_sum_outputs() const { return shared_sum_outputs_; }
    void set_shared_sum_outputs(int64_t n) { shared_sum_outputs_ = n; }
    // Attention decode's split-K (attention.cu): its splits fill attn_waves(cap) waves of the
    // blocks the SMs hold at once, each split at least attn_min_split_tokens() cached tokens (cap:
    // the most splits that allows the step's longest context, a power of two). One wave below
    // kTwoWavesCap, two from it: at context 4096, 128 tokens and one wave against 64 and two made
    // batches 1-8 1.1-3.1 % faster and batch 24 0.5 %; at 32K one wave lost 2 % at batch 24
    // (docs/BENCHMARKS.md, twenty-sixth and thirty-second passes). NIWA_ATTN_WAVES=N (every cap) and
    // NIWA_ATTN_MIN_SPLIT_TOKENS=N in the environment set them for measurements.
    static constexpr int kMinSplitTokens = 128;
    static constexpr int64_t kTwoWavesCap = 64;  // contexts from 8192 tokens
    int attn_waves(int64_t cap) const { return attn_waves_ > 0 ? attn_waves_ : cap < kTwoWavesCap ? 1 : 2; }
    int attn_min_split_tokens() const { return attn_min_split_tokens_; }
    // The most bytes of fp16 weights the cuBLAS path dequantizes at once; a larger matrix runs
    // as slabs of rows (default 128 MiB; tests lower it to cover the slabs).
    size_t gemm_scratch_limit() const { return gemm_scratch_limit_; }
    void set_gemm_scratch_limit(size_t bytes) { gemm_scratch_limit_ = bytes; }
    // The backend's cuBLAS handle on its stream, created on first use.
    cublasHandle_t blas();
    // PQ2_0 matrices are re-laid as PQ2_0S, whose aligned runs the decode matmuls read with
    // plain 16-byte copies or loads straight into registers (matmul_decode_split.cu).
    DType weight_layout(DType file_type) const override {
        return file_type == DType::PQ2_0 ? DType::PQ2_0S : file_type;
    }
    // Matrices of whole runs and tiles in mixed precision are PQ2_0T, whose tiles the decode
    // matmuls read 256 contiguous bytes a load (formats.h; docs/BENCHMARKS.md, tenth pass).
    DType matmul_layout(DType file_type, int64_t in, int64_t out) const override {
        if (file_type == DType::PQ2_0 && precision_ == Precision::Mixed && in % kSplitRunElems == 0 &&
            out % kTiledRows == 0)
            return DType::PQ2_0T;
        return weight_layout(file_type);
    }
    MemoryInfo memory_info() const override;
    void bind() override;

    // Every allocation has kTailPad readable bytes past its end, so a kernel may load a row's
    // tail with one 16-byte vector load (the packed weight rows are not multiples of 16 bytes).
    static constexpr size_t kTailPad = 16;
    void* alloc(size_t bytes) override;
    void free(void* p) override;
    void upload(void* dst, const void* host_src, size_t bytes) override;
    void download(void* host_dst, const void* src, size_t bytes) override;
    void download_rows(void* host_dst, size_t dst_pitch, const void* src, size_t src_pitch, size_t row_bytes,
                       size_t rows) override;  // one cudaMemcpy2DAsync, or a plain copy
    void copy(void* dst, const void* src, size_t bytes) override;
    void zero(void* dst, size_t bytes) override;
    void synchronize() override;
    void* alloc_host(size_t bytes) override;  // cudaMallocHost: page-locked
    void free_host(void* p) override;

    void matmul(const Weight& w, const Tensor& x, const Tensor& y) override;
    void rotated_matmul(const Weight& w, const RotatedInput& in, const Tensor& staged,
                        const Tensor& y) override;
    Tensor rotated_matmul_add(const Weight& w, const RotatedInput& in, const Tensor& staged, const Tensor& y,
                              const Tensor& x) override;
    void rotated_matmul_conv1d_silu(const Weight& w, const RotatedInput& in, const Tensor& staged,
                                    const Tensor& y, const float* conv_w, int kernel, const GdnState& st,
                                    const StepInfo& step, const Tensor& conv_out) override;
    // At one row (the ops build it at 1-4 rows, where the register decode kernel runs), with
    // fuse_inputs and norms_in_matmuls on, no other decode kernel forced, no device group; Mixed
    // precision.
    bool norms_in_matmuls(int64_t rows) const override;
    // Where the recurrent kernel makes them (a few tokens, fuse_inputs on); else alpha and beta's
    // small matmul runs before the layer's large one, not between the conv and the recurrent
    // kernel, whose blocks load the state early beside it. NIWA_AB_FIRST=0: always to the op.
    bool gdn_ab_in_delta_rule(int64_t tokens) const override;
    void rotate(const Tensor& x, const Rotation& r, bool signs_first, const Tensor& y) override;
    void embed(const Weight& table, const int32_t* ids, int64_t row0, const Tensor& y) override;
    void rmsnorm(const Tensor& x, const float* w, float eps, const Tensor& y) override;
    void residual_norm(const Tensor& x, const Tensor& y, const float* w, float eps, const Tensor& xn,
                       const Rotation& r, const Tensor& xr) override;
    void l2norm(const Tensor& x, float eps, const Tensor& y) override;
    void add(const Tensor& a, const Tensor& b, const Tensor& y) override;
    void swiglu(const Tensor& gate, const Tensor& up, const Tensor& y) override;
    void swiglu_rotate(const Tensor& gate, const Tensor& up, const Rotation& r, const Tensor& y) override;
    void sigmoid_mul(const Tensor& x, const Tensor& gate, const Tensor& y) override;
    void rope(const Tensor& x, int head_dim, int n_rot, float theta, const StepInfo& step) override;
    void qk_norm_rope(const Tensor& q, const float* q_w, const Tensor& q_out, const Tensor& k,
                      const float* k_w, const Tensor& k_out, float eps, int n_rot, float theta,
                      const StepInfo& step) override;

    void kv_store(const KvLayer& kv, const Tensor& k, const Tensor& v, const StepInfo& step) override;
    void qk_norm_rope_store(const Tensor& q, const float* q_w, const Tensor& q_out, const Tensor& k,
                            const float* k_w, const Tensor& k_out, const Tensor& v, float eps, int n_rot,
                            float theta, const KvLayer& kv, const StepInfo& step) override;
    void attention(const Tensor& q, const KvLayer& kv, const int32_t* kv_of_q, float scale,
                   const StepInfo& step, const Tensor& out) override;

    void conv1d_silu(const Tensor& x, const float* w, int kernel, const GdnState& st, const StepInfo& step,
                     const Tensor& y) override;
    void matmul_conv1d_silu(const Weight& w, const Tensor& x, const Tensor& y, const float* conv_w,
                            int kernel, const GdnState& st, const StepInfo& step,
                            const Tensor& conv_out) override;
    void gdn_gates(const Tensor& alpha, const Tensor& beta, const float* a, const float* dt_bias) override;
    void gated_delta_rule(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& g,
                          const Tensor& beta, const int32_t* key_of_v, int dk, int dv, float scale,
                          const GdnState& st, const StepInfo& step, GdnMode mode, const Tensor& o) override;
    void gated_delta_rule_raw(const Tensor& qk, const Tensor& v, const Tensor& alpha, const Tensor& beta,
                              const GdnRaw& raw, const int32_t* key_of_v, int dk, int dv, float scale,
                              const GdnState& st, const StepInfo& step, GdnMode mode,
                              const Tensor& o) override;
    void rmsnorm_gated(const Tensor& x, const float* w, const Tensor& z, float eps, const Tensor& y) override;
    void rmsnorm_gated_rotate(const Tensor& x, const float* w, const Tensor& z, float eps, int64_t width,
                              const Rotation& r, const Tensor& y) override;

    void sample(const Tensor& logits, const SampleParams* params, int32_t* out_ids) override;
    void top_logits(const Tensor& logits, const TopAsk* asks, TopLogits* out) override;

    // device_group.cpp: NCCL over the GPUs of join_device_group's ranks, and for all-reduces
    // of at most its max_bytes the group's PeerExchange where it has one (peer_exchange.h).
    bool all_reduce_sum(const Tensor& t) override;
    bool in_device_group() const override { return comm_ != nullptr; }
    void join(ncclComm* comm, std::shared_ptr<const PeerExchange> exchange, int rank);
    const PeerExchange* exchange() const { return exchange_.get(); }

    std::unique_ptr<Recording> record(const std::function<void()>& issue) override;
    uint64_t recording_epoch() const override { return epoch_; }
    uint64_t launch_key(const StepInfo& step) const override;

    // Scratch device memory for op `id` (one Workspace value per user), grown on demand and
    // kept: after a warm-up step no op allocates. Valid until the next call with the same id.
    enum class Workspace {
        Matmul,
        DecodeX,
        GemmInput,
        GemmWeights,
        Rotate,
        Attention,
        GatedDeltaRule,
        Sample,
        Squares,
        Count
    };
    void* workspace(Workspace id, size_t bytes);
    // Page-locked host memory of at least `bytes` that downloads of small results land in
    // (top_logits' reductions), kept across calls.
    void* host_staging(size_t bytes);

private:
    // gated_delta_rule and, with raw, its fused form (gated_delta_rule.cu).
    void delta_rule(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& g, const Tensor& beta,
                    const GdnRaw* raw, const int32_t* key_of_v, int dk, int dv, float scale,
                    const GdnState& st, const StepInfo& step, GdnMode mode, const Tensor& o);

    bool capturing() const;  // whether stream() is being recorded into a graph
    size_t static_smem_of(const void* kernel) const;

    struct Buffer {
        void* p = nullptr;
        size_t bytes = 0;
    };
    int device_;
    Precision precision_;
    cudaStream_t stream_ = nullptr;
    cudaDeviceProp props_{};
    Buffer workspace_[static_cast<int>(Workspace::Count)];
    Buffer host_staging_;
    mutable std::mutex mu_;
    std::unordered_map<void*, size_t> sizes_;                      // live allocations
    mutable std::unordered_map<const void*, size_t> static_smem_;  // static_smem's answers
    size_t allocated_ = 0;
    uint64_t epoch_ = 0;  // bumped whenever a workspace moves
    bool overlap_ = false;
    PrefillGemm prefill_gemm_ = PrefillGemm::Auto;
    DecodeGemm decode_gemm_ = DecodeGemm::Auto;
    size_t wgmma_min_bytes_ = kWgmmaMinBytes;
    bool fuse_inputs_ = true;
    bool norms_in_matmuls_ = true;
    bool early_reads_ = true;
    int64_t shared_sum_outputs_ = kSharedSumOutputs;
    int attn_waves_ = 0;  // 0: by the cap (attn_waves)
    int attn_min_split_tokens_ = kMinSplitTokens;
    bool record_halves_ = true;
    bool wgmma_bias_mma_ = true;
    bool ab_first_ = true;
    bool decode_x8_ = true;
    size_t gemm_scratch_limit_ = size_t(128) << 20;
    cublasHandle_t blas_ = nullptr;
    ncclComm* comm_ = nullptr;                      // the device group's communicator, this rank's
    std::shared_ptr<const PeerExchange> exchange_;  // the group's, shared by its ranks
    int rank_ = 0;                                  // this rank's place in the group
    void leave_group();                             // device_group.cpp
};

// Argument checks for the op files (kernels/op_checks.h, naming this backend).
inline void require(bool ok, const char* op, const std::string& what) {
    check_arg("cuda", ok, op, what);
}
inline void require_f32(const Tensor& t, const char* op, const char* name) {
    check_f32("cuda", t, op, name);
}
inline void require_same_shape(const Tensor& a, const Tensor& b, const char* op) {
    check_same_shape("cuda", a, b, op);
}

// The conv width matmul_conv1d_silu fuses into the decode matmuls (the published models'); others
// run the two ops.
constexpr int kConvTaps = 4;

// conv1d_silu's checks of a step (conv1d.cu): every sequence's rows inside the `rows` of x, its
// state slot inside st. Returns the longest sequence's token count.
int check_conv_step(const char* op, int64_t rows, const GdnState& st, const StepInfo& step);

// Lets `kernel` take all the dynamic shared memory a block may have on ops' device: the opt-in
// size less the kernel's static shared memory (together they may not pass it). Once per device
// (`configured`: a bit per device, one per kernel).
template <typename K>
void allow_max_smem(const CudaOps& ops, K* kernel, std::atomic<uint64_t>& configured) {
    const uint64_t bit = uint64_t{1} << (ops.device() & 63);
    if (configured.load() & bit) return;
    const size_t bytes = ops.props().sharedMemPerBlockOptin - ops.static_smem(kernel);
    NIWA_CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
    configured.fetch_or(bit);
}

// Blocks of `kernel` (`threads` a block) one SM holds with `smem` bytes each, per device (asked
// once; `cached` is the kernel's own). 0 when none fits (its static shared memory included).
template <typename K>
int blocks_per_sm(const CudaOps& ops, K* kernel, int threads, size_t smem, std::atomic<int> (&cached)[64]) {
    std::atomic<int>& c = cached[ops.device() & 63];
    int n = c.load();
    if (n == 0) {
        if (smem + ops.static_smem(kernel) > ops.props().sharedMemPerBlockOptin) {
            n = -1;
        } else {
            NIWA_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, threads, smem));
            if (n == 0) n = -1;
        }
        c.store(n);
    }
    return n > 0 ? n : 0;
}

// Blocks of `threads` covering n items.
inline unsigned grid_for(long long n, int threads) {
    return static_cast<unsigned>((n + threads - 1) / threads);
}

}  // namespace niwa::kernels::cuda
