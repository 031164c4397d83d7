// The streaming output parser: a small state machine over a buffer of not yet classified text.
#include "engine/text/output_parser.h"

#include <algorithm>
#include <random>
#include <utility>

namespace niwa::text {
namespace {

constexpr std::string_view kThinkClose = "</think>";
constexpr std::string_view kNewlineThinkClose = "\n</think>";
constexpr std::string_view kCallOpen = "<tool_call>";
constexpr std::string_view kCallClose = "</tool_call>";

bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

// Length of the longest end of `s` that could still grow into `tag` (which `s` does not contain).
size_t partial_tag_length(std::string_view s, std::string_view tag) {
    for (size_t k = std::min(s.size(), tag.size() - 1); k > 0; --k)
        if (tag.starts_with(s.substr(s.size() - k))) return k;
    return 0;
}

// Length of `s` without a trailing UTF-8 character whose bytes have not all arrived, so a streamed
// delta never ends in half a character.
size_t complete_utf8_length(std::string_view s) {
    size_t n = s.size();
    for (size_t back = 1; back <= 3 && back <= n; ++back) {
        auto c = static_cast<unsigned char>(s[n - back]);
        if ((c & 0xC0) == 0x80) continue;
        size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
        return len > back ? n - back : n;
    }
    return n;
}

uint64_t random_seed() {
    std::random_device rd;
    return (uint64_t{rd()} << 32) ^ rd();
}

}  // namespace

OutputParser::OutputParser(ParserOptions options)
    : options_(std::move(options)),
      schemas_(options_.tools),
      ids_(options_.id_seed.value_or(random_seed())),
      state_(options_.reasoning ? State::ReasoningStart : State::Content) {}

ParserDelta OutputParser::push(std::string_view text) {
    ParserDelta out;
    pending_ += text;
    drain(out, false);
    return out;
}

ParserDelta OutputParser::finish() {
    ParserDelta out;
    drain(out, true);
    return out;
}

void OutputParser::drain(ParserDelta& out, bool at_end) {
    for (bool more = true; more;) {
        switch (state_) {
            case State::ReasoningStart:
                more = step_reasoning_start(at_end);
                break;
            case State::Reasoning:
                more = step_reasoning(out, at_end);
                break;
            case State::AfterThink:
                more = step_after_think(at_end);
                break;
            case State::Content:
                more = step_content(out, at_end);
                break;
            case State::InToolCall:
                more = step_tool_call(out, at_end);
                break;
        }
    }
}

// The reasoning is what sits between "<think>\n" and "\n</think>"; a model that repeats the
// newline after the prompt's <think> has it dropped here.
bool OutputParser::step_reasoning_start(bool at_end) {
    if (pending_.empty() && !at_end) return false;
    if (!pending_.empty() && pending_[0] == '\n') pending_.erase(0, 1);
    state_ = State::Reasoning;
    return true;
}

bool OutputParser::step_reasoning(ParserDelta& out, bool at_end) {
    size_t tag = pending_.find(kThinkClose);
    if (tag != std::string::npos) {
        std::string_view text(pending_.data(), tag);
        if (text.ends_with('\n')) text.remove_suffix(1);
        emit_reasoning(out, text);
        pending_.erase(0, tag + kThinkClose.size());
        state_ = State::AfterThink;
        return true;
    }
    if (at_end) {
        emit_reasoning(out, pending_);
        pending_.clear();
        if (!reasoning_.empty())
            warnings_.push_back("output ended before </think>: all of it was kept as reasoning");
        return false;
    }
    size_t hold =
        std::max(partial_tag_length(pending_, kNewlineThinkClose), partial_tag_length(pending_, kThinkClose));
    size_t n = complete_utf8_length(std::string_view(pending_).substr(0, pending_.size() - hold));
    emit_reasoning(out, std::string_view(pending_).substr(0, n));
    pending_.erase(0, n);
    return false;
}

// The template writes "</think>\n\n" before the content; those two newlines belong to neither.
bool OutputParser::step_after_think(bool at_end) {
    while (think_newlines_ < 2 && !pending_.empty() && pending_[0] == '\n') {
        pending_.erase(0, 1);
        ++think_newlines_;
    }
    if (think_newlines_ < 2 && pending_.empty() && !at_end) return false;
    state_ = State::Content;
    return true;
}

// Whitespace next to a tool call only separates blocks, so it is not content. Trailing whitespace
// is therefore held until the next non-space byte shows whether a <tool_call> follows.
bool OutputParser::step_content(ParserDelta& out, bool at_end) {
    if (!options_.parse_tool_calls) {
        size_t n = at_end ? pending_.size() : complete_utf8_length(pending_);
        emit_content(out, std::string_view(pending_).substr(0, n));
        pending_.erase(0, n);
        return false;
    }
    if (after_tool_call_) {
        size_t text = 0;
        while (text < pending_.size() && is_space(pending_[text])) ++text;
        pending_.erase(0, text);
        if (pending_.empty()) return false;
        after_tool_call_ = false;
    }
    size_t tag = pending_.find(kCallOpen);
    if (tag != std::string::npos) {
        size_t text_end = tag;
        while (text_end > 0 && is_space(pending_[text_end - 1])) --text_end;
        emit_content(out, std::string_view(pending_).substr(0, text_end));
        space_before_call_ = pending_.substr(text_end, tag - text_end);
        pending_.erase(0, tag + kCallOpen.size());
        close_scan_from_ = 0;
        state_ = State::InToolCall;
        return true;
    }
    if (at_end) {
        emit_content(out, pending_);
        pending_.clear();
        return false;
    }
    size_t keep = pending_.size() - partial_tag_length(pending_, kCallOpen);
    while (keep > 0 && is_space(pending_[keep - 1])) --keep;
    size_t n = complete_utf8_length(std::string_view(pending_).substr(0, keep));
    emit_content(out, std::string_view(pending_).substr(0, n));
    pending_.erase(0, n);
    return false;
}

// A call is only known to be one when its block closes, so nothing of it is sent before; a block
// that does not parse, or never closes, goes out as content exactly as the model wrote it.
bool OutputParser::step_tool_call(ParserDelta& out, bool at_end) {
    size_t close = pending_.find(kCallClose, close_scan_from_);
    if (close == std::string::npos && !at_end) {
        close_scan_from_ = pending_.size() - std::min(pending_.size(), kCallClose.size() - 1);
        return false;
    }
    if (close == std::string::npos) {
        warnings_.push_back("unterminated <tool_call> at end of output, kept as content");
        emit_content(out, space_before_call_ + std::string(kCallOpen) + pending_);
        pending_.clear();
    } else {
        XmlToolCall call = parse_tool_call_xml(std::string_view(pending_).substr(0, close), schemas_);
        size_t block_end = close + kCallClose.size();
        if (call.ok()) {
            emit_tool_call(out, std::move(call));
            after_tool_call_ = true;
        } else {
            warnings_.push_back("malformed <tool_call> (" + call.error + "), kept as content");
            emit_content(out, space_before_call_ + std::string(kCallOpen) + pending_.substr(0, block_end));
        }
        pending_.erase(0, block_end);
    }
    space_before_call_.clear();
    state_ = State::Content;
    return true;
}

void OutputParser::emit_reasoning(ParserDelta& out, std::string_view text) {
    out.reasoning += text;
    reasoning_ += text;
}

void OutputParser::emit_content(ParserDelta& out, std::string_view text) {
    out.content += text;
    content_ += text;
}

// OpenAI's streaming shape: a delta that opens the call (id, name, empty arguments), then the
// arguments, here all in one fragment since they are complete.
void OutputParser::emit_tool_call(ParserDelta& out, XmlToolCall call) {
    int index = static_cast<int>(calls_.size());
    ToolCall whole{ids_.next(), std::move(call.name), std::move(call.arguments)};
    out.tool_calls.push_back({.index = index, .id = whole.id, .name = whole.name, .arguments = ""});
    out.tool_calls.push_back({.index = index, .arguments = whole.arguments});
    calls_.push_back(std::move(whole));
}

}  // namespace niwa::text
