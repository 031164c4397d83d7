#include "engine/server/openai_request.h"

#include <cmath>
#include <limits>

#include "engine/server/api_error.h"

namespace niwa::server {

namespace {

using ojson = nlohmann::ordered_json;

const ojson* field(const ojson& body, const char* name) {
    const auto it = body.find(name);
    if (it == body.end() || it->is_null()) return nullptr;  // null means "not given", as in OpenAI
    return &*it;
}

std::optional<double> number(const ojson& body, const char* name, double lo, double hi) {
    const ojson* v = field(body, name);
    if (!v) return std::nullopt;
    if (!v->is_number()) throw bad_field(name, "must be a number");
    const double x = v->get<double>();
    if (!(x >= lo && x <= hi))
        throw bad_field(
            name, "must be between " + ojson(lo).dump() + " and " + ojson(hi).dump() + ", not " + v->dump());
    return x;
}

std::optional<int64_t> integer(const ojson& body, const char* name, int64_t lo, int64_t hi) {
    const ojson* v = field(body, name);
    if (!v) return std::nullopt;
    if (!v->is_number_integer() &&
        !(v->is_number_float() && std::floor(v->get<double>()) == v->get<double>()))
        throw bad_field(name, "must be an integer");
    if (v->is_number_float()) {
        const double d = v->get<double>();
        if (d < double(lo) || d > double(hi))
            throw bad_field(name, "must be between " + std::to_string(lo) + " and " + std::to_string(hi));
        return int64_t(d);
    }
    if (v->is_number_unsigned() && v->get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
        throw bad_field(name, "must be between " + std::to_string(lo) + " and " + std::to_string(hi));
    const int64_t x = v->get<int64_t>();
    if (x < lo || x > hi)
        throw bad_field(name, "must be between " + std::to_string(lo) + " and " + std::to_string(hi) +
                                  ", not " + std::to_string(x));
    return x;
}

std::optional<bool> boolean(const ojson& body, const char* name) {
    const ojson* v = field(body, name);
    if (!v) return std::nullopt;
    if (!v->is_boolean()) throw bad_field(name, "must be a boolean");
    return v->get<bool>();
}

std::optional<std::string> string(const ojson& body, const char* name) {
    const ojson* v = field(body, name);
    if (!v) return std::nullopt;
    if (!v->is_string()) throw bad_field(name, "must be a string");
    return v->get<std::string>();
}

const ojson* object(const ojson& body, const char* name) {
    const ojson* v = field(body, name);
    if (v && !v->is_object()) throw bad_field(name, "must be an object");
    return v;
}

void parse_common(const ojson& body, CommonParams& p) {
    p.model = string(body, "model").value_or("");
    sched::SamplingParams& s = p.sampling;
    s.temperature = float(number(body, "temperature", 0, 2).value_or(1.0));
    s.top_p = float(number(body, "top_p", 0, 1).value_or(1.0));
    if (s.top_p <= 0) throw bad_field("top_p", "must be greater than 0");
    s.top_k = int(integer(body, "top_k", -1, 1 << 20).value_or(0));
    if (s.top_k < 0) s.top_k = 0;  // -1 is vLLM's "off"
    s.min_p = float(number(body, "min_p", 0, 1).value_or(0.0));
    s.presence_penalty = float(number(body, "presence_penalty", -2, 2).value_or(0.0));
    s.frequency_penalty = float(number(body, "frequency_penalty", -2, 2).value_or(0.0));
    if (const auto seed =
            integer(body, "seed", std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()))
        s.seed = uint64_t(*seed);
    const auto max_tokens = integer(body, "max_tokens", 1, 1 << 30);
    const auto max_completion = integer(body, "max_completion_tokens", 1, 1 << 30);
    if (max_completion)
        p.max_tokens = int(*max_completion);
    else if (max_tokens)
        p.max_tokens = int(*max_tokens);
    if (const auto n = integer(body, "n", 1, 1 << 20); n && *n != 1)
        throw bad_field("n", "must be 1: this server returns one choice per request");
    if (const auto priority = integer(body, "priority", -1000000, 1000000)) p.priority = int(*priority);
    p.stream = boolean(body, "stream").value_or(false);
    if (const ojson* so = object(body, "stream_options"))
        p.include_usage = boolean(*so, "include_usage").value_or(false);

    if (const ojson* stop = field(body, "stop")) {
        if (stop->is_string()) {
            p.stop.push_back(stop->get<std::string>());
        } else if (stop->is_array()) {
            for (const ojson& s2 : *stop) {
                if (!s2.is_string()) throw bad_field("stop", "must be a string or an array of strings");
                p.stop.push_back(s2.get<std::string>());
            }
            if (p.stop.size() > 16) throw bad_field("stop", "may hold at most 16 strings");
        } else {
            throw bad_field("stop", "must be a string or an array of strings");
        }
    }
}

void check_messages(const ojson& body) {
    const ojson* messages = field(body, "messages");
    if (!messages) throw ApiError(400, "'messages' is required", "messages", "missing_required_parameter");
    if (!messages->is_array() || messages->empty())
        throw bad_field("messages", "must be a non-empty array of messages");
    for (size_t i = 0; i < messages->size(); ++i) {
        const ojson& m = (*messages)[i];
        const std::string at = "messages[" + std::to_string(i) + "]";
        if (!m.is_object()) throw bad_field(at, "must be an object");
        const auto role = m.find("role");
        if (role == m.end() || !role->is_string()) throw bad_field(at + ".role", "must be a string");
        const auto content = m.find("content");
        if (content == m.end() || content->is_null() || content->is_string()) continue;
        if (!content->is_array())
            throw bad_field(at + ".content", "must be a string or an array of content parts");
        for (const ojson& part : *content) {
            const std::string type = part.is_object() && part.contains("type") && part["type"].is_string()
                                         ? part["type"].get<std::string>()
                                         : std::string();
            if (type == "image_url" || type == "image" || type == "input_image")
                throw ApiError(
                    400,
                    "image input needs the vision projector (--mmproj), which this server does not have yet",
                    at + ".content", "unsupported_content");
            if (type != "text" || !part.contains("text") || !part["text"].is_string())
                throw bad_field(at + ".content", "parts must be {\"type\": \"text\", \"text\": \"...\"}");
        }
    }
}

// "Reply with JSON" for response_format, asked in the system turn: the decoding constraint
// (when it applies) guarantees the syntax, the instruction makes the content worth having.
void steer_to_json(ojson& request, const ojson* schema) {
    std::string instruction = "Reply with a single valid JSON object and nothing else.";
    if (schema) instruction += " It must match this JSON schema: " + schema->dump();
    ojson& messages = request["messages"];
    if (messages[0].value("role", "") == "system" && messages[0]["content"].is_string()) {
        messages[0]["content"] = messages[0]["content"].get<std::string>() + "\n\n" + instruction;
    } else {
        messages.insert(messages.begin(), ojson{{"role", "system"}, {"content", instruction}});
    }
}

void parse_tools(const ojson& body, ChatParams& p) {
    const ojson* tools = field(body, "tools");
    if (tools) {
        if (!tools->is_array()) throw bad_field("tools", "must be an array of tools");
        for (size_t i = 0; i < tools->size(); ++i) {
            const ojson& t = (*tools)[i];
            if (!t.is_object() || t.value("type", "") != "function" || !t.contains("function") ||
                !t["function"].is_object() || !t["function"].contains("name") ||
                !t["function"]["name"].is_string())
                throw bad_field("tools[" + std::to_string(i) + "]",
                                "must be {\"type\": \"function\", \"function\": {\"name\": ...}}");
        }
        if (!tools->empty()) p.tools = nlohmann::json::parse(tools->dump());
    }
    const ojson* choice = field(body, "tool_choice");
    std::string mode = p.tools.is_null() ? "none" : "auto";
    std::string forced_name;
    if (choice) {
        if (choice->is_string()) {
            mode = choice->get<std::string>();
            if (mode != "auto" && mode != "none" && mode != "required")
                throw bad_field("tool_choice",
                                "must be \"auto\", \"none\", \"required\" or {\"type\": \"function\", "
                                "\"function\": {\"name\": ...}}");
        } else if (choice->is_object() && choice->contains("function") && (*choice)["function"].is_object() &&
                   (*choice)["function"].contains("name") && (*choice)["function"]["name"].is_string()) {
            mode = "named";
            forced_name = (*choice)["function"]["name"].get<std::string>();
        } else {
            throw bad_field("tool_choice",
                            "must be \"auto\", \"none\", \"required\" or {\"type\": \"function\", "
                            "\"function\": {\"name\": ...}}");
        }
        if (mode != "none" && p.tools.is_null()) throw bad_field("tool_choice", "needs 'tools'");
    }
    if (mode == "named") {
        bool known = false;
        for (const auto& t : p.tools) known = known || t["function"]["name"] == forced_name;
        if (!known)
            throw bad_field("tool_choice",
                            "names the function '" + forced_name + "', which is not in 'tools'");
    }
    p.parse_tool_calls = !p.tools.is_null() && mode != "none";
    if (mode == "required") p.forced_prefix = "<tool_call>\n<function=";
    if (mode == "named") p.forced_prefix = "<tool_call>\n<function=" + forced_name + ">\n";
}

}  // namespace

nlohmann::ordered_json parse_body(const std::string& body) {
    ojson j;
    try {
        j = ojson::parse(body);
    } catch (const nlohmann::json::parse_error& e) {
        throw ApiError(
            400, "the request body is not valid JSON (at byte " + std::to_string(e.byte) + "): " + e.what(),
            {}, "invalid_json");
    }
    if (!j.is_object()) throw ApiError(400, "the request body must be a JSON object", {}, "invalid_json");
    return j;
}

ChatParams parse_chat(const ojson& body) {
    ChatParams p;
    parse_common(body, p);
    check_messages(body);
    p.logprobs = boolean(body, "logprobs").value_or(false);
    if (const auto top = integer(body, "top_logprobs", 0, 20)) {
        if (!p.logprobs) throw bad_field("top_logprobs", "needs 'logprobs': true");
        p.sampling.top_logprobs = int(*top);
    } else if (p.logprobs) {
        p.sampling.top_logprobs = 0;
    }
    if (const auto effort = string(body, "reasoning_effort");
        effort && *effort != "low" && *effort != "medium" && *effort != "xhigh")
        throw bad_field("reasoning_effort",
                        "must be \"low\", \"medium\" or \"xhigh\", not \"" + *effort + "\"");
    const ojson* kwargs = object(body, "chat_template_kwargs");
    if (kwargs && kwargs->contains("enable_thinking")) {
        if (!(*kwargs)["enable_thinking"].is_boolean())
            throw bad_field("chat_template_kwargs.enable_thinking", "must be a boolean");
        p.thinking = (*kwargs)["enable_thinking"].get<bool>();
    }
    parse_tools(body, p);

    p.render_request = body;
    if (!p.forced_prefix.empty()) {
        // A forced call starts right after the generation prompt, so the turn must not open
        // inside <think>.
        p.thinking = false;
        p.render_request["chat_template_kwargs"]["enable_thinking"] = false;
    }
    if (const ojson* rf = object(body, "response_format")) {
        const std::string type = string(*rf, "type").value_or("text");
        if (type == "json_object") {
            p.json_object = true;
            p.constrain_json = !p.parse_tool_calls;
            steer_to_json(p.render_request, nullptr);
        } else if (type == "json_schema") {
            p.json_object = true;
            const ojson* js = object(*rf, "json_schema");
            const ojson* schema = js ? field(*js, "schema") : nullptr;
            // The constraint is syntax only: an object, when the schema asks for one.
            const bool object_schema =
                !schema || !schema->is_object() || schema->value("type", ojson("object")) == ojson("object");
            p.constrain_json = object_schema && !p.parse_tool_calls;
            steer_to_json(p.render_request, schema);
        } else if (type != "text") {
            throw bad_field("response_format.type", "must be \"text\", \"json_object\" or \"json_schema\"");
        }
    }
    return p;
}

CompletionParams parse_completion(const ojson& body) {
    CompletionParams p;
    parse_common(body, p);
    const ojson* prompt = field(body, "prompt");
    if (!prompt) throw ApiError(400, "'prompt' is required", "prompt", "missing_required_parameter");
    const auto ids_of = [&](const ojson& arr) {
        std::vector<int32_t> ids;
        for (const ojson& v : arr) {
            if (!v.is_number_integer()) throw bad_field("prompt", "token ids must be integers");
            ids.push_back(v.get<int32_t>());
        }
        return ids;
    };
    const char* shape = "must be a string, an array of one string, or an array of token ids";
    if (prompt->is_string()) {
        p.prompt_text = prompt->get<std::string>();
    } else if (prompt->is_array() && prompt->size() == 1 && (*prompt)[0].is_string()) {
        p.prompt_text = (*prompt)[0].get<std::string>();
    } else if (prompt->is_array() && prompt->size() == 1 && (*prompt)[0].is_array()) {
        p.prompt_ids = ids_of((*prompt)[0]);
    } else if (prompt->is_array() && !prompt->empty() && (*prompt)[0].is_number()) {
        p.prompt_ids = ids_of(*prompt);
    } else if (prompt->is_array() && prompt->size() > 1) {
        throw bad_field("prompt", "must hold one prompt: this server returns one choice per request");
    } else {
        throw bad_field("prompt", shape);
    }
    if (!p.prompt_text && p.prompt_ids.empty()) throw bad_field("prompt", shape);
    if (const auto lp = integer(body, "logprobs", 0, 20)) {
        p.logprobs = int(*lp);
        p.sampling.top_logprobs = int(*lp);
    }
    if (boolean(body, "echo").value_or(false)) throw bad_field("echo", "is not supported");
    return p;
}

}  // namespace niwa::server
