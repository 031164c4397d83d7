// niwa-engine generate: complete a prompt on the command line (a quick end-to-end check).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/cli/args.h"
#include "engine/cli/commands.h"
#include "engine/cli/model_options.h"
#include "engine/model/model.h"
#include "engine/runtime/log.h"
#include "engine/sched/engine.h"
#include "engine/text/chat_template.h"
#include "engine/text/stream_decoder.h"
#include "engine/text/tokenizer.h"

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

    // The same path as the server: the scheduler, its sampler and its stop handling.
    sched::GenerateRequest req;
    req.prompt = ids;
    req.sampling.temperature = float(a.f64("temperature", 1.0));
    req.sampling.top_k = int(a.i64("top-k", 20));
    req.sampling.top_p = float(a.f64("top-p", 0.95));
    req.sampling.min_p = float(a.f64("min-p", 0.0));
    req.sampling.seed = uint64_t(a.i64("seed", 0));
    req.max_tokens = int(a.i64("max-tokens", 64));
    req.stop_ids = tok.eos_ids();
    sched::EngineConfig ec;
    ec.max_seqs = 1;
    ec.max_context = model->config().max_context;
    ec.step_token_budget = model->config().max_step_tokens;
    sched::Engine engine(*model, ec);

    text::StreamDecoder out(tok);
    const auto t0 = std::chrono::steady_clock::now();
    const auto stream = engine.submit(std::move(req));
    std::vector<sched::TokenEvent> events;
    while (stream->next(events, std::chrono::milliseconds(100))) {
        for (const auto& e : events) std::fputs(out.push(e.token).c_str(), stdout);
        events.clear();
        std::fflush(stdout);
    }
    for (const auto& e : events) std::fputs(out.push(e.token).c_str(), stdout);
    std::fputs(out.flush().c_str(), stdout);
    std::fputs("\n", stdout);
    const auto t1 = std::chrono::steady_clock::now();
    const sched::FinishInfo f = stream->finish();
    if (f.reason == sched::FinishReason::Error) throw std::runtime_error(f.error);
    const double total = std::chrono::duration<double>(t1 - t0).count();
    const double gen = std::max(total - f.first_token_seconds, 1e-9);
    std::fprintf(stderr,
                 "prompt %d tokens, first token after %.2f s; generated %d tokens in %.2f s (%.1f tok/s)\n",
                 f.prompt_tokens, f.first_token_seconds, f.completion_tokens, gen,
                 f.completion_tokens > 1 ? (f.completion_tokens - 1) / gen : 0.0);
    return 0;
}

}  // namespace

NIWA_COMMAND("generate", "complete a prompt (a quick end-to-end check)", run_generate);

}  // namespace niwa::cli
