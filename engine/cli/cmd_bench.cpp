// niwa-engine bench: the whole forward's decode and prefill throughput, each reported against
// its physical limit measured on the spot (copy bandwidth for decode, a bf16 GEMM for prefill).
//
// Decode at batch B and context C runs B sequences whose caches hold C tokens (the KV rows and
// recurrent state are whatever the pool holds: the work, and so the time, is the same as for
// real text) and times steps of one new token each. Bytes per step count what a step must
// move at least: every matmul weight once, each sequence's recurrent state read and written,
// its C tokens of K and V read, and the activations; the bound is B / (bytes / bandwidth).
// Prefill feeds one P-token prompt in --step-tokens chunks; its FLOPs are the matmuls (2 per
// weight per token), attention (4 · heads · head_dim per causal pair) and the delta rule.
#include <spdlog/fmt/fmt.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>

#include "engine/cli/args.h"
#include "engine/cli/bench_all_reduce.h"
#include "engine/cli/bench_chain.h"
#include "engine/cli/bench_kernels.h"
#include "engine/cli/bench_sampler.h"
#include "engine/cli/commands.h"
#include "engine/cli/model_options.h"
#include "engine/gguf/reader.h"
#include "engine/model/hparams.h"
#include "engine/model/model.h"
#include "engine/model/sequences.h"
#include "engine/runtime/log.h"
#include "kernels/devices.h"
#include "kernels/sample_draw.h"

namespace niwa::cli {

namespace {

constexpr const char* kHelp =
    "usage: niwa-engine bench --model FILE [--backend cuda] [--batch 1,8,24] [--context N]\n"
    "                         [--prompt 512,8192] [--steps N] [--kernels] [--sampler] [--chain]\n"
    "                         [--all-reduce] [--logits greedy|sampled|whole] [--json]\n"
    "                         [model options]\n"
    "Decode and prefill throughput of the whole forward against the hardware's limits: on CUDA,\n"
    "the copy bandwidth and bf16 GEMM rate measured first; each decode row's bandwidth bound (its\n"
    "bytes at the copy rate), the fraction of it achieved and the step's time over it.\n\n"
    "  --batch LIST        decode batch sizes (default 1,8,24)\n"
    "  --context N         tokens already cached per sequence for decode (default 4096)\n"
    "  --prompt LIST       prefill prompt lengths (default 512,8192; 0: no prefill)\n"
    "  --steps N           timed decode steps per batch size (default 32)\n"
    "  --logits MODE       a decode step's logits: greedy (default) reduced on the device to each\n"
    "                      row's largest, as the server does for a greedy stream; sampled: to the\n"
    "                      candidates and mass a stream at T 0.7, top_p 0.9 asks for; whole: every\n"
    "                      row brought back (the server's path for penalties, constraints, logprobs)\n"
    "  --kernels           also time each decode kernel alone on the model's shapes (CUDA)\n"
    "  --sampler           time only the server's sampler on --batch rows of the model's vocabulary\n"
    "  --chain             time only a batch-1 step's matmuls at the model's shapes, as one persistent\n"
    "                      kernel and as one launch each (CUDA)\n"
    "  --all-reduce        time only the tensor-parallel all-reduce of --batch rows of the model's\n"
    "                      hidden size over --tp GPUs, by NCCL and by the exchange's paths\n"
    "  --json              one JSON object on stdout instead of a table\n"
    "  (--step-tokens defaults to 2048 here: the prefill chunk)\n";

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

// What one token costs in the model file: matmul weights' bytes and FLOPs, and the rest.
struct ModelCost {
    double matmul_bytes = 0;    // every 2-D weight a step reads once (packed as stored)
    double matmul_flops = 0;    // per token: 2 per weight element
    int n_attn = 0, n_gdn = 0;  // layers of each kind
};

ModelCost model_cost(const model::Model& m) {
    const model::HParams& hp = m.hparams();
    ModelCost c;
    for (int il = 0; il < hp.n_layer; ++il) (hp.is_attention(il) ? c.n_attn : c.n_gdn)++;
    const bool tied = m.file().tensor("output.weight") == nullptr;
    for (const gguf::TensorInfo& t : m.file().tensors()) {
        if (t.n_dims < 2) continue;
        const bool global = t.name == "output.weight" || (tied && t.name == "token_embd.weight");
        if (!global) {
            if (t.name.rfind("blk.", 0) != 0) continue;
            if (std::stoi(t.name.substr(4)) >= hp.n_layer) continue;  // MTP layers
        }
        c.matmul_bytes += double(t.nbytes);
        if (t.name.find("conv1d") == std::string::npos)
            c.matmul_flops += 2.0 * double(t.ne[0]) * double(t.ne[1]);
    }
    return c;
}

struct DecodeBytes {
    double weights = 0, state = 0, kv = 0, activations = 0, logits = 0;
    double total() const { return weights + state + kv + activations + logits; }
};

DecodeBytes decode_bytes(const model::Model& m, const ModelCost& c, int batch, int context) {
    const model::HParams& hp = m.hparams();
    const double B = batch, f = sizeof(float);
    DecodeBytes b;
    b.weights = c.matmul_bytes;
    const double ssm = double(hp.ssm_n_v_heads) * hp.ssm_d_state * hp.ssm_d_state * f;
    const double conv = double(hp.ssm_conv_kernel - 1) * hp.qkv_dim() * f;
    b.state = B * c.n_gdn * 2.0 * (ssm + conv);  // read and written
    const double kv_token =
        2.0 * hp.n_head_kv * hp.head_dim * double(kernels::dtype_block_bytes(m.kv_type()));
    b.kv = B * c.n_attn * kv_token * (double(context) + 2.0);  // read C + 1, write 1
    // Each layer reads and writes the residual stream a few times and the FFN's three rows.
    b.activations = B * hp.n_layer * f * (8.0 * hp.n_embd + 3.0 * hp.n_ff);
    b.logits = B * hp.n_vocab * f;
    return b;
}

double prefill_flops(const model::Model& m, const ModelCost& c, int prompt) {
    const model::HParams& hp = m.hparams();
    const double P = prompt;
    const double pairs = P * (P + 1) / 2;  // causal (query, key) pairs
    const double attention = c.n_attn * 4.0 * hp.n_head * hp.head_dim * pairs;
    // Delta rule per token and value head: decay, Sᵀk, the rank-1 update and Sᵀq, ~4 dk·dv MACs.
    const double delta = c.n_gdn * P * hp.ssm_n_v_heads * 8.0 * hp.ssm_d_state * hp.ssm_d_state;
    return c.matmul_flops * P + attention + delta;
}

// Seconds per step of `steps` decode steps of `batch` sequences at `context` cached tokens.
double time_decode(model::Model& m, int batch, int context, int steps, const std::string& logits) {
    const int bt = m.config().block_tokens;
    const int per_seq = (context + steps + 2 + bt - 1) / bt;
    if (int64_t(per_seq) * batch > m.kv_blocks())
        throw std::runtime_error("the KV pool holds " + std::to_string(m.kv_blocks()) + " blocks; batch " +
                                 std::to_string(batch) + " at context " + std::to_string(context) +
                                 " needs " + std::to_string(int64_t(per_seq) * batch));
    std::mt19937 rng(7);
    model::StepPlan plan;
    const kernels::TopAsk ask =
        kernels::top_ask(logits == "sampled" ? kernels::SampleParams{0.7f, 0, 0.9f, 0.0f, 0.0f}
                                             : kernels::SampleParams{0.0f, 0, 1.0f, 0.0f, 0.0f});
    plan.top_asks.assign(logits == "whole" ? 0 : size_t(batch), ask);
    for (int i = 0; i < batch; ++i) {
        m.clear_slot(i);
        for (int b = 0; b < per_seq; ++b) plan.block_tables.push_back(i * per_seq + b);
    }
    auto fill = [&](int pos) {
        plan.seqs.clear();
        plan.tokens.clear();
        plan.positions.clear();
        plan.kv_slots.clear();
        for (int i = 0; i < batch; ++i) {
            kernels::SeqInfo s;
            s.q_start = i;
            s.n_q = 1;
            s.pos0 = pos;
            s.state_slot = i;
            s.table_start = i * per_seq;
            plan.seqs.push_back(s);
            plan.tokens.push_back(int32_t(rng() % uint32_t(m.hparams().n_vocab)));
            plan.positions.push_back(pos);
            plan.kv_slots.push_back(plan.block_tables[size_t(i * per_seq + pos / bt)] * bt + pos % bt);
        }
        plan.logit_rows = {{0, batch}};
    };
    for (int w = 0; w < 2; ++w) {  // warm-up: workspaces grow, kernels load
        fill(context + w);
        m.step(plan);
    }
    const auto t0 = Clock::now();
    for (int s = 0; s < steps; ++s) {
        fill(context + 2 + s);
        m.step(plan);  // returns with the logits (or their reductions) on the host: the step is complete
    }
    return seconds_since(t0) / steps;
}

double time_prefill(model::Model& m, int prompt) {
    std::mt19937 rng(11);
    std::vector<int32_t> tokens(static_cast<size_t>(prompt));
    for (auto& t : tokens) t = int32_t(rng() % uint32_t(m.hparams().n_vocab));
    {
        model::Sequences warm(m);  // warm-up on a short prompt
        const int id = warm.add();
        warm.feed({{id, std::vector<int32_t>(tokens.begin(), tokens.begin() + std::min(prompt, 64))}});
    }
    model::Sequences seqs(m);
    const int id = seqs.add();
    const auto t0 = Clock::now();
    seqs.feed({{id, tokens}});
    return seconds_since(t0);
}

int run_bench(int argc, char** argv) {
    auto names = model_option_names();
    names.insert({"batch", "context", "prompt", "steps", "logits"});
    const Args a("bench", argc, argv, names, {"json", "kernels", "sampler", "chain", "all-reduce"});
    if (a.help()) {
        std::printf("%s%s", kHelp, model_options_help());
        return 0;
    }
    log::init(a.str("log-level", "warn"));
    std::vector<int64_t> batches = a.has("batch") ? a.i64_list("batch") : std::vector<int64_t>{1, 8, 24};
    std::vector<int64_t> prompts = a.has("prompt") ? a.i64_list("prompt") : std::vector<int64_t>{512, 8192};
    prompts.erase(std::remove(prompts.begin(), prompts.end(), 0), prompts.end());
    const int context = int(a.i64("context", 4096));
    const int steps = int(a.i64("steps", 32));
    for (int64_t b : batches)
        if (b < 1 || b > 4096) throw UsageError("--batch sizes must be 1..4096");
    for (int64_t p : prompts)
        if (p < 1) throw UsageError("--prompt lengths must be positive");
    if (context < 0 || steps < 1) throw UsageError("--context must be >= 0 and --steps >= 1");
    // Usage errors before any file is read or anything is measured.
    if (a.flag("all-reduce") && a.i64("tp", 2) < 2)
        throw UsageError("--all-reduce times --tp ranks: give --tp 2 or more");
    if (a.flag("kernels") && a.str("backend", "cpu") != "cuda")
        throw UsageError("--kernels needs --backend cuda");
    const std::string logits_mode = a.str("logits", "greedy");
    if (logits_mode != "greedy" && logits_mode != "sampled" && logits_mode != "whole")
        throw UsageError("--logits " + logits_mode + ": greedy, sampled or whole");

    if (a.flag("sampler")) {
        // Only the vocabulary is needed: the model is not loaded.
        const auto file = gguf::Reader::open(a.str("model"));
        nlohmann::ordered_json out{{"model", a.str("model")}};
        out["sample"] = bench_sampler(model::HParams::from_gguf(file).n_vocab, batches, a.flag("json"));
        if (a.flag("json")) std::printf("%s\n", out.dump(2).c_str());
        return 0;
    }
    if (a.flag("all-reduce")) {
        // Only the hidden size is needed: the model is not loaded.
        const auto file = gguf::Reader::open(a.str("model"));
        const int tp = int(a.i64("tp", 2));
        nlohmann::ordered_json out{{"model", a.str("model")}, {"tp", tp}};
        out["all_reduce"] =
            bench_all_reduce(model::HParams::from_gguf(file).n_embd, tp, batches, a.flag("json"));
        if (a.flag("json")) std::printf("%s\n", out.dump(2).c_str());
        return 0;
    }
    if (a.flag("chain")) {
        // Only the matrices' shapes are needed: the model is not loaded.
        const auto file = gguf::Reader::open(a.str("model"));
        const auto gpus = kernels::list_gpus();
        if (gpus.empty()) throw std::runtime_error("bench --chain needs a CUDA GPU");
        const double bandwidth = kernels::measure_copy_bandwidth(0);
        nlohmann::ordered_json out{{"model", a.str("model")}, {"gpu", gpus[0].name}};
        out["copy_bandwidth_gb_s"] = bandwidth / 1e9;
        out["chain"] = bench_chain(file, bandwidth, a.flag("json"));
        if (a.flag("json")) std::printf("%s\n", out.dump(2).c_str());
        return 0;
    }
    model::ModelConfig cfg = model_config(a);
    if (!a.has("step-tokens")) cfg.max_step_tokens = 2048;
    const int max_batch = int(*std::max_element(batches.begin(), batches.end()));
    cfg.max_seqs = std::max(cfg.max_seqs, max_batch);
    cfg.max_step_tokens = std::max(cfg.max_step_tokens, max_batch);
    int64_t longest = context + steps + 2;
    for (int64_t p : prompts) longest = std::max(longest, p);
    cfg.max_context = int(std::max<int64_t>(cfg.max_context, longest));

    nlohmann::ordered_json out;
    out["model"] = a.str("model");
    out["backend"] = cfg.backend;
    out["precision"] = cfg.precision == kernels::Precision::Fp32 ? "fp32" : "mixed";
    out["tp"] = cfg.tp;
    double bandwidth = 0, gemm = 0;
    if (cfg.backend == "cuda") {
        const auto gpus = kernels::list_gpus();
        out["gpu"] = gpus.empty() ? "" : gpus[0].name;
        bandwidth = kernels::measure_copy_bandwidth(0);
        gemm = kernels::measure_bf16_gemm_rate(0);
        out["copy_bandwidth_gb_s"] = bandwidth / 1e9;
        out["bf16_gemm_tflops"] = gemm / 1e12;
    }
    auto m = model::Model::open(a.str("model"), cfg);
    const ModelCost cost = model_cost(*m);
    out["kv_pool_tokens"] = m->memory().kv_tokens();
    out["kv_type"] = kernels::dtype_name(m->kv_type());
    out["step_tokens"] = cfg.max_step_tokens;
    const bool json = a.flag("json");
    if (!json) {
        std::string head =
            fmt::format("{} on {} {}", a.str("model"), cfg.backend, out.value("gpu", std::string()));
        if (bandwidth > 0)
            head += fmt::format(": copy {:.0f} GB/s, bf16 GEMM {:.0f} TFLOP/s", bandwidth / 1e9, gemm / 1e12);
        std::printf("%s\n", head.c_str());
    }

    if (a.flag("kernels")) {
        out["kernels"] = bench_kernels(*m, batches, context, bandwidth, json);
    }
    out["logits"] = logits_mode;
    out["decode"] = nlohmann::json::array();
    for (int64_t b : batches) {
        const double step_s = time_decode(*m, int(b), context, steps, logits_mode);
        const DecodeBytes bytes = decode_bytes(*m, cost, int(b), context);
        nlohmann::ordered_json r;
        r["batch"] = b;
        r["context"] = context;
        r["step_ms"] = step_s * 1e3;
        r["tok_s"] = double(b) / step_s;
        r["replayed_steps"] = m->replayed_steps();
        r["bytes_per_step"] = {{"weights", bytes.weights}, {"state", bytes.state},
                               {"kv", bytes.kv},           {"activations", bytes.activations},
                               {"logits", bytes.logits},   {"total", bytes.total()}};
        if (bandwidth > 0) {
            const double bound = double(b) * bandwidth / bytes.total();
            r["bound_tok_s"] = bound;
            r["fraction"] = (double(b) / step_s) / bound;
            // What the step's bytes at the copy rate do not explain: launches, waits, staging,
            // sums, ramps and tails (docs/BENCHMARKS.md, thirty-sixth pass).
            r["over_bound_ms"] = (step_s - bytes.total() / bandwidth) * 1e3;
        }
        if (!json) {
            std::string line =
                fmt::format("decode  batch {:4}  ctx {:6}  {:8.2f} ms/step  {:9.1f} tok/s  {:7.2f} GB/step",
                            b, context, step_s * 1e3, double(b) / step_s, bytes.total() / 1e9);
            if (bandwidth > 0)
                line += fmt::format("  bound {:9.1f} tok/s  {:5.1f}%  +{:.2f} ms", double(r["bound_tok_s"]),
                                    100.0 * double(r["fraction"]), double(r["over_bound_ms"]));
            std::printf("%s\n", line.c_str());
        }
        out["decode"].push_back(r);
    }
    out["prefill"] = nlohmann::json::array();
    for (int64_t p : prompts) {
        const double s = time_prefill(*m, int(p));
        const double flops = prefill_flops(*m, cost, int(p));
        nlohmann::ordered_json r;
        r["prompt"] = p;
        r["seconds"] = s;
        r["tok_s"] = double(p) / s;
        r["flops"] = flops;
        r["tflops"] = flops / s / 1e12;
        if (gemm > 0) r["fraction"] = flops / s / gemm;
        if (!json) {
            std::string line = fmt::format("prefill prompt {:6}  {:8.3f} s  {:9.1f} tok/s  {:7.2f} TFLOP/s",
                                           p, s, double(p) / s, flops / s / 1e12);
            if (gemm > 0) line += fmt::format("  {:5.1f}% of the GEMM rate", 100.0 * flops / s / gemm);
            std::printf("%s\n", line.c_str());
        }
        out["prefill"].push_back(r);
    }
    if (json) std::printf("%s\n", out.dump(2).c_str());
    return 0;
}

}  // namespace

NIWA_COMMAND("bench", "decode and prefill throughput against the hardware's limits", run_bench);

}  // namespace niwa::cli
