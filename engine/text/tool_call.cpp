// OpenAI JSON shapes of tool calls, and their ids.
#include "engine/text/tool_call.h"

#include <string_view>

namespace niwa::text {

nlohmann::json tool_call_json(const ToolCall& call) {
    return {{"id", call.id},
            {"type", "function"},
            {"function", {{"name", call.name}, {"arguments", call.arguments}}}};
}

nlohmann::json tool_call_delta_json(const ToolCallDelta& delta) {
    nlohmann::json j = {{"index", delta.index}};
    if (!delta.opens_call()) {
        j["function"] = {{"arguments", delta.arguments}};
        return j;
    }
    j["id"] = delta.id;
    j["type"] = "function";
    j["function"] = {{"name", delta.name}, {"arguments", delta.arguments}};
    return j;
}

std::string ToolCallIds::next() {
    constexpr std::string_view alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    std::uniform_int_distribution<size_t> pick(0, alphabet.size() - 1);
    std::string id = "call_";
    for (int i = 0; i < 24; ++i) id += alphabet[pick(rng_)];
    return id;
}

}  // namespace niwa::text
