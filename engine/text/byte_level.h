// GPT-2's byte-level alphabet: every byte is written as one printable code point, so a
// vocabulary of byte strings can be stored as text ("Ġthe" is " the").
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace niwa::text {

// The UTF-8 text of the symbol standing for each byte.
const std::array<std::string, 256>& byte_level_symbols();

// The bytes a string of symbols stands for; std::nullopt when it holds anything that is not
// a byte-level symbol.
std::optional<std::string> byte_level_decode(std::string_view symbols);

// The symbols for a byte string (the inverse of byte_level_decode).
std::string byte_level_encode(std::string_view bytes);

}  // namespace niwa::text
