#include "engine/text/unicode.h"

#include <cstdlib>
#include <memory>
#include <stdexcept>

#include <utf8proc.h>

namespace niwa::text {

namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

// Length of the sequence a lead byte starts (0: the byte cannot start one) and the range the
// second byte must lie in; later continuation bytes are always 0x80..0xBF. These bounds
// exclude overlong forms, surrogates and code points past U+10FFFF.
struct Lead {
    int len;
    unsigned char lo, hi;
};

Lead lead_of(unsigned char b) {
    if (b < 0x80) return {1, 0, 0};
    if (b >= 0xC2 && b <= 0xDF) return {2, 0x80, 0xBF};
    if (b == 0xE0) return {3, 0xA0, 0xBF};
    if (b == 0xED) return {3, 0x80, 0x9F};
    if (b >= 0xE1 && b <= 0xEF) return {3, 0x80, 0xBF};
    if (b == 0xF0) return {4, 0x90, 0xBF};
    if (b >= 0xF1 && b <= 0xF3) return {4, 0x80, 0xBF};
    if (b == 0xF4) return {4, 0x80, 0x8F};
    return {0, 0, 0};
}

enum class Step { kChar, kInvalid, kIncomplete };

// Examines the sequence at bytes[i]: a whole character of `n` bytes, an invalid subpart of
// `n` bytes, or a valid prefix that the input ends inside.
Step step_at(std::string_view bytes, size_t i, size_t& n) {
    const auto b = static_cast<unsigned char>(bytes[i]);
    const Lead lead = lead_of(b);
    if (lead.len == 0) {
        n = 1;
        return Step::kInvalid;
    }
    n = 1;
    for (int k = 1; k < lead.len; ++k) {
        if (i + k >= bytes.size()) return Step::kIncomplete;
        const auto c = static_cast<unsigned char>(bytes[i + k]);
        const unsigned char lo = k == 1 ? lead.lo : 0x80;
        const unsigned char hi = k == 1 ? lead.hi : 0xBF;
        if (c < lo || c > hi) return Step::kInvalid;  // the offending byte starts afresh
        n = k + 1;
    }
    return Step::kChar;
}

}  // namespace

size_t utf8_decode_replacing(std::string_view bytes, bool final, std::string& out) {
    size_t i = 0;
    while (i < bytes.size()) {
        const auto b = static_cast<unsigned char>(bytes[i]);
        if (b < 0x80) {
            out.push_back(static_cast<char>(b));
            ++i;
            continue;
        }
        size_t n = 0;
        switch (step_at(bytes, i, n)) {
            case Step::kChar:
                out.append(bytes.substr(i, n));
                break;
            case Step::kInvalid:
                out.append(kReplacement);
                break;
            case Step::kIncomplete:
                if (!final) return i;
                out.append(kReplacement);
                n = bytes.size() - i;
                break;
        }
        i += n;
    }
    return i;
}

bool utf8_is_valid(std::string_view s) {
    size_t i = 0;
    while (i < s.size()) {
        if (static_cast<unsigned char>(s[i]) < 0x80) {
            ++i;
            continue;
        }
        size_t n = 0;
        if (step_at(s, i, n) != Step::kChar) return false;
        i += n;
    }
    return true;
}

std::string utf8_sanitize(std::string_view s) {
    if (utf8_is_valid(s)) return std::string(s);
    std::string out;
    out.reserve(s.size() + 8);
    utf8_decode_replacing(s, true, out);
    return out;
}

static std::string nfc_utf8proc(std::string_view s) {
    utf8proc_uint8_t* mapped = nullptr;
    const utf8proc_ssize_t n = utf8proc_map(
        reinterpret_cast<const utf8proc_uint8_t*>(s.data()), static_cast<utf8proc_ssize_t>(s.size()), &mapped,
        static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE));
    if (n < 0) throw std::invalid_argument(std::string("NFC normalisation failed: ") + utf8proc_errmsg(n));
    std::unique_ptr<utf8proc_uint8_t, decltype(&std::free)> owned(mapped, &std::free);
    return std::string(reinterpret_cast<const char*>(mapped), static_cast<size_t>(n));
}

std::string nfc(std::string_view s) {
    // ASCII is NFC and never the second half of a composition, so only the non-ASCII runs
    // go through utf8proc, each with the one ASCII character before it (which may be the
    // base of a combining mark: "e" + U+0301). Most text is largely ASCII; this halves the
    // cost of tokenizing it.
    std::string out;
    out.reserve(s.size());
    size_t i = 0;
    while (i < s.size()) {
        if (static_cast<unsigned char>(s[i]) < 0x80) {
            out.push_back(s[i++]);
            continue;
        }
        size_t start = i;
        if (start > 0 && static_cast<unsigned char>(s[start - 1]) < 0x80) {
            --start;
            out.pop_back();
        }
        while (i < s.size() && static_cast<unsigned char>(s[i]) >= 0x80) ++i;
        out += nfc_utf8proc(s.substr(start, i - start));
    }
    return out;
}

}  // namespace niwa::text
