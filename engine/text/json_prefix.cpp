#include "engine/text/json_prefix.h"

#include <algorithm>

namespace niwa::text {

namespace {

bool is_space(unsigned char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

bool is_digit(unsigned char c) {
    return c >= '0' && c <= '9';
}

int hex_value(unsigned char c) {
    if (is_digit(c)) return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// Whether a \u escape whose first `digits` hex digits are `code` can still end well: a low
// surrogate when one is due, anything but a lone low surrogate otherwise. Checked per digit so
// that no accepted prefix is a dead end.
bool escape_viable(uint32_t code, int digits, bool low) {
    const int shift = 4 * (4 - digits);
    const uint32_t lo = code << shift, hi = lo | ((1u << shift) - 1);
    if (low) return hi >= 0xDC00 && lo <= 0xDFFF;
    return !(lo >= 0xDC00 && hi <= 0xDFFF);
}

// A number's integer digits plus its exponent stay at most this: the value stays below 1e300,
// finite as a double whatever its fraction.
constexpr int kMaxMagnitude = 300;

}  // namespace

bool JsonPrefix::feed(std::string_view bytes) {
    if (dead_) return false;
    for (const char ch : bytes) {
        if (!step(static_cast<unsigned char>(ch))) {
            dead_ = true;
            return false;
        }
    }
    return true;
}

bool JsonPrefix::accepts(std::string_view bytes) const {
    JsonPrefix copy = *this;
    return copy.feed(bytes);
}

void JsonPrefix::value_done() {
    lex_ = stack_.empty() ? Lex::Done : Lex::CommaOrClose;
}

bool JsonPrefix::exponent_digit(unsigned char c) {
    exponent_ = std::min(exponent_ * 10 + (c - '0'), 100000);
    if (!exponent_negative_ && magnitude_ + exponent_ > kMaxMagnitude) return false;
    lex_ = Lex::NumExp;
    return true;
}

bool JsonPrefix::after_number(unsigned char c) {
    value_done();
    return step(c);
}

bool JsonPrefix::start_value(unsigned char c) {
    switch (c) {
        case '"':
            key_ = false;
            lex_ = Lex::String;
            return true;
        case '{':
            stack_.push_back('{');
            lex_ = Lex::KeyOrClose;
            return true;
        case '[':
            stack_.push_back('[');
            lex_ = Lex::ValueOrClose;
            return true;
        case '-':
            lex_ = Lex::NumMinus;
            return true;
        case '0':
            magnitude_ = 1;
            lex_ = Lex::NumZero;
            return true;
        case 't':
            literal_ = "rue";
            lex_ = Lex::Literal;
            return true;
        case 'f':
            literal_ = "alse";
            lex_ = Lex::Literal;
            return true;
        case 'n':
            literal_ = "ull";
            lex_ = Lex::Literal;
            return true;
        default:
            if (c >= '1' && c <= '9') {
                magnitude_ = 1;
                lex_ = Lex::NumInt;
                return true;
            }
            return false;
    }
}

bool JsonPrefix::step(unsigned char c) {
    switch (lex_) {
        case Lex::Start:
            if (is_space(c)) return true;
            if (c != '{') return false;
            stack_.push_back('{');
            lex_ = Lex::KeyOrClose;
            return true;
        case Lex::Done:
            return is_space(c);
        case Lex::Value:
            return is_space(c) || start_value(c);
        case Lex::ValueOrClose:
            if (is_space(c)) return true;
            if (c != ']') return start_value(c);
            stack_.pop_back();
            value_done();
            return true;
        case Lex::KeyOrClose:
        case Lex::Key:
            if (is_space(c)) return true;
            if (c == '"') {
                key_ = true;
                lex_ = Lex::String;
                return true;
            }
            if (c != '}' || lex_ != Lex::KeyOrClose) return false;
            stack_.pop_back();
            value_done();
            return true;
        case Lex::Colon:
            if (is_space(c)) return true;
            if (c != ':') return false;
            lex_ = Lex::Value;
            return true;
        case Lex::CommaOrClose:
            if (is_space(c)) return true;
            if (c == ',') {
                lex_ = stack_.back() == '{' ? Lex::Key : Lex::Value;
                return true;
            }
            if ((c == '}' && stack_.back() == '{') || (c == ']' && stack_.back() == '[')) {
                stack_.pop_back();
                value_done();
                return true;
            }
            return false;
        case Lex::String:
            if (c == '"') {
                if (key_) {
                    key_ = false;
                    lex_ = Lex::Colon;
                } else {
                    value_done();
                }
                return true;
            }
            if (c == '\\') {
                lex_ = Lex::Escape;
                return true;
            }
            if (c < 0x20) return false;  // control characters must be escaped
            if (c < 0x80) return true;
            // A UTF-8 lead byte, and the range its first continuation byte must fall in
            // (no overlong forms, no surrogates, nothing above U+10FFFF).
            utf8_lo_ = 0x80;
            utf8_hi_ = 0xBF;
            if (c >= 0xC2 && c <= 0xDF) {
                utf8_left_ = 1;
            } else if (c >= 0xE0 && c <= 0xEF) {
                utf8_left_ = 2;
                if (c == 0xE0) utf8_lo_ = 0xA0;
                if (c == 0xED) utf8_hi_ = 0x9F;
            } else if (c >= 0xF0 && c <= 0xF4) {
                utf8_left_ = 3;
                if (c == 0xF0) utf8_lo_ = 0x90;
                if (c == 0xF4) utf8_hi_ = 0x8F;
            } else {
                return false;
            }
            lex_ = Lex::Utf8;
            return true;
        case Lex::Utf8:
            if (c < utf8_lo_ || c > utf8_hi_) return false;
            utf8_lo_ = 0x80;
            utf8_hi_ = 0xBF;
            if (--utf8_left_ == 0) lex_ = Lex::String;
            return true;
        case Lex::Escape:
            if (c == 'u') {
                low_ = false;
                code_ = 0;
                digits_ = 0;
                lex_ = Lex::Unicode;
                return true;
            }
            if (c != '"' && c != '\\' && c != '/' && c != 'b' && c != 'f' && c != 'n' && c != 'r' && c != 't')
                return false;
            lex_ = Lex::String;
            return true;
        case Lex::Unicode: {
            const int v = hex_value(c);
            if (v < 0) return false;
            code_ = code_ * 16 + uint32_t(v);
            ++digits_;
            if (!escape_viable(code_, digits_, low_)) return false;
            if (digits_ < 4) return true;
            lex_ = !low_ && code_ >= 0xD800 && code_ <= 0xDBFF ? Lex::LowEscape : Lex::String;
            if (lex_ == Lex::LowEscape) low_ = true;
            return true;
        }
        case Lex::LowEscape:
            if (c != '\\') return false;
            lex_ = Lex::LowU;
            return true;
        case Lex::LowU:
            if (c != 'u') return false;
            code_ = 0;
            digits_ = 0;
            lex_ = Lex::Unicode;
            return true;
        case Lex::NumMinus:
            if (!is_digit(c)) return false;
            magnitude_ = 1;
            lex_ = c == '0' ? Lex::NumZero : Lex::NumInt;
            return true;
        case Lex::NumZero:
        case Lex::NumInt:
            if (is_digit(c)) {
                if (lex_ == Lex::NumZero) return false;  // no leading zeros
                return ++magnitude_ <= kMaxMagnitude;
            }
            if (c == '.') {
                lex_ = Lex::NumDot;
                return true;
            }
            if (c == 'e' || c == 'E') {
                exponent_ = 0;
                exponent_negative_ = false;
                lex_ = Lex::NumExpMark;
                return true;
            }
            return after_number(c);
        case Lex::NumDot:
            if (!is_digit(c)) return false;
            lex_ = Lex::NumFrac;
            return true;
        case Lex::NumFrac:
            if (is_digit(c)) return true;
            if (c == 'e' || c == 'E') {
                exponent_ = 0;
                exponent_negative_ = false;
                lex_ = Lex::NumExpMark;
                return true;
            }
            return after_number(c);
        case Lex::NumExpMark:
            if (c == '+' || c == '-') {
                exponent_negative_ = c == '-';
                lex_ = Lex::NumExpSign;
                return true;
            }
            return is_digit(c) && exponent_digit(c);
        case Lex::NumExpSign:
        case Lex::NumExp:
            if (is_digit(c)) return exponent_digit(c);
            if (lex_ == Lex::NumExpSign) return false;
            return after_number(c);
        case Lex::Literal:
            if (c != static_cast<unsigned char>(*literal_)) return false;
            if (*++literal_ == '\0') value_done();
            return true;
    }
    return false;
}

}  // namespace niwa::text
