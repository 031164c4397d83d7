// POST /v1/chat/completions: render the conversation with the chat template, generate, and
// answer as one chat.completion or as a stream of chat.completion.chunk events.
#include <httplib.h>

#include "engine/runtime/log.h"
#include "engine/sched/json_constraint.h"
#include "engine/server/api_error.h"
#include "engine/server/openai_response.h"
#include "engine/server/routes.h"

namespace niwa::server {

namespace {

std::string render_prompt(const Loaded& loaded, const ChatParams& p) {
    try {
        return loaded.chat_template.render(p.render_request) + p.forced_prefix;
    } catch (const text::ChatRequestError& e) {
        throw ApiError(400, e.what(), "messages", "invalid_request");
    } catch (const text::TemplateError& e) {
        throw ApiError(400, std::string("the chat template failed: ") + e.what(), "messages",
                       "template_error");
    }
}

// Everything a streamed response keeps between events.
struct ChatStream {
    std::unique_ptr<Admission> who;
    std::unique_ptr<Generation> gen;
    ChatParams params;
    std::string id;
    int64_t created = 0;
    std::string model;
    const text::Tokenizer* tokenizer = nullptr;
    std::vector<sched::TokenEvent> unsent_logprobs;  // tokens whose text has not gone out yet

    std::optional<ojson> take_logprobs() {
        if (!params.logprobs || unsent_logprobs.empty()) return std::nullopt;
        ojson lp = chat_logprobs(*tokenizer, unsent_logprobs);
        unsent_logprobs.clear();
        return lp;
    }

    std::string chunk(ojson delta, const std::string& finish = {}) {
        return sse_data(
            chat_chunk(id, created, model, std::move(delta), finish, take_logprobs(), params.include_usage));
    }

    std::string format(GenerationDelta& d) {
        unsent_logprobs.insert(unsent_logprobs.end(), d.tokens.begin(), d.tokens.end());
        std::string out;
        if (!d.reasoning.empty()) out += chunk({{"reasoning_content", d.reasoning}});
        if (!d.content.empty()) out += chunk({{"content", d.content}});
        if (!d.tool_calls.empty()) {
            ojson calls = ojson::array();
            for (const auto& c : d.tool_calls)
                calls.push_back(ojson::parse(text::tool_call_delta_json(c).dump()));
            out += chunk({{"tool_calls", calls}});
        }
        return out;
    }

    std::string ending() {
        std::string out;
        if (gen->finish_reason() == "error") {
            out += sse_data(error_json(ApiError(500, gen->error(), {}, "generation_failed")));
        } else {
            out += chunk(ojson::object(), gen->finish_reason());
        }
        if (params.include_usage)
            out += sse_data(usage_chunk(id, created, model, "chat.completion.chunk", gen->prompt_tokens(),
                                        gen->completion_tokens()));
        return out + "data: [DONE]\n\n";
    }
};

void warn_if_not_json(const Generation& gen, const ChatParams& p) {
    if (!p.json_object || !gen.parser()) return;
    if (!nlohmann::json::accept(gen.parser()->content()))
        log::get("server")->warn(
            "response_format asked for JSON but the reply ({} characters) is not valid JSON",
            gen.parser()->content().size());
}

void chat(ServerContext& ctx, const httplib::Request& req, httplib::Response& res) {
    Loaded& loaded = require_loaded(ctx);
    auto who = ctx.auth.admit(req);
    const ojson body = parse_body(req.body);
    ChatParams p = parse_chat(body);
    check_model(ctx, p.model);
    const std::string prompt = render_prompt(loaded, p);
    std::vector<int32_t> ids = loaded.tokenizer.encode(prompt, true);

    GenerationSetup setup;
    setup.stop = p.stop;
    setup.prompt_tokens = int(ids.size());
    setup.forced_prefix = p.forced_prefix;
    text::ParserOptions po;
    po.reasoning = p.thinking;
    po.tools = p.tools;
    po.parse_tool_calls = p.parse_tool_calls;
    setup.parser = std::move(po);
    std::shared_ptr<sched::JsonConstraint> json;
    if (p.constrain_json) json = std::make_shared<sched::JsonConstraint>(loaded.tokenizer, p.thinking);
    auto stream = submit(ctx, loaded, std::move(ids), p, *who, "messages", std::move(json));
    auto gen = std::make_unique<Generation>(ctx, loaded, stream, std::move(setup));
    gen->set_client(who->client());

    const std::string id = response_id("chatcmpl-");
    const int64_t created = unix_now();
    const std::string& model = ctx.options.served_model_name;
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
        warn_if_not_json(*gen, p);
        const text::OutputParser& parser = *gen->parser();
        const ChatMessageOut msg{parser.reasoning(), parser.content(), parser.tool_calls()};
        std::optional<ojson> lp;
        if (p.logprobs) lp = chat_logprobs(loaded.tokenizer, tokens);
        res.set_content(chat_completion(id, created, model, msg, gen->finish_reason(), lp,
                                        gen->prompt_tokens(), gen->completion_tokens())
                            .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                        "application/json");
        return;
    }

    auto s = std::make_shared<ChatStream>();
    s->who = std::move(who);
    s->gen = std::move(gen);
    s->params = std::move(p);
    s->id = id;
    s->created = created;
    s->model = model;
    s->tokenizer = &loaded.tokenizer;
    stream_sse(res, "chat", *s->gen, [s, &ctx](httplib::DataSink& sink) {
        if (!sink_write(sink, s->chunk({{"role", "assistant"}, {"content", ""}}))) {
            s->gen->cancel();
            return false;
        }
        if (!pump_events(sink, ctx, *s->gen, [&](GenerationDelta& d) { return s->format(d); })) return false;
        warn_if_not_json(*s->gen, s->params);
        if (!sink_write(sink, s->ending())) return false;
        sink.done();
        return true;
    });
}

}  // namespace

void add_chat_routes(httplib::Server& http, ServerContext& ctx) {
    http.Post("/v1/chat/completions", [&ctx](const httplib::Request& req, httplib::Response& res) {
        answer(res, [&] { chat(ctx, req, res); });
    });
}

}  // namespace niwa::server
