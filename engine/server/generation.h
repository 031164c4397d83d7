// One request's output as it is generated: token ids from the engine's Stream become text
// (whole UTF-8 characters), stop strings cut it, and for chat the output parser splits it
// into reasoning, content and tool calls. Records the request's latency metrics.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/sched/engine.h"
#include "engine/server/server_context.h"
#include "engine/server/stop_strings.h"
#include "engine/text/output_parser.h"
#include "engine/text/stream_decoder.h"

namespace niwa::server {

struct GenerationDelta {
    std::string reasoning;
    std::string content;
    std::vector<text::ToolCallDelta> tool_calls;
    std::vector<sched::TokenEvent> tokens;  // the tokens consumed for this delta (logprobs)

    bool has_text() const { return !reasoning.empty() || !content.empty() || !tool_calls.empty(); }
};

struct GenerationSetup {
    std::vector<std::string> stop;
    std::optional<text::ParserOptions> parser;  // chat; none: plain text (completions)
    std::string forced_prefix;                  // already in the prompt; the parser reads it first
    int prompt_tokens = 0;
};

class Generation {
public:
    Generation(ServerContext& ctx, const Loaded& loaded, std::shared_ptr<sched::Stream> stream,
               GenerationSetup setup);
    ~Generation();  // cancels the request when it has not finished (the client went away)
    Generation(const Generation&) = delete;
    Generation& operator=(const Generation&) = delete;

    // Waits up to `wait` for tokens and returns what they made; the last call (done() true
    // afterwards) also carries what was held back.
    GenerationDelta poll(std::chrono::milliseconds wait);
    bool done() const { return done_; }
    // The client went away, or the server is stopping.
    void cancel();

    // stop, length, tool_calls, abort or error; valid once done().
    const std::string& finish_reason() const { return finish_reason_; }
    const std::string& error() const { return error_; }
    int prompt_tokens() const { return prompt_tokens_; }
    int completion_tokens() const { return completion_tokens_; }
    const std::string& text() const { return text_; }  // all emitted text (completions)
    const text::OutputParser* parser() const { return parser_ ? &*parser_ : nullptr; }
    const std::string& client() const { return client_; }
    void set_client(std::string name) { client_ = std::move(name); }

private:
    void feed(std::string_view text, GenerationDelta& d);
    void end(std::string reason);

    ServerContext& ctx_;
    std::shared_ptr<sched::Stream> stream_;
    text::StreamDecoder decoder_;
    StopStrings stops_;
    std::optional<text::OutputParser> parser_;
    GenerationDelta pending_;
    std::string text_;
    std::string client_;
    int prompt_tokens_ = 0;
    int completion_tokens_ = 0;
    bool done_ = false;
    std::string finish_reason_;
    std::string error_;
    std::chrono::steady_clock::time_point submitted_;
    std::optional<std::chrono::steady_clock::time_point> last_token_;
};

}  // namespace niwa::server
