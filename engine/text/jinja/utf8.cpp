// Code-point views of UTF-8 strings for Python's str operations.
#include "engine/text/jinja/utf8.h"

#include <utf8proc.h>

namespace niwa::text::jinja {

std::u32string utf8_decode(std::string_view s) {
    std::u32string out;
    out.reserve(s.size());
    size_t i = 0;
    while (i < s.size()) {
        utf8proc_int32_t cp = 0;
        const auto n = utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(s.data() + i),
                                        static_cast<utf8proc_ssize_t>(s.size() - i), &cp);
        if (n <= 0) {
            out.push_back(0xFFFD);
            ++i;
            continue;
        }
        out.push_back(static_cast<char32_t>(cp));
        i += static_cast<size_t>(n);
    }
    return out;
}

void utf8_append(std::string& out, char32_t cp) {
    utf8proc_uint8_t buf[4];
    const auto n = utf8proc_encode_char(static_cast<utf8proc_int32_t>(cp), buf);
    out.append(reinterpret_cast<const char*>(buf), static_cast<size_t>(n));
}

std::string utf8_encode(std::u32string_view s) {
    std::string out;
    out.reserve(s.size());
    for (char32_t c : s) utf8_append(out, c);
    return out;
}

size_t utf8_length(std::string_view s) {
    size_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80;
    return n;
}

bool py_isspace(char32_t c) {
    if (c < 0x80) return c == ' ' || (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x1F);
    switch (c) {
        case 0x85:
        case 0xA0:
        case 0x1680:
        case 0x2028:
        case 0x2029:
        case 0x202F:
        case 0x205F:
        case 0x3000:
            return true;
        default:
            return c >= 0x2000 && c <= 0x200A;
    }
}

static bool is_ascii(std::string_view s) {
    for (unsigned char c : s) {
        if (c >= 0x80) return false;
    }
    return true;
}

std::string py_upper(std::string_view s) {
    std::string out;
    for (char32_t c : utf8_decode(s)) {
        if (c == 0xDF) {  // Python's full case mapping: ß -> SS (utf8proc's simple one gives ẞ)
            out += "SS";
            continue;
        }
        utf8_append(out, static_cast<char32_t>(utf8proc_toupper(static_cast<utf8proc_int32_t>(c))));
    }
    return out;
}

std::string py_lower(std::string_view s) {
    std::u32string cps = utf8_decode(s);
    for (char32_t& c : cps) c = static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(c)));
    return utf8_encode(cps);
}

std::string py_strip(std::string_view s, const std::string* chars, bool left, bool right) {
    if (is_ascii(s) && (!chars || is_ascii(*chars))) {
        auto strip_me = [&](char c) {
            return chars ? chars->find(c) != std::string::npos : py_isspace(static_cast<unsigned char>(c));
        };
        size_t b = 0, e = s.size();
        if (left)
            while (b < e && strip_me(s[b])) ++b;
        if (right)
            while (e > b && strip_me(s[e - 1])) --e;
        return std::string(s.substr(b, e - b));
    }
    const std::u32string cps = utf8_decode(s);
    const std::u32string set = chars ? utf8_decode(*chars) : std::u32string();
    auto strip_me = [&](char32_t c) { return chars ? set.find(c) != std::u32string::npos : py_isspace(c); };
    size_t b = 0, e = cps.size();
    if (left)
        while (b < e && strip_me(cps[b])) ++b;
    if (right)
        while (e > b && strip_me(cps[e - 1])) --e;
    return utf8_encode(std::u32string_view(cps).substr(b, e - b));
}

std::vector<std::string> py_split(std::string_view s, const std::string* sep, long maxsplit) {
    std::vector<std::string> parts;
    if (sep) {
        size_t start = 0;
        while (maxsplit < 0 || static_cast<long>(parts.size()) < maxsplit) {
            const size_t at = s.find(*sep, start);
            if (at == std::string_view::npos) break;
            parts.emplace_back(s.substr(start, at - start));
            start = at + sep->size();
        }
        parts.emplace_back(s.substr(start));
        return parts;
    }
    const std::u32string cps = utf8_decode(s);
    size_t i = 0;
    while (true) {
        while (i < cps.size() && py_isspace(cps[i])) ++i;
        if (i == cps.size()) break;
        if (maxsplit >= 0 && static_cast<long>(parts.size()) == maxsplit) {
            size_t e = cps.size();
            while (e > i && py_isspace(cps[e - 1])) --e;
            parts.push_back(utf8_encode(std::u32string_view(cps).substr(i, e - i)));
            break;
        }
        size_t j = i;
        while (j < cps.size() && !py_isspace(cps[j])) ++j;
        parts.push_back(utf8_encode(std::u32string_view(cps).substr(i, j - i)));
        i = j;
    }
    return parts;
}

}  // namespace niwa::text::jinja
