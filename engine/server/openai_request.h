// Reading OpenAI request bodies: JSON parsing with the error position, field types checked
// (a known field of the wrong type is a 400 naming it; unknown fields are ignored), and the
// chat request turned into what the template renders and how the output is parsed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/sched/engine.h"

namespace niwa::server {

// Throws ApiError 400 with the byte offset of a syntax error; the body must be an object.
nlohmann::ordered_json parse_body(const std::string& body);

// The fields chat and completions share.
struct CommonParams {
    std::string model;  // empty when not given
    sched::SamplingParams sampling;
    std::optional<int> max_tokens;
    std::vector<std::string> stop;
    std::optional<int> priority;
    bool stream = false;
    bool include_usage = false;
};

struct ChatParams : CommonParams {
    nlohmann::ordered_json render_request;  // the body as the template should see it
    bool thinking = true;                   // generation starts inside <think>
    bool logprobs = false;
    nlohmann::json tools;  // null when none
    bool parse_tool_calls = false;
    std::string forced_prefix;  // appended to the prompt (tool_choice required/named)
    bool json_object = false;   // response_format json_object / json_schema
    // The content is decoded under a JSON-object constraint: json_object (or an object
    // json_schema) when tool calls are not parsed (no tools, or tool_choice "none").
    bool constrain_json = false;
};

struct CompletionParams : CommonParams {
    std::optional<std::string> prompt_text;
    std::vector<int32_t> prompt_ids;  // when the prompt is given as token ids
    std::optional<int> logprobs;      // legacy: number of alternatives
};

ChatParams parse_chat(const nlohmann::ordered_json& body);
CompletionParams parse_completion(const nlohmann::ordered_json& body);

}  // namespace niwa::server
