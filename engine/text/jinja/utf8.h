// UTF-8 text as Python's str sees it: a sequence of code points, with Python's idea of
// whitespace and case. Lengths, indices and slices of template strings count code points.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace niwa::text::jinja {

std::u32string utf8_decode(std::string_view s);  // invalid bytes become U+FFFD
std::string utf8_encode(std::u32string_view s);
void utf8_append(std::string& out, char32_t cp);
size_t utf8_length(std::string_view s);  // in code points

bool py_isspace(char32_t c);  // str.isspace()
std::string py_upper(std::string_view s);
std::string py_lower(std::string_view s);

// str.strip/lstrip/rstrip: `chars` null means whitespace.
std::string py_strip(std::string_view s, const std::string* chars, bool left, bool right);
// str.split(sep, maxsplit): `sep` null splits on runs of whitespace and drops empty parts.
std::vector<std::string> py_split(std::string_view s, const std::string* sep, long maxsplit);

}  // namespace niwa::text::jinja
