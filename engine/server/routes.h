// The HTTP routes, one file per family, and what they share: error handling, submitting a
// request to the engine, and pumping a generation out as server-sent events.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/server/auth.h"
#include "engine/server/generation.h"
#include "engine/server/openai_request.h"
#include "engine/server/server_context.h"

namespace httplib {
class Server;
class DataSink;
struct Request;
struct Response;
}  // namespace httplib

namespace niwa::server {

void add_chat_routes(httplib::Server& http, ServerContext& ctx);        // routes_chat.cpp
void add_completion_routes(httplib::Server& http, ServerContext& ctx);  // routes_completions.cpp
void add_info_routes(httplib::Server& http, ServerContext& ctx);        // routes_info.cpp

// Runs `fn`; an ApiError (or any other exception, as a 500) becomes an OpenAI error response.
void answer(httplib::Response& res, const std::function<void()>& fn);

// The loaded model, or ApiError 503 while loading.
Loaded& require_loaded(ServerContext& ctx);
// 404 unless `model` is empty or the served name.
void check_model(const ServerContext& ctx, const std::string& model);

// Checks the prompt against the context, fills the engine request (max_tokens clamped to the
// context, the key's default priority) and submits it; 400 / 429 as ApiError. `json`, when
// given, constrains the output to one JSON object.
std::shared_ptr<sched::Stream> submit(ServerContext& ctx, Loaded& loaded, std::vector<int32_t> prompt,
                                      const CommonParams& p, const Admission& who, const char* prompt_field,
                                      std::shared_ptr<sched::JsonConstraint> json = nullptr);

// Polls `gen` until it is done, writing what `format` makes of each delta; cancels it when a
// write fails (the client went away) or the server stops. Returns false when the client is gone.
bool pump_events(httplib::DataSink& sink, ServerContext& ctx, Generation& gen,
                 const std::function<std::string(GenerationDelta&)>& format);
// Answers with an SSE stream written by `body` (which owns what the stream needs and returns
// false when it ended early). An exception in `body` is logged as "<what> stream failed" and
// cancels `gen`; the client sees the stream end.
void stream_sse(httplib::Response& res, const char* what, Generation& gen,
                std::function<bool(httplib::DataSink&)> body);
// Writes `text` to the sink; false when the client is gone.
bool sink_write(httplib::DataSink& sink, const std::string& text);

inline constexpr std::chrono::milliseconds kPollInterval{100};

}  // namespace niwa::server
