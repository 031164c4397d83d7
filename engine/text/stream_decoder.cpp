#include "engine/text/stream_decoder.h"

#include <stdexcept>

#include "engine/text/tokenizer_impl.h"
#include "engine/text/unicode.h"

namespace niwa::text {

StreamDecoder::StreamDecoder(const Tokenizer& t, bool skip_special)
    : tokenizer_(t), skip_special_(skip_special) {}

std::string StreamDecoder::push(int32_t id) {
    const Tokenizer::Impl& im = *tokenizer_.impl_;
    if (id < 0 || id >= tokenizer_.n_vocab())
        throw std::out_of_range("token id " + std::to_string(id) + " is outside the vocabulary");
    const TokenKind k = im.kind[id];
    std::string out;
    if (k == TokenKind::kNormal) {
        pending_ += im.bytes[id];
        pending_.erase(0, utf8_decode_replacing(pending_, false, out));
        return out;
    }
    if (k == TokenKind::kUnused || (skip_special_ && k == TokenKind::kSpecial)) return out;
    // As in decode(): an added token ends the byte run before it.
    out = flush();
    out += im.bytes[id];
    return out;
}

std::string StreamDecoder::flush() {
    std::string out;
    utf8_decode_replacing(pending_, true, out);
    pending_.clear();
    return out;
}

}  // namespace niwa::text
