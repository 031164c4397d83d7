// Splits the model's generated text, as it streams, into reasoning, content and tool calls
// (MODEL.md "Chat template" and "Output"). Streamed deltas add up exactly to the whole result.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/text/tool_call.h"
#include "engine/text/tool_call_xml.h"

namespace niwa::text {

// What one push() or finish() produced; every field may be empty.
struct ParserDelta {
    std::string reasoning;  // reasoning_content text
    std::string content;
    std::vector<ToolCallDelta> tool_calls;

    bool empty() const { return reasoning.empty() && content.empty() && tool_calls.empty(); }
};

struct ParserOptions {
    bool reasoning = true;            // generation starts inside <think>
    nlohmann::json tools;             // the request's tools, to type argument values; may be null
    bool parse_tool_calls = true;     // false when tool_choice is "none" or there are no tools
    std::optional<uint64_t> id_seed;  // fixed tool-call ids for tests; random when empty
};

class OutputParser {
public:
    explicit OutputParser(ParserOptions options);

    // Takes the next piece of generated text, split anywhere (even inside a UTF-8 character).
    // Holds back only what may still turn into a tag, a stripped newline or whitespace next to
    // a tool call, and the unfinished tail of a UTF-8 character.
    ParserDelta push(std::string_view text);
    // End of generation: flushes what was held back.
    ParserDelta finish();

    // The whole result so far.
    const std::string& reasoning() const { return reasoning_; }
    const std::string& content() const { return content_; }
    const std::vector<ToolCall>& tool_calls() const { return calls_; }
    bool has_tool_calls() const { return !calls_.empty(); }  // finish_reason "tool_calls"
    // Oddities of the output, for the log, e.g. a <tool_call> that was never closed.
    const std::vector<std::string>& warnings() const { return warnings_; }

private:
    enum class State { ReasoningStart, Reasoning, AfterThink, Content, InToolCall };

    // Each step consumes what it can from pending_; false when it must wait for more text.
    void drain(ParserDelta& out, bool at_end);
    bool step_reasoning_start(bool at_end);
    bool step_reasoning(ParserDelta& out, bool at_end);
    bool step_after_think(bool at_end);
    bool step_content(ParserDelta& out, bool at_end);
    bool step_tool_call(ParserDelta& out, bool at_end);

    void emit_reasoning(ParserDelta& out, std::string_view text);
    void emit_content(ParserDelta& out, std::string_view text);
    void emit_tool_call(ParserDelta& out, XmlToolCall call);

    ParserOptions options_;
    ToolSchemas schemas_;
    ToolCallIds ids_;

    State state_;
    std::string pending_;            // received, not yet classified
    size_t think_newlines_ = 0;      // newlines stripped after </think> (the template writes two)
    bool after_tool_call_ = false;   // whitespace here follows a tool call and is dropped
    std::string space_before_call_;  // whitespace before <tool_call>: dropped only if the call parses
    size_t close_scan_from_ = 0;     // where to resume looking for </tool_call> in pending_

    std::string reasoning_;
    std::string content_;
    std::vector<ToolCall> calls_;
    std::vector<std::string> warnings_;
};

}  // namespace niwa::text
