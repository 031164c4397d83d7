#include "engine/cli/model_options.h"

namespace niwa::cli {

std::set<std::string> model_option_names() {
    return {"model", "backend", "tp", "threads", "max-seqs", "step-tokens", "max-context", "log-level"};
}

const char* model_options_help() {
    return "  --model FILE        a qwen35 GGUF (Ternary-Bonsai-2-27B or a mkmodel file)\n"
           "  --backend cpu|cuda  where the forward runs (default cpu)\n"
           "  --tp N              tensor-parallel ranks (default 1)\n"
           "  --threads N         CPU threads in all (default: all cores)\n"
           "  --max-seqs N        sequences resident at once (default 4)\n"
           "  --step-tokens N     tokens per forward step, the prefill chunk (default 256)\n"
           "  --max-context N     tokens per sequence the KV cache is sized for (default 4096)\n"
           "  --log-level L       trace|debug|info|warn|error|off (default warn)\n";
}

model::ModelConfig model_config(const Args& a) {
    model::ModelConfig c;
    c.backend = a.str("backend", "cpu");
    c.tp = int(a.i64("tp", 1));
    c.threads = int(a.i64("threads", 0));
    c.max_seqs = int(a.i64("max-seqs", 4));
    c.max_step_tokens = int(a.i64("step-tokens", 256));
    c.max_context = int(a.i64("max-context", 4096));
    if (c.tp < 1) throw UsageError("--tp must be at least 1");
    if (c.max_seqs < 1) throw UsageError("--max-seqs must be at least 1");
    if (c.max_step_tokens < 1) throw UsageError("--step-tokens must be at least 1");
    if (c.max_context < 1) throw UsageError("--max-context must be at least 1");
    return c;
}

}  // namespace niwa::cli
