// A tool call the model made, and the OpenAI shapes it is sent in (whole and streamed).
#pragma once

#include <cstdint>
#include <random>
#include <string>

#include <nlohmann/json.hpp>

namespace niwa::text {

struct ToolCall {
    std::string id;         // "call_" + 24 alphanumerics
    std::string name;       // the function's name
    std::string arguments;  // a JSON object, as text
};

// One entry of a streamed `delta.tool_calls`. The first delta of a call carries its id and
// name with empty arguments; later ones carry only argument text to append.
struct ToolCallDelta {
    int index = 0;  // position of the call in the response's tool_calls
    std::string id;
    std::string name;
    std::string arguments;

    bool opens_call() const { return !id.empty(); }
};

// {"id", "type": "function", "function": {"name", "arguments"}} as in a chat completion.
nlohmann::json tool_call_json(const ToolCall& call);
// {"index", ["id", "type", "function.name",] "function.arguments"} as in a streamed chunk.
nlohmann::json tool_call_delta_json(const ToolCallDelta& delta);

// Makes tool-call ids; seeded so tests can expect fixed ids.
class ToolCallIds {
public:
    explicit ToolCallIds(uint64_t seed) : rng_(seed) {}
    std::string next();

private:
    std::mt19937_64 rng_;
};

}  // namespace niwa::text
