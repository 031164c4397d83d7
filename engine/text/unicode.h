// UTF-8 helpers for the tokenizer: decoding bytes with U+FFFD for invalid sequences (the
// WHATWG rules, so our output matches a browser's or Node's TextDecoder byte for byte) and
// NFC normalisation through utf8proc.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace niwa::text {

// Appends the text of `bytes` to `out`, each maximal invalid subpart becoming one U+FFFD.
// With `final` false an incomplete but so far valid sequence at the end is left alone:
// the return value is how many bytes were consumed (all of them when `final`).
size_t utf8_decode_replacing(std::string_view bytes, bool final, std::string& out);

// True when `s` is well-formed UTF-8 (no surrogates, no overlong forms, nothing past U+10FFFF).
bool utf8_is_valid(std::string_view s);

// `s` if it is valid UTF-8, otherwise a copy with U+FFFD for each invalid subpart.
std::string utf8_sanitize(std::string_view s);

// NFC of valid UTF-8 text.
std::string nfc(std::string_view s);

}  // namespace niwa::text
