// Request -> template variables -> prompt.
#include "engine/text/chat_template.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "engine/gguf/reader.h"
#include "engine/text/jinja/interpreter.h"

namespace niwa::text {
namespace {

constexpr const char* kBosToken = "<|endoftext|>";
constexpr const char* kEosToken = "<|im_end|>";

// OpenAI sends tool-call arguments as a JSON string; templates iterate them as a mapping.
nlohmann::ordered_json prepare_message(const nlohmann::ordered_json& message, size_t index) {
    const std::string where = "messages[" + std::to_string(index) + "]";
    if (!message.is_object()) throw ChatRequestError(where + " must be an object");
    nlohmann::ordered_json m = message;
    auto calls = m.find("tool_calls");
    if (calls == m.end() || !calls->is_array()) return m;
    for (size_t j = 0; j < calls->size(); ++j) {
        auto& call = (*calls)[j];
        if (!call.is_object() || !call.contains("function") || !call["function"].is_object()) continue;
        auto& fn = call["function"];
        auto args = fn.find("arguments");
        if (args == fn.end() || !args->is_string()) continue;
        try {
            *args = nlohmann::ordered_json::parse(args->get<std::string>());
        } catch (const nlohmann::json::parse_error& e) {
            throw ChatRequestError(where + ".tool_calls[" + std::to_string(j) +
                                   "].function.arguments is not valid JSON: " + e.what());
        }
    }
    return m;
}

}  // namespace

ChatTemplate::ChatTemplate(std::string source) : source_(std::move(source)) {
    try {
        template_ = std::make_shared<const jinja::Template>(source_);
    } catch (const TemplateError& e) {
        throw TemplateError(std::string("chat template: ") + e.what());
    }
}

ChatTemplate ChatTemplate::from_gguf(const gguf::Reader& r) {
    std::optional<std::string> source = r.opt_string("tokenizer.chat_template");
    if (!source) {
        throw TemplateError("the model file " + r.path() +
                            " has no chat template (tokenizer.chat_template); pass --chat-template FILE");
    }
    return ChatTemplate(std::move(*source));
}

ChatTemplate ChatTemplate::from_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read chat template " + path + ": " + std::strerror(errno));
    std::ostringstream text;
    text << in.rdbuf();
    return ChatTemplate(text.str());
}

std::string ChatTemplate::render(const nlohmann::json& request) const {
    return render(nlohmann::ordered_json::parse(request.dump()));
}

std::string ChatTemplate::render(const nlohmann::ordered_json& request) const {
    if (!request.is_object()) throw ChatRequestError("the request body must be a JSON object");
    auto messages = request.find("messages");
    if (messages == request.end() || !messages->is_array())
        throw ChatRequestError("'messages' must be an array of messages");

    nlohmann::ordered_json prepared = nlohmann::ordered_json::array();
    for (size_t i = 0; i < messages->size(); ++i) prepared.push_back(prepare_message((*messages)[i], i));

    jinja::Dict vars;
    vars.set("messages", jinja::Value::from_json(prepared));
    auto tools = request.find("tools");
    const bool has_tools = tools != request.end() && tools->is_array() && !tools->empty();
    vars.set("tools", has_tools ? jinja::Value::from_json(*tools) : jinja::Value::none());
    auto agp = request.find("add_generation_prompt");
    vars.set("add_generation_prompt", agp != request.end() && agp->is_boolean() ? agp->get<bool>() : true);
    vars.set("bos_token", kBosToken);
    vars.set("eos_token", kEosToken);
    if (auto effort = request.find("reasoning_effort"); effort != request.end() && !effort->is_null())
        vars.set("reasoning_effort", jinja::Value::from_json(*effort));
    if (auto kwargs = request.find("chat_template_kwargs"); kwargs != request.end() && !kwargs->is_null()) {
        if (!kwargs->is_object()) throw ChatRequestError("'chat_template_kwargs' must be an object");
        for (const auto& [k, v] : kwargs->items()) vars.set(k, jinja::Value::from_json(v));
    }

    try {
        return template_->render(vars);
    } catch (const jinja::RaisedError& e) {
        throw ChatRequestError(e.what());
    } catch (const TemplateError& e) {
        throw TemplateError(std::string("chat template: ") + e.what());
    }
}

}  // namespace niwa::text
