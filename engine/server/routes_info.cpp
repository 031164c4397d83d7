// GET /health, /v1/models, /metrics and /v1/engine/stats (JSON, or SSE with ?stream=1).
#include <thread>

#include <httplib.h>

#include "engine/server/api_error.h"
#include "engine/server/openai_response.h"
#include "engine/server/routes.h"

namespace niwa::server {

namespace {

void health(ServerContext& ctx, httplib::Response& res) {
    switch (ctx.load.phase()) {
        case LoadState::Phase::Ready:
            res.set_content(ojson{{"status", "ok"}}.dump(), "application/json");
            return;
        case LoadState::Phase::Loading:
            res.status = 503;
            res.set_header("Retry-After", "1");
            res.set_content(ojson{{"status", "loading"},
                                  {"progress", ctx.load.progress()},
                                  {"stage", ctx.load.stage_name()}}
                                .dump(),
                            "application/json");
            return;
        case LoadState::Phase::Failed:
            res.status = 503;
            res.set_content(ojson{{"status", "error"}, {"error", ctx.load.error()}}.dump(),
                            "application/json");
            return;
    }
}

ojson models(const ServerContext& ctx) {
    const int64_t created = unix_now() - int64_t(std::chrono::duration_cast<std::chrono::seconds>(
                                                     std::chrono::steady_clock::now() - ctx.started)
                                                     .count());
    const ojson model = {{"id", ctx.options.served_model_name},
                         {"object", "model"},
                         {"created", created},
                         {"owned_by", "niwa"},
                         {"max_model_len", ctx.options.model.max_context}};
    return {{"object", "list"}, {"data", ojson::array({model})}};
}

ojson stats(ServerContext& ctx, const Loaded& loaded) {
    StatsInfo info;
    info.model = ctx.options.served_model_name;
    info.backend = ctx.options.model.backend;
    info.tp = ctx.options.model.tp;
    info.kv_format = model::kv_format_name(loaded.model->kv_type());
    info.uptime_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - ctx.started).count();
    for (const model::MemoryPlan::Rank& r : loaded.model->memory().ranks) {
        if (r.device < 0) continue;
        if (info.engine_vram.size() <= size_t(r.device)) info.engine_vram.resize(size_t(r.device) + 1);
        info.engine_vram[size_t(r.device)] += r.weights + r.state + r.scratch + r.kv;
    }
    return stats_json(info, loaded.engine->stats(), ctx.throughput);
}

void engine_stats(ServerContext& ctx, const httplib::Request& req, httplib::Response& res) {
    Loaded& loaded = require_loaded(ctx);
    ctx.auth.check(req);
    const std::string stream = req.get_param_value("stream");
    if (stream.empty() || stream == "0" || stream == "false") {
        res.set_content(stats(ctx, loaded).dump(), "application/json");
        return;
    }
    res.set_header("Cache-Control", "no-cache");
    res.set_chunked_content_provider("text/event-stream", [&ctx, &loaded](size_t, httplib::DataSink& sink) {
        // One event a second until the client goes away (a write fails) or the server stops.
        while (!ctx.stopping) {
            if (!sink_write(sink, sse_data(stats(ctx, loaded)))) return false;
            for (int i = 0; i < 10 && !ctx.stopping; ++i) std::this_thread::sleep_for(kPollInterval);
        }
        sink.done();
        return true;
    });
}

}  // namespace

void add_info_routes(httplib::Server& http, ServerContext& ctx) {
    http.Get("/health", [&ctx](const httplib::Request&, httplib::Response& res) { health(ctx, res); });
    http.Get("/v1/models", [&ctx](const httplib::Request& req, httplib::Response& res) {
        answer(res, [&] {
            ctx.auth.check(req);
            res.set_content(models(ctx).dump(), "application/json");
        });
    });
    http.Get("/metrics", [&ctx](const httplib::Request&, httplib::Response& res) {
        answer(res, [&] {
            const Loaded& loaded = require_loaded(ctx);
            res.set_content(ctx.metrics.render(ctx.options.served_model_name, loaded.engine->stats()),
                            "text/plain; version=0.0.4; charset=utf-8");
        });
    });
    http.Get("/v1/engine/stats", [&ctx](const httplib::Request& req, httplib::Response& res) {
        answer(res, [&] { engine_stats(ctx, req, res); });
    });
}

}  // namespace niwa::server
