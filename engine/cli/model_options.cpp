#include "engine/cli/model_options.h"

namespace niwa::cli {

std::set<std::string> model_option_names() {
    return {"model",        "backend",    "tp",        "threads", "max-seqs",  "step-tokens", "max-context",
            "mem-fraction", "vram-limit", "precision", "graphs",  "kv-format", "log-level"};
}

const char* model_options_help() {
    return "  --model FILE        a qwen35 GGUF (Ternary-Bonsai-2-27B or a mkmodel file)\n"
           "  --backend cpu|cuda  where the forward runs (default cpu)\n"
           "  --tp N              tensor-parallel ranks (default 1)\n"
           "  --threads N         CPU threads in all (default: all cores)\n"
           "  --max-seqs N        sequences resident at once (default 4)\n"
           "  --step-tokens N     tokens per forward step, the prefill chunk (default 256)\n"
           "  --max-context N     tokens one sequence may hold (default 4096)\n"
           "  --mem-fraction F    GPU: fill this part of each card, KV pool included (default 0.90)\n"
           "  --vram-limit GiB    GPU: plan as if each card had this much memory (e.g. 12)\n"
           "  --precision P       GPU matmuls: mixed (bf16 tensor cores, default) or fp32 (exact)\n"
           "  --kv-format NAME    KV cache: auto (f16 on a GPU, f32 on the CPU), f32, f16, bf16;\n"
           "                      k8v8, k4v4, k3v2 are accepted and run as auto for now\n"
           "  --graphs on|off     GPU: replay decode steps as CUDA graphs (default on)\n"
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
    c.mem_fraction = a.f64("mem-fraction", 0.90);
    c.vram_limit_gib = a.f64("vram-limit", 0.0);
    const std::string precision = a.str("precision", "mixed");
    if (precision == "fp32")
        c.precision = kernels::Precision::Fp32;
    else if (precision != "mixed")
        throw UsageError("--precision must be mixed or fp32, not '" + precision + "'");
    const std::string graphs = a.str("graphs", "on");
    if (graphs != "on" && graphs != "off")
        throw UsageError("--graphs must be on or off, not '" + graphs + "'");
    c.graphs = graphs == "on";
    c.kv_format = a.str("kv-format", "auto");
    if (!model::known_kv_format(c.kv_format))
        throw UsageError("--kv-format must be one of auto, f32, f16, bf16, k8v8, k4v4, k3v2, not '" +
                         c.kv_format + "'");
    if (!(c.mem_fraction > 0 && c.mem_fraction <= 1)) throw UsageError("--mem-fraction must be in (0, 1]");
    if (a.has("vram-limit") && !(c.vram_limit_gib > 0))
        throw UsageError("--vram-limit must be a size in GiB greater than 0");
    if (c.backend != "cpu" && c.backend != "cuda")
        throw UsageError("--backend must be cpu or cuda, not '" + c.backend + "'");
    if (c.tp < 1) throw UsageError("--tp must be at least 1");
    if (c.max_seqs < 1) throw UsageError("--max-seqs must be at least 1");
    if (c.max_step_tokens < 1) throw UsageError("--step-tokens must be at least 1");
    if (c.max_context < 1) throw UsageError("--max-context must be at least 1");
    return c;
}

}  // namespace niwa::cli
