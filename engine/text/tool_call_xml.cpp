// Parser of one <tool_call> block's XML body, and typing of its argument values.
#include "engine/text/tool_call_xml.h"

#include <algorithm>

namespace niwa::text {
namespace {

constexpr std::string_view kFunctionOpen = "<function=";
constexpr std::string_view kFunctionClose = "</function>";
constexpr std::string_view kParameterOpen = "<parameter=";
constexpr std::string_view kParameterClose = "</parameter>";

bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

size_t skip_space(std::string_view s, size_t pos) {
    while (pos < s.size() && is_space(s[pos])) ++pos;
    return pos;
}

bool at(std::string_view s, size_t pos, std::string_view word) {
    return s.substr(pos).starts_with(word);
}

// Reads NAME of `<tag=NAME>` starting right after the '='; returns the position after '>'.
size_t read_tag_name(std::string_view s, size_t pos, std::string& name) {
    size_t end = s.find('>', pos);
    if (end == std::string_view::npos) return std::string_view::npos;
    name.assign(s.substr(pos, end - pos));
    bool plain = !name.empty() && name.find_first_of("<\n") == std::string::npos;
    return plain ? end + 1 : std::string_view::npos;
}

// A value may itself contain "</parameter>" (code that writes XML); only the one followed by the
// next parameter, the function's end or the block's end closes it.
size_t find_value_end(std::string_view s, size_t pos) {
    for (size_t end = s.find(kParameterClose, pos); end != std::string_view::npos;
         end = s.find(kParameterClose, end + 1)) {
        size_t next = skip_space(s, end + kParameterClose.size());
        if (next == s.size() || at(s, next, kParameterOpen) || at(s, next, kFunctionClose)) return end;
    }
    return std::string_view::npos;
}

bool has_type(const nlohmann::ordered_json& v, const std::string& type) {
    if (type == "string") return v.is_string();
    if (type == "number") return v.is_number();
    if (type == "integer") return v.is_number_integer();
    if (type == "boolean") return v.is_boolean();
    if (type == "object") return v.is_object();
    if (type == "array") return v.is_array();
    if (type == "null") return v.is_null();
    return false;
}

void add_types(const nlohmann::json& schema, std::vector<std::string>& types) {
    if (!schema.is_object()) return;
    auto type = schema.find("type");
    if (type != schema.end() && type->is_string()) types.push_back(*type);
    if (type != schema.end() && type->is_array())
        for (const auto& t : *type)
            if (t.is_string()) types.push_back(t);
    for (const char* any : {"anyOf", "oneOf"}) {
        auto alts = schema.find(any);
        if (alts == schema.end() || !alts->is_array()) continue;
        for (const auto& alt : *alts) add_types(alt, types);
    }
}

}  // namespace

ToolSchemas::ToolSchemas(const nlohmann::json& tools) {
    if (!tools.is_array()) return;
    for (const auto& tool : tools) {
        if (!tool.is_object()) continue;
        const auto& fn = tool.contains("function") ? tool["function"] : tool;
        if (!fn.is_object() || !fn.contains("name") || !fn["name"].is_string()) continue;
        auto params = fn.find("parameters");
        if (params == fn.end() || !params->is_object()) continue;
        auto props = params->find("properties");
        if (props != params->end() && props->is_object()) properties_[fn["name"].get<std::string>()] = *props;
    }
}

std::vector<std::string> ToolSchemas::declared_types(const std::string& tool, const std::string& key) const {
    std::vector<std::string> types;
    auto props = properties_.find(tool);
    if (props == properties_.end()) return types;
    auto prop = props->second.find(key);
    if (prop != props->second.end()) add_types(*prop, types);
    return types;
}

nlohmann::ordered_json ToolSchemas::typed_value(const std::string& tool, const std::string& key,
                                                const std::string& raw) const {
    std::vector<std::string> types = declared_types(tool, key);
    bool string_ok = std::find(types.begin(), types.end(), "string") != types.end();
    if (string_ok && types.size() == 1) return raw;
    auto parsed = nlohmann::ordered_json::parse(raw, nullptr, false);
    if (parsed.is_discarded()) return raw;
    if (types.empty()) return parsed.is_string() ? nlohmann::ordered_json(raw) : parsed;
    bool fits = std::any_of(types.begin(), types.end(), [&](const auto& t) { return has_type(parsed, t); });
    if (fits || !string_ok) return parsed;
    return raw;
}

XmlToolCall parse_tool_call_xml(std::string_view body, const ToolSchemas& schemas) {
    XmlToolCall call;
    size_t pos = skip_space(body, 0);
    if (!at(body, pos, kFunctionOpen)) return {.error = "missing <function=NAME>"};
    pos = read_tag_name(body, pos + kFunctionOpen.size(), call.name);
    if (pos == std::string_view::npos) return {.error = "bad <function=NAME> tag"};

    nlohmann::ordered_json args = nlohmann::ordered_json::object();
    for (pos = skip_space(body, pos); !at(body, pos, kFunctionClose); pos = skip_space(body, pos)) {
        if (pos == body.size()) return {.error = "missing </function>"};
        if (!at(body, pos, kParameterOpen))
            return {.error = "unexpected text inside <function=" + call.name + ">"};
        std::string key;
        pos = read_tag_name(body, pos + kParameterOpen.size(), key);
        if (pos == std::string_view::npos) return {.error = "bad <parameter=KEY> tag"};
        // The template writes "\nVALUE\n" between the tags; the two newlines are not the value's.
        if (pos < body.size() && body[pos] == '\n') ++pos;
        size_t end = find_value_end(body, pos);
        if (end == std::string_view::npos) return {.error = "unclosed <parameter=" + key + ">"};
        std::string_view value = body.substr(pos, end - pos);
        if (value.ends_with('\n')) value.remove_suffix(1);
        args[key] = schemas.typed_value(call.name, key, std::string(value));
        pos = end + kParameterClose.size();
    }
    pos = skip_space(body, pos + kFunctionClose.size());
    if (pos != body.size()) return {.error = "text after </function>"};
    call.arguments = args.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
    return call;
}

}  // namespace niwa::text
