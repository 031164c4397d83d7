// niwa-engine generate: complete a prompt on the command line (a quick end-to-end check).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/cli/args.h"
#include "engine/cli/commands.h"
#include "engine/cli/model_options.h"
#include "engine/model/sequences.h"
#include "engine/runtime/log.h"
#include "engine/text/chat_template.h"
#include "engine/text/stream_decoder.h"
#include "engine/text/tokenizer.h"
#include "kernels/ops.h"

namespace niwa::cli {

namespace {

constexpr const char* kHelp =
    "usage: niwa-engine generate --model FILE --prompt TEXT [options]\n"
    "Streams a completion of the prompt to stdout; timing goes to stderr.\n\n"
    "  --prompt TEXT       the prompt\n"
    "  --chat              wrap the prompt as one user message in the model's chat template\n"
    "  --max-tokens N      tokens to generate (default 64)\n"
    "  --temperature T     0 for greedy (default: the model's, else 1.0)\n"
    "  --top-k K           (default 20)   --top-p P (default 0.95)   --min-p P (default 0)\n"
    "  --seed S            sampling seed (default 0)\n";

// splitmix64: a tiny, portable generator for the sampling draws.
struct Rng {
    uint64_t s;
    float uniform() {
        uint64_t z = (s += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        return float(z >> 40) * (1.0f / 16777216.0f);
    }
};

int run_generate(int argc, char** argv) {
    auto names = model_option_names();
    names.insert({"prompt", "max-tokens", "temperature", "top-k", "top-p", "min-p", "seed"});
    const Args a("generate", argc, argv, names, {"chat"});
    if (a.help()) {
        std::printf("%s%s", kHelp, model_options_help());
        return 0;
    }
    log::init(a.str("log-level", "warn"));
    const std::string prompt = a.str("prompt");
    auto model = model::Model::open(a.str("model"), model_config(a));
    const text::Tokenizer tok = text::Tokenizer::from_gguf(model->file());
    std::string text = prompt;
    if (a.flag("chat")) {
        const text::ChatTemplate tmpl = text::ChatTemplate::from_gguf(model->file());
        nlohmann::json request;
        request["messages"] = nlohmann::json::array({{{"role", "user"}, {"content", prompt}}});
        text = tmpl.render(request);
    }
    const std::vector<int32_t> ids = tok.encode(text);
    if (ids.empty()) throw UsageError("the prompt is empty");

    kernels::SampleParams sp;
    sp.temperature = float(a.f64("temperature", 1.0));
    sp.top_k = int(a.i64("top-k", 20));
    sp.top_p = float(a.f64("top-p", 0.95));
    sp.min_p = float(a.f64("min-p", 0.0));
    Rng rng{uint64_t(a.i64("seed", 0))};
    const int max_tokens = int(a.i64("max-tokens", 64));
    const std::vector<int32_t> eos = tok.eos_ids();
    auto sampler = kernels::make_cpu_ops(1);

    model::Sequences seqs(*model);
    const int id = seqs.add();
    text::StreamDecoder out(tok);
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<float> logits = seqs.feed({{id, ids}})[0];
    const auto t1 = std::chrono::steady_clock::now();
    int generated = 0;
    for (; generated < max_tokens; ++generated) {
        sp.uniform = rng.uniform();
        int32_t next = 0;
        const kernels::Tensor lt{logits.data(), kernels::DType::F32, 1, int64_t(logits.size()), int64_t(logits.size())};
        sampler->sample(lt, &sp, &next);
        if (std::find(eos.begin(), eos.end(), next) != eos.end()) break;
        std::fputs(out.push(next).c_str(), stdout);
        std::fflush(stdout);
        logits = seqs.feed({{id, {next}}})[0];
    }
    std::fputs(out.flush().c_str(), stdout);
    std::fputs("\n", stdout);
    const auto t2 = std::chrono::steady_clock::now();
    const double pre = std::chrono::duration<double>(t1 - t0).count();
    const double gen = std::chrono::duration<double>(t2 - t1).count();
    std::fprintf(stderr, "prompt %zu tokens in %.2f s (%.1f tok/s); generated %d tokens in %.2f s (%.1f tok/s)\n",
                 ids.size(), pre, double(ids.size()) / pre, generated, gen, generated / std::max(gen, 1e-9));
    return 0;
}

}  // namespace

NIWA_COMMAND("generate", "complete a prompt (a quick end-to-end check)", run_generate);

}  // namespace niwa::cli
