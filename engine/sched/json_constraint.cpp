#include "engine/sched/json_constraint.h"

#include <string_view>
#include <utility>

namespace niwa::sched {

namespace {

constexpr std::string_view kThinkEnd = "</think>";

}  // namespace

JsonConstraint::JsonConstraint(text::Tokenizer tokenizer, bool reasoning)
    : tok_(std::move(tokenizer)), reasoning_(reasoning) {}

size_t JsonConstraint::content_start(const std::string& joined) const {
    const size_t at = joined.find(kThinkEnd);
    return at == std::string::npos ? at : at + kThinkEnd.size();
}

bool JsonConstraint::allows(int32_t token) const {
    if (token < 0 || token >= tok_.n_vocab()) return false;
    if (reasoning_) {
        const std::string joined = tail_ + std::string(tok_.token_bytes(token));
        const size_t start = content_start(joined);
        return start == std::string::npos || json_.accepts(std::string_view(joined).substr(start));
    }
    return tok_.is_byte_level(token) && json_.accepts(tok_.token_bytes(token));
}

void JsonConstraint::advance(int32_t token) {
    if (!reasoning_) {
        json_.feed(tok_.token_bytes(token));
        return;
    }
    std::string joined = tail_ + std::string(tok_.token_bytes(token));
    const size_t start = content_start(joined);
    if (start == std::string::npos) {
        const size_t keep = kThinkEnd.size() - 1;
        tail_ = joined.size() > keep ? joined.substr(joined.size() - keep) : std::move(joined);
        return;
    }
    reasoning_ = false;
    tail_.clear();
    json_.feed(std::string_view(joined).substr(start));
}

}  // namespace niwa::sched
