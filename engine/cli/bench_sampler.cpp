#include "engine/cli/bench_sampler.h"

#include <spdlog/fmt/fmt.h>

#include <chrono>
#include <cstdio>
#include <random>
#include <string>

#include "engine/sched/sampler.h"
#include "kernels/ops.h"

namespace niwa::cli {

namespace {

struct ParamSet {
    const char* name;
    kernels::SampleParams params;
};

// Greedy; a chat front end's usual temperature and nucleus; OpenAI's defaults (temperature 1,
// no filter); a top_k sampler.
const ParamSet kSets[] = {
    {"greedy", {0.0f, 0, 1.0f, 0.0f, 0.0f}},
    {"T0.7 top_p0.9", {0.7f, 0, 0.9f, 0.0f, 0.0f}},
    {"T1.0", {1.0f, 0, 1.0f, 0.0f, 0.0f}},
    {"T0.8 top_k40", {0.8f, 40, 1.0f, 0.0f, 0.0f}},
};

}  // namespace

nlohmann::ordered_json bench_sampler(int64_t vocab, const std::vector<int64_t>& batches, bool json) {
    using Clock = std::chrono::steady_clock;
    auto ops = kernels::make_cpu_ops(sched::sampler_threads());  // as the server's sampler
    nlohmann::ordered_json out = nlohmann::json::array();
    std::mt19937 rng(7);
    std::normal_distribution<float> dist(0.0f, 2.0f);
    std::uniform_real_distribution<float> unif(0.0f, 1.0f);
    std::uniform_int_distribution<int64_t> token(0, vocab - 1);
    // Two kinds of row: "peaked", a trained model's usual shape (16 tokens 8.5 to 16 above a broad
    // tail, about 90 % of the mass at T = 1), and "flat" (the tail alone: the nucleus and the draw
    // reach far down the order, the sampler's worst case).
    for (const char* shape : {"peaked", "flat"})
        for (const int64_t b : batches) {
            std::vector<float> logits(static_cast<size_t>(b * vocab));
            for (float& x : logits) x = dist(rng);
            if (shape[0] == 'p')
                for (int64_t r = 0; r < b; ++r)
                    for (int j = 0; j < 16; ++j) logits[size_t(r * vocab + token(rng))] += 16.0f - 0.5f * j;
            const kernels::Tensor t{logits.data(), kernels::DType::F32, b, vocab, vocab};
            for (const ParamSet& set : kSets) {
                std::vector<kernels::SampleParams> params(static_cast<size_t>(b), set.params);
                std::vector<int32_t> ids(static_cast<size_t>(b));
                const int reps = 5;
                double seconds = 0.0;
                for (int i = 0; i < reps; ++i) {
                    for (auto& p : params) p.uniform = unif(rng);
                    const auto t0 = Clock::now();
                    ops->sample(t, params.data(), ids.data());
                    seconds += std::chrono::duration<double>(Clock::now() - t0).count();
                }
                const double step_ms = seconds / reps * 1e3;
                out.push_back({{"rows", shape},
                               {"batch", b},
                               {"vocab", vocab},
                               {"params", set.name},
                               {"threads", sched::sampler_threads()},
                               {"step_ms", step_ms}});
                if (!json)
                    std::printf("sample  %-6s batch %4lld  vocab %7lld  %-14s %9.2f ms/step\n", shape,
                                static_cast<long long>(b), static_cast<long long>(vocab), set.name, step_ms);
            }
        }
    return out;
}

}  // namespace niwa::cli
