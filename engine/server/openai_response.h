// The OpenAI response shapes: chat.completion, chat.completion.chunk, text_completion, usage
// and logprobs (chat's logprobs.content with bytes, and the legacy completions form).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/sched/engine.h"
#include "engine/text/tokenizer.h"
#include "engine/text/tool_call.h"

namespace niwa::server {

using ojson = nlohmann::ordered_json;

// "chatcmpl-" / "cmpl-" + 24 random alphanumerics.
std::string response_id(const std::string& prefix);
int64_t unix_now();

ojson usage_json(int prompt_tokens, int completion_tokens);

// [{token, logprob, bytes, top_logprobs: [{token, logprob, bytes}]}] for chat.
ojson chat_logprobs(const text::Tokenizer& tok, const std::vector<sched::TokenEvent>& tokens);
// {tokens, token_logprobs, top_logprobs, text_offset} for completions; offsets from `offset`.
ojson completion_logprobs(const text::Tokenizer& tok, const std::vector<sched::TokenEvent>& tokens,
                          size_t offset);
// The bytes a token stands for (a piece of a UTF-8 character for some tokens).
std::string token_bytes(const text::Tokenizer& tok, int32_t id);

struct ChatMessageOut {
    std::string reasoning;
    std::string content;
    std::vector<text::ToolCall> tool_calls;
};

ojson chat_completion(const std::string& id, int64_t created, const std::string& model,
                      const ChatMessageOut& msg, const std::string& finish_reason,
                      const std::optional<ojson>& logprobs, int prompt_tokens, int completion_tokens);

// One chunk with one choice; `finish_reason` empty: null.
ojson chat_chunk(const std::string& id, int64_t created, const std::string& model, ojson delta,
                 const std::string& finish_reason, const std::optional<ojson>& logprobs,
                 bool with_usage_field);

ojson text_completion(const std::string& id, int64_t created, const std::string& model,
                      const std::string& text, const std::string& finish_reason,
                      const std::optional<ojson>& logprobs, int prompt_tokens, int completion_tokens,
                      bool chunk, bool with_usage_field);

// The final usage chunk of a stream (stream_options.include_usage): empty choices.
ojson usage_chunk(const std::string& id, int64_t created, const std::string& model, const char* object,
                  int prompt_tokens, int completion_tokens);

// `data: JSON\n\n`
std::string sse_data(const ojson& j);

}  // namespace niwa::server
