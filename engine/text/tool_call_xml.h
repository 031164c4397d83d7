// Reads the body of one <tool_call> block, Bonsai 2's XML call format (MODEL.md "Chat template"):
//   <function=NAME>\n<parameter=KEY>\nVALUE\n</parameter>\n...</function>
// into a function name and a JSON object of arguments typed by the request's tool schemas.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

namespace niwa::text {

// The argument types each tool declares, so "5" becomes 5 for a number and stays "5" for a string.
class ToolSchemas {
public:
    // `tools` is the request's tools array ([{type, function: {name, parameters}}]); null or
    // malformed entries are skipped, and their calls are typed by guessing.
    explicit ToolSchemas(const nlohmann::json& tools);

    // VALUE as the schema wants it: raw text for strings, parsed JSON for other types (raw text
    // when it does not parse). Without a schema, JSON numbers, booleans, null, objects and
    // arrays are parsed and anything else is text.
    nlohmann::ordered_json typed_value(const std::string& tool, const std::string& key,
                                       const std::string& raw) const;

private:
    std::vector<std::string> declared_types(const std::string& tool, const std::string& key) const;

    std::unordered_map<std::string, nlohmann::json> properties_;  // tool name -> its properties
};

struct XmlToolCall {
    std::string name;
    std::string arguments;  // JSON object text, keys in the order the model wrote them
    std::string error;      // why the block is not a call; empty when it is one

    bool ok() const { return error.empty(); }
};

// `body` is what sits between <tool_call> and </tool_call>.
XmlToolCall parse_tool_call_xml(std::string_view body, const ToolSchemas& schemas);

}  // namespace niwa::text
