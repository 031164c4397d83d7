#include "engine/text/byte_level.h"

#include <cstdint>

namespace niwa::text {

namespace {

std::string utf8_of(uint32_t cp) {
    std::string s;
    if (cp < 0x80) {
        s.push_back(static_cast<char>(cp));
    } else {  // the alphabet stays below U+0800
        s.push_back(static_cast<char>(0xC0 | (cp >> 6)));
        s.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
    return s;
}

// Printable Latin-1 bytes stand for themselves; the others (controls, space, and a few
// more) are given code points from U+0100 upward in byte order.
std::array<uint32_t, 256> make_code_points() {
    std::array<uint32_t, 256> cps{};
    uint32_t next = 256;
    for (uint32_t b = 0; b < 256; ++b) {
        const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
        cps[b] = printable ? b : next++;
    }
    return cps;
}

const std::array<uint32_t, 256>& code_points() {
    static const std::array<uint32_t, 256> cps = make_code_points();
    return cps;
}

// Code point (below U+0144) -> byte + 1; 0 for code points outside the alphabet.
const std::array<uint16_t, 0x144>& reverse_table() {
    static const std::array<uint16_t, 0x144> table = [] {
        std::array<uint16_t, 0x144> t{};
        for (int b = 0; b < 256; ++b) t[code_points()[b]] = static_cast<uint16_t>(b + 1);
        return t;
    }();
    return table;
}

}  // namespace

const std::array<std::string, 256>& byte_level_symbols() {
    static const std::array<std::string, 256> symbols = [] {
        std::array<std::string, 256> s;
        for (int b = 0; b < 256; ++b) s[b] = utf8_of(code_points()[b]);
        return s;
    }();
    return symbols;
}

std::optional<std::string> byte_level_decode(std::string_view symbols) {
    const auto& rev = reverse_table();
    std::string out;
    out.reserve(symbols.size());
    size_t i = 0;
    while (i < symbols.size()) {
        const auto c0 = static_cast<unsigned char>(symbols[i]);
        uint32_t cp = 0;
        if (c0 < 0x80) {
            cp = c0;
            i += 1;
        } else if ((c0 & 0xE0) == 0xC0 && i + 1 < symbols.size() &&
                   (static_cast<unsigned char>(symbols[i + 1]) & 0xC0) == 0x80) {
            cp = ((c0 & 0x1Fu) << 6) | (static_cast<unsigned char>(symbols[i + 1]) & 0x3Fu);
            i += 2;
        } else {
            return std::nullopt;
        }
        if (cp >= rev.size() || rev[cp] == 0) return std::nullopt;
        out.push_back(static_cast<char>(rev[cp] - 1));
    }
    return out;
}

std::string byte_level_encode(std::string_view bytes) {
    const auto& sym = byte_level_symbols();
    std::string out;
    out.reserve(bytes.size() * 2);
    for (char c : bytes) out += sym[static_cast<unsigned char>(c)];
    return out;
}

}  // namespace niwa::text
