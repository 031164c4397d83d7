#include "engine/server/openai_response.h"

#include <chrono>
#include <random>

#include "engine/text/byte_level.h"
#include "engine/text/unicode.h"

namespace niwa::server {

std::string response_id(const std::string& prefix) {
    static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    thread_local std::mt19937_64 rng{std::random_device{}()};
    std::string id = prefix;
    for (int i = 0; i < 24; ++i) id += kAlphabet[rng() % (sizeof kAlphabet - 1)];
    return id;
}

int64_t unix_now() {
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

ojson usage_json(int prompt_tokens, int completion_tokens) {
    return {{"prompt_tokens", prompt_tokens},
            {"completion_tokens", completion_tokens},
            {"total_tokens", prompt_tokens + completion_tokens}};
}

std::string token_bytes(const text::Tokenizer& tok, int32_t id) {
    if (tok.is_special(id)) return std::string(tok.token_text(id));
    const auto bytes = text::byte_level_decode(tok.token_text(id));
    return bytes ? *bytes : std::string(tok.token_text(id));
}

namespace {

// A token's text for logprobs: its bytes when they are whole UTF-8, else the decoder's
// replacement text (the bytes field keeps the truth).
ojson token_entry(const text::Tokenizer& tok, int32_t id, float logprob) {
    const std::string bytes = token_bytes(tok, id);
    const int32_t one[1] = {id};
    const std::string shown = text::utf8_is_valid(bytes) ? bytes : tok.decode(one);
    ojson b = ojson::array();
    for (unsigned char c : bytes) b.push_back(int(c));
    return {{"token", shown}, {"logprob", logprob}, {"bytes", b}};
}

}  // namespace

ojson chat_logprobs(const text::Tokenizer& tok, const std::vector<sched::TokenEvent>& tokens) {
    ojson content = ojson::array();
    for (const sched::TokenEvent& e : tokens) {
        ojson entry = token_entry(tok, e.token, e.logprob);
        ojson top = ojson::array();
        for (const auto& [id, lp] : e.top) top.push_back(token_entry(tok, id, lp));
        entry["top_logprobs"] = top;
        content.push_back(std::move(entry));
    }
    return {{"content", content}, {"refusal", nullptr}};
}

ojson completion_logprobs(const text::Tokenizer& tok, const std::vector<sched::TokenEvent>& tokens,
                          size_t offset) {
    ojson toks = ojson::array(), lps = ojson::array(), tops = ojson::array(), offsets = ojson::array();
    for (const sched::TokenEvent& e : tokens) {
        const ojson entry = token_entry(tok, e.token, e.logprob);
        toks.push_back(entry["token"]);
        lps.push_back(e.logprob);
        ojson top = ojson::object();
        for (const auto& [id, lp] : e.top) top[token_entry(tok, id, lp)["token"].get<std::string>()] = lp;
        tops.push_back(top);
        offsets.push_back(offset);
        offset += token_bytes(tok, e.token).size();
    }
    return {{"tokens", toks}, {"token_logprobs", lps}, {"top_logprobs", tops}, {"text_offset", offsets}};
}

ojson chat_completion(const std::string& id, int64_t created, const std::string& model,
                      const ChatMessageOut& msg, const std::string& finish_reason,
                      const std::optional<ojson>& logprobs, int prompt_tokens, int completion_tokens) {
    ojson message = {{"role", "assistant"}};
    message["content"] = msg.content.empty() && !msg.tool_calls.empty() ? ojson() : ojson(msg.content);
    message["reasoning_content"] = msg.reasoning.empty() ? ojson() : ojson(msg.reasoning);
    if (!msg.tool_calls.empty()) {
        ojson calls = ojson::array();
        for (const text::ToolCall& c : msg.tool_calls)
            calls.push_back(ojson::parse(text::tool_call_json(c).dump()));
        message["tool_calls"] = calls;
    }
    ojson choice = {{"index", 0},
                    {"message", message},
                    {"logprobs", logprobs ? *logprobs : ojson()},
                    {"finish_reason", finish_reason}};
    return {{"id", id},
            {"object", "chat.completion"},
            {"created", created},
            {"model", model},
            {"choices", ojson::array({choice})},
            {"usage", usage_json(prompt_tokens, completion_tokens)}};
}

ojson chat_chunk(const std::string& id, int64_t created, const std::string& model, ojson delta,
                 const std::string& finish_reason, const std::optional<ojson>& logprobs,
                 bool with_usage_field) {
    ojson choice = {{"index", 0},
                    {"delta", std::move(delta)},
                    {"logprobs", logprobs ? *logprobs : ojson()},
                    {"finish_reason", finish_reason.empty() ? ojson() : ojson(finish_reason)}};
    ojson j = {{"id", id},
               {"object", "chat.completion.chunk"},
               {"created", created},
               {"model", model},
               {"choices", ojson::array({choice})}};
    if (with_usage_field) j["usage"] = nullptr;
    return j;
}

ojson text_completion(const std::string& id, int64_t created, const std::string& model,
                      const std::string& text, const std::string& finish_reason,
                      const std::optional<ojson>& logprobs, int prompt_tokens, int completion_tokens,
                      bool chunk, bool with_usage_field) {
    ojson choice = {{"index", 0},
                    {"text", text},
                    {"logprobs", logprobs ? *logprobs : ojson()},
                    {"finish_reason", finish_reason.empty() ? ojson() : ojson(finish_reason)}};
    ojson j = {{"id", id},
               {"object", "text_completion"},
               {"created", created},
               {"model", model},
               {"choices", ojson::array({choice})}};
    if (!chunk)
        j["usage"] = usage_json(prompt_tokens, completion_tokens);
    else if (with_usage_field)
        j["usage"] = nullptr;
    return j;
}

ojson usage_chunk(const std::string& id, int64_t created, const std::string& model, const char* object,
                  int prompt_tokens, int completion_tokens) {
    return {{"id", id},
            {"object", object},
            {"created", created},
            {"model", model},
            {"choices", ojson::array()},
            {"usage", usage_json(prompt_tokens, completion_tokens)}};
}

std::string sse_data(const ojson& j) {
    return "data: " + j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n\n";
}

}  // namespace niwa::server
