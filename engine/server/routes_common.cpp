#include "engine/server/routes.h"

#include <httplib.h>

#include "engine/runtime/log.h"
#include "engine/server/api_error.h"

namespace niwa::server {

void answer(httplib::Response& res, const std::function<void()>& fn) {
    try {
        fn();
    } catch (const ApiError& e) {
        if (e.status >= 500) log::get("server")->error("{}", e.what());
        write_error(res, e);
    } catch (const std::exception& e) {
        log::get("server")->error("internal error: {}", e.what());
        write_error(res, ApiError(500, std::string("internal error: ") + e.what()));
    }
}

Loaded& require_loaded(ServerContext& ctx) {
    Loaded* l = ctx.loaded();
    if (!l) {
        ApiError e(503, "the model is still loading; retry when GET /health answers 200", {},
                   "model_loading");
        e.retry_after_s = 1;
        throw e;
    }
    return *l;
}

void check_model(const ServerContext& ctx, const std::string& model) {
    if (model.empty() || model == ctx.options.served_model_name) return;
    throw ApiError(404,
                   "the model '" + model + "' does not exist; this server serves '" +
                       ctx.options.served_model_name + "'",
                   "model", "model_not_found");
}

std::shared_ptr<sched::Stream> submit(ServerContext& ctx, Loaded& loaded, std::vector<int32_t> prompt,
                                      const CommonParams& p, const Admission& who, const char* prompt_field,
                                      std::shared_ptr<sched::JsonConstraint> json) {
    const int context = ctx.options.model.max_context;
    const int n = int(prompt.size());
    if (n == 0) throw ApiError(400, "the prompt is empty", prompt_field, "invalid_value");
    if (n >= context)
        throw ApiError(400,
                       "the prompt has " + std::to_string(n) + " tokens but the context holds " +
                           std::to_string(context) +
                           " tokens (prompt and output together); shorten the prompt, or start the server "
                           "with a larger --max-context",
                       prompt_field, "context_length_exceeded");
    sched::GenerateRequest g;
    g.prompt = std::move(prompt);
    g.sampling = p.sampling;
    g.max_tokens = std::min(p.max_tokens.value_or(context - n), context - n);
    g.stop_ids = loaded.eos_ids;
    g.priority = p.priority.value_or(who.default_priority().value_or(0));
    g.client = who.client();
    g.json = std::move(json);
    try {
        return loaded.engine->submit(std::move(g));
    } catch (const sched::QueueFull& e) {
        ApiError err(429, e.what(), {}, "queue_full");
        err.retry_after_s = e.retry_after_s;
        throw err;
    } catch (const sched::RequestTooLarge& e) {
        throw ApiError(400, e.what(), prompt_field, "context_length_exceeded");
    }
}

void stream_sse(httplib::Response& res, const char* what, Generation& gen,
                std::function<bool(httplib::DataSink&)> body) {
    res.set_header("Cache-Control", "no-cache");
    res.set_chunked_content_provider(
        "text/event-stream", [what, &gen, body = std::move(body)](size_t, httplib::DataSink& sink) {
            try {
                return body(sink);
            } catch (const std::exception& e) {
                log::get("server")->error("{} stream failed: {}", what, e.what());
                gen.cancel();
                return false;
            }
        });
}

bool sink_write(httplib::DataSink& sink, const std::string& text) {
    return text.empty() || sink.write(text.data(), text.size());
}

bool pump_events(httplib::DataSink& sink, ServerContext& ctx, Generation& gen,
                 const std::function<std::string(GenerationDelta&)>& format) {
    auto last_write = std::chrono::steady_clock::now();
    while (!gen.done()) {
        if (ctx.stopping) {
            gen.cancel();
            break;
        }
        GenerationDelta d = gen.poll(kPollInterval);
        std::string out = format(d);
        const auto now = std::chrono::steady_clock::now();
        // While a request waits for a seat nothing else is written; a comment line now and then
        // finds out whether the client is still there (a write to a closed socket fails).
        if (out.empty() && now - last_write > std::chrono::seconds(1)) out = ": keep-alive\n\n";
        if (out.empty()) continue;
        if (!sink_write(sink, out)) {
            log::get("server")->info("client went away: cancelling its request");
            gen.cancel();
            return false;
        }
        last_write = now;
    }
    return true;
}

}  // namespace niwa::server
