// `niwa-engine serve`: the OpenAI-compatible HTTP server (engine/server/).
#include <cstdio>
#include <filesystem>
#include <set>
#include <string>

#include "engine/cli/args.h"
#include "engine/cli/commands.h"
#include "engine/cli/model_options.h"
#include "engine/runtime/log.h"

#ifdef NIWA_HAS_SERVER
#include "engine/server/http_server.h"
#endif

namespace niwa::cli {

namespace {

constexpr const char* kHelp =
    "usage: niwa-engine serve --model FILE [options]\n"
    "Serves the model over an OpenAI-compatible HTTP API (docs/API.md). Listens at once and\n"
    "loads the model in the background: GET /health answers 503 while loading, 200 when\n"
    "ready; `Application startup complete.` is printed on stdout then.\n\n"
    "  --host H                  address to listen on (default 127.0.0.1). Anything but\n"
    "                            loopback needs --api-keys or --allow-unauthenticated\n"
    "  --port P                  (default 8000)\n"
    "  --served-model-name NAME  the model id clients send and /v1/models lists\n"
    "                            (default bonsai-27b)\n"
    "  --api-keys FILE           lines `key name [default_priority] [max_concurrent]`\n"
    "  --allow-unauthenticated   serve a non-loopback address without API keys\n"
    "  --chat-template FILE      Jinja chat template instead of the model file's\n"
    "  --max-waiting N           requests queued before 429 (default 256)\n"
    "  --park-memory GiB         host RAM for the caches of preempted requests, so they\n"
    "                            resume where they stopped (default: a quarter of physical\n"
    "                            RAM; 0: preemption recomputes instead)\n"
    "  --log-format text|json    (default text)\n"
    "Accepted but not used yet:\n"
    "  --mmproj FILE             vision projector: image input is refused (400) for now\n"
    "Model options:\n";

int run_serve(int argc, char** argv) {
    auto names = model_option_names();
    names.insert({"host", "port", "served-model-name", "api-keys", "chat-template", "log-format",
                  "max-waiting", "park-memory", "mmproj"});
    const Args a("serve", argc, argv, names, {"allow-unauthenticated"});
    if (a.help()) {
        std::printf("%s%s", kHelp, model_options_help());
        return 0;
    }
    const std::string format = a.str("log-format", "text");
    if (format != "text" && format != "json")
        throw UsageError("--log-format must be text or json, not '" + format + "'");
    log::init(a.str("log-level", "info"), format == "json" ? log::Format::Json : log::Format::Text);
    auto logger = log::get("server");

#ifdef NIWA_HAS_SERVER
    server::ServerOptions o;
    o.model_path = a.str("model");
    o.model = model_config(a);
    o.host = a.str("host", "127.0.0.1");
    const int64_t port = a.i64("port", 8000);
    if (port < 1 || port > 65535) throw UsageError("--port must be between 1 and 65535");
    o.port = int(port);
    o.served_model_name = a.str("served-model-name", "bonsai-27b");
    if (o.served_model_name.empty()) throw UsageError("--served-model-name must not be empty");
    o.api_keys_file = a.str("api-keys", "");
    o.allow_unauthenticated = a.flag("allow-unauthenticated");
    o.chat_template_file = a.str("chat-template", "");
    o.engine.max_seqs = o.model.max_seqs;
    o.engine.max_context = o.model.max_context;
    o.engine.step_token_budget = o.model.max_step_tokens;
    const int64_t waiting = a.i64("max-waiting", 256);
    if (waiting < 0) throw UsageError("--max-waiting must be at least 0");
    o.engine.max_waiting = int(waiting);
    if (a.has("park-memory")) {
        const double gib = a.f64("park-memory");
        if (!(gib >= 0)) throw UsageError("--park-memory must be a size in GiB, 0 or more");
        o.engine.park_memory_bytes = int64_t(gib * double(1ull << 30));
    }

    if (a.has("mmproj")) {
        const std::string mmproj = a.str("mmproj");
        if (!std::filesystem::is_regular_file(mmproj))
            throw UsageError("--mmproj " + mmproj + ": no such file");
        logger->warn("--mmproj is accepted but not used yet: image input is refused with 400");
    }
    if (!model::kv_format_implemented(o.model.kv_format))
        logger->warn(
            "--kv-format {} is accepted but not used yet: the KV cache is auto (f16 on a GPU, f32 on the "
            "CPU)",
            o.model.kv_format);
    if (!std::filesystem::is_regular_file(o.model_path))
        logger->warn("--model {} is not a file: loading will fail", o.model_path);
    return server::serve(o);
#else
    logger->error(
        "this niwa-engine was built without the HTTP server (NIWA_SERVER=OFF, or cpp-httplib was missing)");
    return 1;
#endif
}

}  // namespace

NIWA_COMMAND("serve", "serve the model over an OpenAI-compatible HTTP API", run_serve);

}  // namespace niwa::cli
