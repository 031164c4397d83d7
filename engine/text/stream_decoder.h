// Decodes generated tokens one at a time for streaming: a token may end in the middle of a
// UTF-8 character (an emoji is often 2-4 byte tokens), so its bytes are held back until
// the character is complete. The pieces concatenate to exactly Tokenizer::decode(ids).
#pragma once

#include <cstdint>
#include <string>

#include "engine/text/tokenizer.h"

namespace niwa::text {

class StreamDecoder {
public:
    explicit StreamDecoder(const Tokenizer& t, bool skip_special = false);

    std::string push(int32_t id);  // text that became complete with this token
    std::string flush();           // at end of stream: what is left (invalid bytes as U+FFFD)

private:
    Tokenizer tokenizer_;  // a cheap copy sharing the vocabulary, so no lifetime to manage
    bool skip_special_;
    std::string pending_;  // bytes of an incomplete character
};

}  // namespace niwa::text
