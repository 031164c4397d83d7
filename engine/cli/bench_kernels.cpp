#include "engine/cli/bench_kernels.h"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <cstdio>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>

#include "engine/model/synthetic_weights.h"
#include "kernels/formats.h"
#ifdef NIWA_HAVE_CUDA
#include "kernels/cuda/bench_kernels.h"
#include "kernels/cuda/bench_sequence.h"
#include "kernels/cuda/cuda_ops.h"
#endif

namespace niwa::cli {

#ifdef NIWA_HAVE_CUDA
namespace {

constexpr int kIters = 50;

}  // namespace

kernels::Weight bench_random_weight(kernels::Ops& ops, kernels::DType type, int64_t in, int64_t out,
                                    bool as_loaded) {
    const size_t row_bytes = kernels::dtype_row_bytes(type, in);
    std::vector<uint8_t> host(row_bytes * size_t(out));
    const model::TensorSpec spec{"bench.weight", {in, out}, model::TensorKind::Ternary, true};
    model::fill_synthetic_tensor(spec, static_cast<gguf::TensorType>(static_cast<uint32_t>(type)), 1, 0, host,
                                 int(std::max(1u, std::thread::hardware_concurrency())));
    const kernels::DType layout = as_loaded ? ops.matmul_layout(type, in, out) : type;
    if (layout != type) host = kernels::convert_rows(type, layout, host.data(), row_bytes, out, in);
    void* p = ops.alloc(host.size());
    ops.upload(p, host.data(), host.size());
    return kernels::Weight{p, layout, in, out, kernels::dtype_row_bytes(layout, in)};
}

nlohmann::ordered_json bench_kernels(const model::Model& m, const std::vector<int64_t>& batches, int context,
                                     double bandwidth, bool json) {
    const model::HParams& hp = m.hparams();
    auto ops = kernels::make_cuda_ops(0, m.config().precision);
    nlohmann::ordered_json out;
    // Every distinct ternary matrix shape the forward multiplies by: the decoder layers' (stacked
    // as the engine stacks them on a GPU, weights.h) and the output head's.
    std::set<std::tuple<uint32_t, int64_t, int64_t>> shapes;
    auto ternary = [](const gguf::TensorInfo* t) {
        const auto type = static_cast<kernels::DType>(static_cast<uint32_t>(t->type));
        return t->n_dims == 2 && (type == kernels::DType::PQ2_0 || type == kernels::DType::PTQ1_0);
    };
    // Attention's q, k and v are one matrix for steps of one token and q and k+v apart for more
    // (RankForward::attention_layer): all three shapes are listed (`alone`: the parts too).
    struct Stack {
        std::vector<std::string> parts;
        bool alone;
    };
    const std::vector<Stack> stacks = {{{"attn_qkv", "attn_gate"}, false},
                                       {{"attn_k", "attn_v"}, false},
                                       {{"ffn_gate", "ffn_up"}, false},
                                       {{"attn_q", "attn_k", "attn_v"}, true}};
    std::set<std::string> stacked;
    for (int il = 0; il < hp.n_layer; ++il) {
        const std::string p = "blk." + std::to_string(il) + ".";
        for (const auto& [group, alone] : stacks) {
            const gguf::TensorInfo* first = m.file().tensor(p + group[0] + ".weight");
            if (!first || !ternary(first)) continue;
            int64_t rows = 0;
            bool same = true;
            for (const std::string& part : group) {
                const gguf::TensorInfo* t = m.file().tensor(p + part + ".weight");
                same = same && t && t->type == first->type && t->ne[0] == first->ne[0];
                if (t) rows += t->ne[1];
            }
            if (!same) continue;
            if (!alone)
                for (const std::string& part : group) stacked.insert(p + part + ".weight");
            shapes.insert({uint32_t(first->type), first->ne[0], rows});
        }
    }
    for (const gguf::TensorInfo& t : m.file().tensors()) {
        if (!ternary(&t) || stacked.count(t.name)) continue;
        const bool layer =
            t.name.rfind("blk.", 0) == 0 && std::stoi(t.name.substr(4)) < hp.n_layer;  // not MTP
        if (!layer && t.name != "output.weight") continue;
        shapes.insert({uint32_t(t.type), t.ne[0], t.ne[1]});
    }
    out["matmul"] = nlohmann::json::array();
    out["matmul_prefill"] = nlohmann::json::array();
    for (const auto& [type, in, rows] : shapes) {
        const kernels::Weight w = bench_random_weight(*ops, kernels::DType(type), in, rows);
        // The decode kernel of the layout the model loads, and of the file's own where it differs.
        std::vector<kernels::Weight> layouts = {w};
        if (w.type != kernels::DType(type))
            layouts.push_back(bench_random_weight(*ops, kernels::DType(type), in, rows, /*as_loaded=*/false));
        for (const kernels::Weight& lw : layouts)
            for (const int64_t n : batches) {
                const kernels::KernelTiming t = kernels::time_matmul(*ops, lw, int(n), kIters);
                nlohmann::ordered_json r;
                r["type"] = kernels::dtype_name(lw.type);
                r["in"] = in;
                r["out"] = rows;
                r["rows"] = n;
                r["us"] = t.seconds * 1e6;
                r["gb_s"] = t.bytes / t.seconds / 1e9;
                r["fraction"] = t.bytes / t.seconds / bandwidth;
                if (!json)
                    std::printf("matmul %-6s %6lldx%-6lld n=%-2lld %8.1f us  %7.0f GB/s  %5.1f%%\n",
                                r["type"].get<std::string>().c_str(), static_cast<long long>(rows),
                                static_cast<long long>(in), static_cast<long long>(n), t.seconds * 1e6,
                                t.bytes / t.seconds / 1e9, 100.0 * t.bytes / t.seconds / bandwidth);
                out["matmul"].push_back(r);
            }
        for (size_t i = 1; i < layouts.size(); ++i) ops->free(const_cast<void*>(layouts[i].data));
        // Prefill-sized row counts (a short prompt, a batch of them, a whole chunk) through each
        // prefill path (cuda_ops.h PrefillGemm): where cuBLAS on dequantized weights pays.
        auto& cuda = dynamic_cast<kernels::cuda::CudaOps&>(*ops);
        for (const int n : {48, 128, m.config().max_step_tokens})
            for (const auto path :
                 {kernels::cuda::CudaOps::PrefillGemm::Cublas, kernels::cuda::CudaOps::PrefillGemm::Tiles}) {
                cuda.set_prefill_gemm(path);
                const kernels::KernelTiming t = kernels::time_matmul(*ops, w, n, 5);
                const char* name = path == kernels::cuda::CudaOps::PrefillGemm::Cublas ? "cublas" : "tiles";
                out["matmul_prefill"].push_back({{"type", kernels::dtype_name(w.type)},
                                                 {"in", in},
                                                 {"out", rows},
                                                 {"rows", n},
                                                 {"path", name},
                                                 {"us", t.seconds * 1e6},
                                                 {"tflops", t.flops / t.seconds / 1e12}});
                if (!json)
                    std::printf("matmul prefill %-6s %6lldx%-6lld n=%-5d %-6s %9.1f us  %6.1f TFLOP/s\n",
                                kernels::dtype_name(w.type), static_cast<long long>(rows),
                                static_cast<long long>(in), n, name, t.seconds * 1e6,
                                t.flops / t.seconds / 1e12);
            }
        cuda.set_prefill_gemm(kernels::cuda::CudaOps::PrefillGemm::Auto);
        ops->free(const_cast<void*>(w.data));
    }
    out["attention_decode"] = nlohmann::json::array();
    out["gdn_decode"] = nlohmann::json::array();
    const kernels::DType pool =
        m.kv_type() == kernels::DType::F16 ? kernels::DType::F16 : kernels::DType::F32;
    const double kv_token = 2.0 * hp.n_head_kv * hp.head_dim * double(kernels::dtype_block_bytes(pool));
    const double state = double(hp.ssm_n_v_heads) * hp.ssm_d_state * hp.ssm_d_state * sizeof(float);
    for (int64_t b : batches) {
        const double ta = kernels::cuda::time_attention_decode(*ops, int(b), context, hp.n_head, hp.n_head_kv,
                                                               hp.head_dim, kIters, pool);
        const double ba = double(b) * kv_token * context;
        const double tg =
            kernels::cuda::time_gdn_decode(*ops, int(b), int(hp.ssm_n_v_heads), int(hp.ssm_n_k_heads),
                                           int(hp.ssm_d_state), int(hp.ssm_d_state), kIters);
        const double bg = double(b) * 2.0 * state;
        out["attention_decode"].push_back({{"batch", b},
                                           {"pool", kernels::dtype_name(pool)},
                                           {"context", context},
                                           {"us", ta * 1e6},
                                           {"gb_s", ba / ta / 1e9},
                                           {"fraction", ba / ta / bandwidth}});
        out["gdn_decode"].push_back(
            {{"batch", b}, {"us", tg * 1e6}, {"gb_s", bg / tg / 1e9}, {"fraction", bg / tg / bandwidth}});
        if (!json) {
            std::printf("attention decode batch %-3lld ctx %-6d %8.1f us  %7.0f GB/s  %5.1f%%\n",
                        static_cast<long long>(b), context, ta * 1e6, ba / ta / 1e9,
                        100.0 * ba / ta / bandwidth);
            std::printf("delta rule decode batch %-3lld        %8.1f us  %7.0f GB/s  %5.1f%%\n",
                        static_cast<long long>(b), tg * 1e6, bg / tg / 1e9, 100.0 * bg / tg / bandwidth);
        }
    }
    // Prefill attention: one sequence of n new tokens from an empty cache on an F16 pool; its
    // FLOPs are 4 * heads * head_dim per causal (query, key) pair.
    out["attention_prefill"] = nlohmann::json::array();
    for (int n : {2048, 8192}) {
        const double t = kernels::cuda::time_attention_prefill(*ops, 1, n, hp.n_head, hp.n_head_kv,
                                                               hp.head_dim, n > 2048 ? 5 : 20);
        const double flops = 4.0 * hp.n_head * hp.head_dim * (double(n) * (n + 1) / 2);
        out["attention_prefill"].push_back({{"tokens", n},
                                            {"pool", kernels::dtype_name(kernels::DType::F16)},
                                            {"us", t * 1e6},
                                            {"flops", flops},
                                            {"tflop_s", flops / t / 1e12}});
        if (!json)
            std::printf("attention prefill %-5d tokens     %9.1f us  %6.1f TFLOP/s\n", n, t * 1e6,
                        flops / t / 1e12);
    }
    // Prefill delta rule (chunked): one sequence of 2048 new tokens from a state. FLOPs as
    // cmd_bench.cpp's prefill counts them (8 dk dv per token and value head); bytes: q, k, v,
    // the gates and o once, the state read and written (the chunk workspace not counted).
    {
        constexpr int kTokens = 2048;
        const int nv = int(hp.ssm_n_v_heads), nk = int(hp.ssm_n_k_heads), ds = int(hp.ssm_d_state);
        const double t = kernels::cuda::time_gdn_prefill(*ops, 1, kTokens, nv, nk, ds, ds, 20);
        const double flops = 8.0 * kTokens * nv * double(ds) * ds;
        const double bytes = sizeof(float) * (double(kTokens) * (2.0 * nk * ds + 2.0 * nv * ds + 2.0 * nv) +
                                              2.0 * nv * double(ds) * ds);
        out["gdn_prefill"] = nlohmann::json::array();
        out["gdn_prefill"].push_back({{"batch", 1},
                                      {"tokens", kTokens},
                                      {"us", t * 1e6},
                                      {"gflop_s", flops / t / 1e9},
                                      {"gb_s", bytes / t / 1e9},
                                      {"fraction", bytes / t / bandwidth}});
        if (!json)
            std::printf("delta rule prefill %-5d tokens    %9.1f us  %7.0f GFLOP/s  %7.0f GB/s  %5.1f%%\n",
                        kTokens, t * 1e6, flops / t / 1e9, bytes / t / 1e9, 100.0 * bytes / t / bandwidth);
    }
    return out;
}

#else

nlohmann::ordered_json bench_kernels(const model::Model&, const std::vector<int64_t>&, int, double, bool) {
    throw std::runtime_error("bench --kernels needs a build with the CUDA backend");
}

#endif

}  // namespace niwa::cli
