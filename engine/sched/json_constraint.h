// Constrained decoding for response_format json_object: which tokens keep a request's output a
// prefix of one JSON object. With reasoning on, the output first runs free up to </think> (the
// end of the reasoning may not be the end of the output), and the object is the content that
// follows. Past reasoning only byte-level tokens are allowed, so added tokens (<tool_call>,
// </think>, ...) never land in the content the output parser reads.
#pragma once

#include <cstdint>
#include <string>

#include "engine/text/json_prefix.h"
#include "engine/text/tokenizer.h"

namespace niwa::sched {

class JsonConstraint {
public:
    // `reasoning`: generation starts inside <think>.
    JsonConstraint(text::Tokenizer tokenizer, bool reasoning);

    // The content has begun: every token must keep it a JSON prefix.
    bool active() const { return !reasoning_; }
    // Whether `token` may come next. In reasoning every token may, unless it ends the
    // reasoning and what follows </think> in it cannot start the object.
    bool allows(int32_t token) const;
    // `token` was generated.
    void advance(int32_t token);
    // The object has closed: the output is done.
    bool complete() const { return json_.complete(); }

private:
    // Where the content starts in `tail_ + bytes`, or npos while reasoning goes on.
    size_t content_start(const std::string& joined) const;

    text::Tokenizer tok_;
    bool reasoning_;
    std::string tail_;  // the last bytes of the reasoning, for a </think> split over tokens
    text::JsonPrefix json_;
};

}  // namespace niwa::sched
