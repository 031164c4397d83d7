// Building error messages: concatenation of anything streamable, and names from untrusted
// files quoted so that control bytes or a megabyte-long key cannot garble the message.
#pragma once

#include <sstream>
#include <string>
#include <string_view>

namespace niwa::gguf {

template <class... Parts>
std::string cat(const Parts&... parts) {
    std::ostringstream s;
    (s << ... << parts);
    return s.str();
}

// 'name' with non-printable bytes as \xNN, shortened past `max` bytes.
std::string quote(std::string_view name, size_t max = 96);

}  // namespace niwa::gguf
