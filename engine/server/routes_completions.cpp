// POST /v1/completions: the legacy text completion of a raw prompt (text or token ids), whole
// or streamed as text_completion events.
#include <httplib.h>

#include "engine/runtime/log.h"
#include "engine/server/api_error.h"
#include "engine/server/openai_response.h"
#include "engine/server/routes.h"

namespace niwa::server {

namespace {

std::vector<int32_t> prompt_ids(const Loaded& loaded, const CompletionParams& p) {
    if (p.prompt_text) return loaded.tokenizer.encode(*p.prompt_text, true);
    const int32_t n_vocab = loaded.tokenizer.n_vocab();
    for (size_t i = 0; i < p.prompt_ids.size(); ++i) {
        if (p.prompt_ids[i] < 0 || p.prompt_ids[i] >= n_vocab)
            throw bad_field("prompt", "token id " + std::to_string(p.prompt_ids[i]) + " at position " +
                                          std::to_string(i) + " is outside the vocabulary [0, " +
                                          std::to_string(n_vocab) + ")");
    }
    return p.prompt_ids;
}

void complete(ServerContext& ctx, const httplib::Request& req, httplib::Response& res) {
    Loaded& loaded = require_loaded(ctx);
    auto who = ctx.auth.admit(req);
    const ojson body = parse_body(req.body);
    CompletionParams p = parse_completion(body);
    check_model(ctx, p.model);
    std::vector<int32_t> ids = prompt_ids(loaded, p);
    GenerationSetup setup;
    setup.stop = p.stop;
    setup.prompt_tokens = int(ids.size());
    auto stream = submit(ctx, loaded, std::move(ids), p, *who, "prompt");
    auto gen = std::make_shared<Generation>(ctx, loaded, stream, std::move(setup));
    gen->set_client(who->client());

    const std::string id = response_id("cmpl-");
    const int64_t created = unix_now();
    const std::string model = ctx.options.served_model_name;
    const text::Tokenizer* tok = &loaded.tokenizer;
    if (!p.stream) {
        std::vector<sched::TokenEvent> tokens;
        while (!gen->done()) {
            if (ctx.stopping) gen->cancel();
            GenerationDelta d = gen->poll(kPollInterval);
            if (p.logprobs) tokens.insert(tokens.end(), d.tokens.begin(), d.tokens.end());
        }
        if (gen->finish_reason() == "error") throw ApiError(500, gen->error(), {}, "generation_failed");
        if (gen->finish_reason() == "abort")
            throw ApiError(503, "the server is shutting down", {}, "server_stopping");
        std::optional<ojson> lp;
        if (p.logprobs) lp = completion_logprobs(*tok, tokens, 0);
        res.set_content(text_completion(id, created, model, gen->text(), gen->finish_reason(), lp,
                                        gen->prompt_tokens(), gen->completion_tokens(), false, false)
                            .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                        "application/json");
        return;
    }

    std::shared_ptr<Admission> holder = std::move(who);
    stream_sse(
        res, "completion", *gen, [gen, holder, p, id, created, model, tok, &ctx](httplib::DataSink& sink) {
            std::vector<sched::TokenEvent> unsent;
            size_t offset = 0;
            const auto event = [&](const std::string& text, const std::string& finish) {
                std::optional<ojson> lp;
                if (p.logprobs && !unsent.empty()) {
                    lp = completion_logprobs(*tok, unsent, offset);
                    for (const auto& e : unsent) offset += token_bytes(*tok, e.token).size();
                    unsent.clear();
                }
                return sse_data(
                    text_completion(id, created, model, text, finish, lp, 0, 0, true, p.include_usage));
            };
            const bool alive = pump_events(sink, ctx, *gen, [&](GenerationDelta& d) {
                unsent.insert(unsent.end(), d.tokens.begin(), d.tokens.end());
                return d.content.empty() ? std::string() : event(d.content, {});
            });
            if (!alive) return false;
            std::string out = gen->finish_reason() == "error"
                                  ? sse_data(error_json(ApiError(500, gen->error(), {}, "generation_failed")))
                                  : event("", gen->finish_reason());
            if (p.include_usage)
                out += sse_data(usage_chunk(id, created, model, "text_completion", gen->prompt_tokens(),
                                            gen->completion_tokens()));
            if (!sink_write(sink, out + "data: [DONE]\n\n")) return false;
            sink.done();
            return true;
        });
}

}  // namespace

void add_completion_routes(httplib::Server& http, ServerContext& ctx) {
    http.Post("/v1/completions", [&ctx](const httplib::Request& req, httplib::Response& res) {
        answer(res, [&] { complete(ctx, req, res); });
    });
}

}  // namespace niwa::server
