// Renders an OpenAI chat-completions request into the prompt text with the model's own
// Jinja chat template, exactly as transformers' apply_chat_template would (the same
// variables, the same whitespace, the same errors).
#pragma once

#include <memory>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/text/jinja/error.h"  // TemplateError: the template is broken (line:column)

namespace niwa::gguf {
class Reader;
}

namespace niwa::text {

namespace jinja {
class Template;
}

// The request cannot be rendered (a 400 for the client): a bad field, arguments that are
// not JSON, or the template's own raise_exception() message, verbatim.
class ChatRequestError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

class ChatTemplate {
public:
    // Parses once; TemplateError with line and column when the template is malformed.
    explicit ChatTemplate(std::string source);
    // tokenizer.chat_template of the model file; TemplateError when the file has none.
    static ChatTemplate from_gguf(const gguf::Reader& r);
    static ChatTemplate from_file(const std::string& path);

    // The template sees: messages (tool-call arguments parsed from their JSON strings into
    // objects), tools (None when the request has none, as transformers passes it),
    // add_generation_prompt (default true), reasoning_effort (only when given), every key of
    // chat_template_kwargs (enable_thinking, ...), bos_token and eos_token.
    // Parse the request body as ordered_json: tool schemas and arguments then reach the
    // template in the client's key order, as in Python; a plain json sorts keys.
    std::string render(const nlohmann::ordered_json& request) const;
    std::string render(const nlohmann::json& request) const;

    const std::string& source() const { return source_; }

private:
    std::string source_;
    std::shared_ptr<const jinja::Template> template_;
};

}  // namespace niwa::text
