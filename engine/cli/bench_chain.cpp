#include "engine/cli/bench_chain.h"

#include <cstdio>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/model/hparams.h"
#ifdef NIWA_HAVE_CUDA
#include "engine/cli/bench_kernels.h"
#include "kernels/cuda/bench_sequence.h"
#include "kernels/cuda/cuda_ops.h"
#include "kernels/cuda/matmul_chain.h"
#endif

namespace niwa::cli {

#ifdef NIWA_HAVE_CUDA
namespace {

struct LinkShape {
    int64_t in = 0, out = 0;
};

// The step's matmuls in order: per layer attention's q+k+v and output or GDN's qkv+z and output,
// then gate+up and down; the output head last.
std::vector<LinkShape> step_matmuls(const gguf::Reader& file, int n_layer) {
    auto shape = [&](const std::vector<std::string>& names) {
        LinkShape s;
        for (const std::string& n : names) {
            const gguf::TensorInfo* t = file.tensor(n);
            if (!t || t->n_dims != 2 || t->type != gguf::TensorType::PQ2_0)
                throw std::runtime_error("bench --chain: " + n + " is missing or not a PQ2_0 matrix");
            if (s.in && s.in != t->ne[0])
                throw std::runtime_error("bench --chain: " + n + " cannot be stacked");
            s.in = t->ne[0];
            s.out += t->ne[1];
        }
        return s;
    };
    std::vector<LinkShape> links;
    for (int il = 0; il < n_layer; ++il) {
        const std::string p = "blk." + std::to_string(il) + ".";
        if (file.tensor(p + "attn_q.weight")) {
            links.push_back(shape({p + "attn_q.weight", p + "attn_k.weight", p + "attn_v.weight"}));
            links.push_back(shape({p + "attn_output.weight"}));
        } else {
            links.push_back(shape({p + "attn_qkv.weight", p + "attn_gate.weight"}));
            links.push_back(shape({p + "ssm_out.weight"}));
        }
        links.push_back(shape({p + "ffn_gate.weight", p + "ffn_up.weight"}));
        links.push_back(shape({p + "ffn_down.weight"}));
    }
    links.push_back(shape({"output.weight"}));
    return links;
}

}  // namespace

nlohmann::ordered_json bench_chain(const gguf::Reader& file, double bandwidth, bool json) {
    const model::HParams hp = model::HParams::from_gguf(file);
    const std::vector<LinkShape> shapes = step_matmuls(file, int(hp.n_layer));
    auto owned = kernels::make_cuda_ops(0, kernels::Precision::Mixed);
    auto& ops = dynamic_cast<kernels::cuda::CudaOps&>(*owned);
    ops.set_decode_x8(true);
    // One random matrix a shape, copied for every link: each link reads its own from DRAM.
    std::vector<kernels::Weight> proto;
    std::vector<void*> allocs;
    std::vector<kernels::cuda::ChainLink> links;
    int64_t widest = 0;
    for (const LinkShape& s : shapes) widest = std::max(widest, s.in);
    std::vector<float> hx(static_cast<size_t>(widest));
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (float& v : hx) v = dist(rng);
    auto* x = static_cast<float*>(ops.alloc(hx.size() * sizeof(float)));
    allocs.push_back(x);
    ops.upload(x, hx.data(), hx.size() * sizeof(float));
    for (size_t i = 0; i < shapes.size(); ++i) {
        const LinkShape& s = shapes[i];
        const kernels::Weight* same = nullptr;
        for (const kernels::Weight& w : proto)
            if (w.in == s.in && w.out == s.out) same = &w;
        if (!same) {
            proto.push_back(bench_random_weight(ops, kernels::DType::PQ2_0, s.in, s.out));
            allocs.push_back(const_cast<void*>(proto.back().data));
            same = &proto.back();
        }
        kernels::Weight w = *same;
        const size_t bytes = static_cast<size_t>(w.out) * w.row_stride;
        void* copy = ops.alloc(bytes);
        allocs.push_back(copy);
        NIWA_CUDA_CHECK(cudaMemcpyAsync(copy, w.data, bytes, cudaMemcpyDeviceToDevice, ops.stream()));
        w.data = copy;
        auto* y = static_cast<float*>(ops.alloc(static_cast<size_t>(s.out) * sizeof(float)));
        allocs.push_back(y);
        const bool from_before = i > 0 && shapes[i - 1].out == s.in;
        links.push_back({w, from_before ? nullptr : x, y});
    }
    double result_chain = 0, result_separate = 0;
    size_t weight_bytes = 0;
    int blocks = 0;
    try {
        kernels::cuda::MatmulChain chain(ops, links);
        weight_bytes = chain.weight_bytes();
        blocks = chain.blocks();
        constexpr int kIters = 20;
        result_chain = kernels::cuda::time_calls(ops, kIters, [&] { chain.run(); });
        result_separate = kernels::cuda::time_calls(ops, kIters, [&] {
            for (size_t i = 0; i < links.size(); ++i) {
                const kernels::cuda::ChainLink& l = links[i];
                const float* in = l.x ? l.x : links[i - 1].y;
                ops.matmul(l.w,
                           kernels::Tensor{const_cast<float*>(in), kernels::DType::F32, 1, l.w.in, l.w.in},
                           kernels::Tensor{l.y, kernels::DType::F32, 1, l.w.out, l.w.out});
            }
        });
    } catch (...) {
        for (void* p : allocs) ops.free(p);
        throw;
    }
    for (void* p : allocs) ops.free(p);
    const double bound = double(weight_bytes) / bandwidth;
    nlohmann::ordered_json out{{"links", links.size()},
                               {"blocks", blocks},
                               {"weight_bytes", weight_bytes},
                               {"bound_us", bound * 1e6},
                               {"chain_us", result_chain * 1e6},
                               {"chain_fraction", bound / result_chain},
                               {"separate_us", result_separate * 1e6},
                               {"separate_fraction", bound / result_separate}};
    if (!json)
        std::printf(
            "matmul chain: %zu links, %.2f GB: one kernel %8.1f us (%5.1f%%), one launch each %8.1f us "
            "(%5.1f%%), bound %.1f us\n",
            links.size(), double(weight_bytes) / 1e9, result_chain * 1e6, 100.0 * bound / result_chain,
            result_separate * 1e6, 100.0 * bound / result_separate, bound * 1e6);
    return out;
}

#else

nlohmann::ordered_json bench_chain(const gguf::Reader&, double, bool) {
    throw std::runtime_error("bench --chain needs a build with the CUDA backend");
}

#endif

}  // namespace niwa::cli
