#include "engine/cli/bench_sampler.h"

#include <spdlog/fmt/fmt.h>

#include <chrono>
#include <cstdio>
#include <random>
#include <string>

#include "engine/sched/sampler.h"
#include "kernels/ops.h"
#include "kernels/sample_draw.h"

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
                // Both paths draw with the same uniforms: a flat row's draw costs more the higher its
                // uniform reaches.
                std::vector<float> uniforms(static_cast<size_t>(reps * b));
                for (float& u : uniforms) u = unif(rng);
                auto set_uniforms = [&](int rep) {
                    for (int64_t r = 0; r < b; ++r) params[size_t(r)].uniform = uniforms[size_t(rep * b + r)];
                };
                double seconds = 0.0;
                for (int i = 0; i < reps; ++i) {
                    set_uniforms(i);
                    const auto t0 = Clock::now();
                    ops->sample(t, params.data(), ids.data());
                    seconds += std::chrono::duration<double>(Clock::now() - t0).count();
                }
                const double step_ms = seconds / reps * 1e3;
                // The server's path since the rows are reduced on the GPU: each row's draw from its
                // reduction (made here, outside the timing: the GPU's work), and a row whose draw
                // reaches below it drawn whole (its download not counted).
                const kernels::TopAsk ask = kernels::top_ask(set.params);
                std::vector<kernels::TopLogits> tops(static_cast<size_t>(b));
                for (int64_t r = 0; r < b; ++r)
                    kernels::top_logits_row(logits.data() + r * vocab, vocab, ask, tops[size_t(r)]);
                double reduced_seconds = 0.0;
                int64_t whole = 0;
                std::vector<size_t> rows_whole;
                for (int i = 0; i < reps; ++i) {
                    set_uniforms(i);
                    const auto t0 = Clock::now();
                    rows_whole.clear();
                    for (int64_t r = 0; r < b; ++r) {
                        ids[size_t(r)] = kernels::draw_from_top(tops[size_t(r)], params[size_t(r)]);
                        if (ids[size_t(r)] < 0) rows_whole.push_back(size_t(r));
                    }
                    sched::sample_listed_rows(*ops, t, rows_whole, params.data(),
                                              ids.data());  // as the server
                    reduced_seconds += std::chrono::duration<double>(Clock::now() - t0).count();
                    whole += int64_t(rows_whole.size());
                }
                const double reduced_ms = reduced_seconds / reps * 1e3;
                const double whole_share = double(whole) / double(reps * b);
                out.push_back({{"rows", shape},
                               {"batch", b},
                               {"vocab", vocab},
                               {"params", set.name},
                               {"threads", sched::sampler_threads()},
                               {"step_ms", step_ms},
                               {"reduced_step_ms", reduced_ms},
                               {"reduced_rows_drawn_whole", whole_share}});
                if (!json)
                    std::printf(
                        "sample  %-6s batch %4lld  vocab %7lld  %-14s %9.2f ms/step  "
                        "from reductions %8.3f ms (%3.0f%% of rows whole)\n",
                        shape, static_cast<long long>(b), static_cast<long long>(vocab), set.name, step_ms,
                        reduced_ms, 100.0 * whole_share);
            }
        }
    return out;
}

}  // namespace niwa::cli
