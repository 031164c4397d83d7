// The lexer. Whitespace rules (jinja2 with trim_blocks and lstrip_blocks):
//  - `{%-`, `{{-`, `{#-` strip all whitespace before the tag; `-%}`, `-}}`, `-#}` all after;
//  - otherwise a block or comment tag that only has spaces before it on its line takes those
//    spaces away (lstrip_blocks; `{%+` opts out), and the newline right after `%}` or `#}`
//    is dropped (trim_blocks; `+%}` opts out);
//  - "\r\n" and "\r" read as "\n" and one trailing newline of the template is dropped.
#include "engine/text/jinja/lexer.h"

#include <cctype>
#include <cstdlib>
#include <string_view>

#include "engine/text/jinja/utf8.h"

namespace niwa::text::jinja {
namespace {

bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

std::string normalize_newlines(const std::string& in) {
    std::string s;
    s.reserve(in.size());
    for (size_t i = 0; i < in.size(); ++i) {
        if (in[i] == '\r') {
            s += '\n';
            if (i + 1 < in.size() && in[i + 1] == '\n') ++i;
        } else {
            s += in[i];
        }
    }
    if (!s.empty() && s.back() == '\n') s.pop_back();
    return s;
}

class Lexer {
public:
    explicit Lexer(std::string source) : src_(std::move(source)) {}

    std::vector<Token> run() {
        bool line_starting = true;
        while (pos_ < src_.size()) {
            const size_t tag = find_tag(pos_);
            std::string text = src_.substr(pos_, tag - pos_);
            if (tag == src_.size()) {
                emit_text(std::move(text), pos_);
                pos_ = tag;
                break;
            }
            const char kind = src_[tag + 1];  // '{', '%' or '#'
            const char sign = tag + 2 < src_.size() ? src_[tag + 2] : '\0';
            if (sign == '-') {
                text = rstrip(text);
            } else if (sign != '+' && kind != '{') {
                text = lstrip_line(text, line_starting);
            }
            emit_text(std::move(text), pos_);
            const size_t body = tag + 2 + (sign == '-' || sign == '+' ? 1 : 0);
            if (kind == '#') {
                line_starting = lex_comment(tag, body);
            } else if (kind == '%' && is_raw(body)) {
                line_starting = lex_raw(tag);
            } else {
                line_starting = lex_tag(tag, body, kind == '%');
            }
        }
        tokens_.push_back({Tok::Eof, "", position(src_.size())});
        return std::move(tokens_);
    }

private:
    // Positions are asked for mostly in order: walk on from the last one.
    Pos position(size_t at) {
        if (at < mark_) {
            mark_ = 0;
            mark_pos_ = Pos{};
        }
        for (; mark_ < at && mark_ < src_.size(); ++mark_) {
            if (src_[mark_] == '\n') {
                ++mark_pos_.line;
                mark_pos_.column = 1;
            } else if ((static_cast<unsigned char>(src_[mark_]) & 0xC0) != 0x80) {
                ++mark_pos_.column;
            }
        }
        return mark_pos_;
    }

    size_t find_tag(size_t from) const {
        for (size_t i = from; i + 1 < src_.size(); ++i) {
            if (src_[i] == '{' && (src_[i + 1] == '{' || src_[i + 1] == '%' || src_[i + 1] == '#')) return i;
        }
        return src_.size();
    }

    static std::string rstrip(const std::string& s) {
        size_t e = s.size();
        while (e > 0 && is_space(s[e - 1])) --e;
        return s.substr(0, e);
    }

    // lstrip_blocks: drop the run of whitespace between the last line start and the tag.
    static std::string lstrip_line(const std::string& text, bool line_starting) {
        const size_t nl = text.rfind('\n');
        const size_t l_pos = nl == std::string::npos ? 0 : nl + 1;
        if (l_pos == 0 && !line_starting) return text;
        if (l_pos == text.size()) return text;
        for (size_t i = l_pos; i < text.size(); ++i) {
            if (!is_space(text[i])) return text;
        }
        return text.substr(0, l_pos);
    }

    void emit_text(std::string text, size_t at) {
        if (!text.empty()) tokens_.push_back({Tok::Text, std::move(text), position(at)});
    }

    // After a closing `%}`/`#}`/`}}` at `end` (just past it): applies trim rules, returns
    // whether the consumed text ended a line (jinja2's line_starting).
    bool after_close(size_t end, char sign, bool trim_newline) {
        pos_ = end;
        if (sign == '-') {
            while (pos_ < src_.size() && is_space(src_[pos_])) ++pos_;
        } else if (sign != '+' && trim_newline && pos_ < src_.size() && src_[pos_] == '\n') {
            ++pos_;
        }
        return pos_ > end && src_[pos_ - 1] == '\n';
    }

    bool lex_comment(size_t tag, size_t body) {
        const size_t end = src_.find("#}", body);
        if (end == std::string::npos) fail(position(tag), "unclosed comment: '{#' has no '#}'");
        const char sign = end > body && src_[end - 1] == '-' ? '-' : '\0';
        return after_close(end + 2, sign, true);
    }

    // `{% raw %}`, `{%- raw -%}`...: body points just after `{%` and its sign.
    bool is_raw(size_t body) const {
        size_t i = body;
        while (i < src_.size() && is_space(src_[i])) ++i;
        if (src_.compare(i, 3, "raw") != 0) return false;
        i += 3;
        if (i < src_.size() && (std::isalnum(static_cast<unsigned char>(src_[i])) || src_[i] == '_'))
            return false;
        return true;
    }

    // Finds `%}` (with its sign) from `i`, skipping spaces only; npos if something else.
    size_t close_of_simple_tag(size_t i, char& sign) const {
        while (i < src_.size() && is_space(src_[i])) ++i;
        sign = '\0';
        if (i < src_.size() && (src_[i] == '-' || src_[i] == '+')) sign = src_[i++];
        if (src_.compare(i, 2, "%}") != 0) return std::string::npos;
        return i + 2;
    }

    bool lex_raw(size_t tag) {
        size_t i = src_.find("raw", tag) + 3;
        char sign = '\0';
        const size_t open_end = close_of_simple_tag(i, sign);
        if (open_end == std::string::npos) fail(position(tag), "expected '%}' after 'raw'");
        size_t content = open_end;
        if (sign == '-')
            while (content < src_.size() && is_space(src_[content])) ++content;
        for (size_t at = src_.find("{%", content); at != std::string::npos; at = src_.find("{%", at + 2)) {
            size_t j = at + 2;
            const char inner_sign = j < src_.size() && (src_[j] == '-' || src_[j] == '+') ? src_[j++] : '\0';
            while (j < src_.size() && is_space(src_[j])) ++j;
            if (src_.compare(j, 6, "endraw") != 0) continue;
            char close_sign = '\0';
            const size_t close = close_of_simple_tag(j + 6, close_sign);
            if (close == std::string::npos) continue;
            std::string text = src_.substr(content, at - content);
            if (inner_sign == '-') text = rstrip(text);
            emit_text(std::move(text), content);
            return after_close(close, close_sign, true);
        }
        fail(position(tag), "'raw' block has no '{% endraw %}'");
    }

    bool lex_tag(size_t tag, size_t body, bool block) {
        tokens_.push_back({block ? Tok::BlockBegin : Tok::VarBegin, "", position(tag)});
        const char* close = block ? "%}" : "}}";
        size_t i = body;
        int depth = 0;  // open brackets: a `}}` inside `{{ {'a': {}} }}` is not the end
        while (true) {
            while (i < src_.size() && is_space(src_[i])) ++i;
            if (i >= src_.size()) fail(position(tag), std::string("unclosed tag: expected '") + close + "'");
            if (depth == 0) {
                char sign = '\0';
                size_t j = i;
                if (src_[j] == '-' || (block && src_[j] == '+')) sign = src_[j++];
                if (src_.compare(j, 2, close) == 0) {
                    tokens_.push_back({block ? Tok::BlockEnd : Tok::VarEnd, "", position(i)});
                    return after_close(j + 2, sign, block);
                }
            }
            i = lex_one(i, depth);
        }
    }

    size_t lex_one(size_t i, int& depth) {
        const Pos p = position(i);
        const char c = src_[i];
        if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
            size_t j = i;
            while (j < src_.size() && (std::isalnum(static_cast<unsigned char>(src_[j])) || src_[j] == '_'))
                ++j;
            tokens_.push_back({Tok::Name, src_.substr(i, j - i), p});
            return j;
        }
        if (std::isdigit(static_cast<unsigned char>(c))) return lex_number(i, p);
        if (c == '\'' || c == '"') return lex_string(i, p);
        static constexpr std::string_view kOps[] = {"**", "//", "==", "!=", ">=", "<=", "+", "-", "*",
                                                    "/",  "%",  "~",  "<",  ">",  "(",  ")", "[", "]",
                                                    "{",  "}",  ",",  ".",  ":",  "|",  "=", ";"};
        for (std::string_view op : kOps) {
            if (src_.compare(i, op.size(), op) != 0) continue;
            if (op == "(" || op == "[" || op == "{") ++depth;
            if ((op == ")" || op == "]" || op == "}") && depth > 0) --depth;
            tokens_.push_back({Tok::Op, std::string(op), p});
            return i + op.size();
        }
        fail(p, std::string("unexpected character '") + c + "'");
    }

    size_t lex_number(size_t i, Pos p) {
        auto digits = [&](size_t j) {
            while (j < src_.size() && (std::isdigit(static_cast<unsigned char>(src_[j])) || src_[j] == '_'))
                ++j;
            return j;
        };
        size_t j = digits(i);
        bool is_float = false;
        // `x.0` after a dot is an attribute index, never the tail of a float.
        const bool after_dot =
            !tokens_.empty() && tokens_.back().type == Tok::Op && tokens_.back().text == ".";
        if (!after_dot && j + 1 < src_.size() && src_[j] == '.' &&
            std::isdigit(static_cast<unsigned char>(src_[j + 1]))) {
            j = digits(j + 1);
            is_float = true;
        }
        if (!after_dot && j < src_.size() && (src_[j] == 'e' || src_[j] == 'E')) {
            size_t k = j + 1;
            if (k < src_.size() && (src_[k] == '+' || src_[k] == '-')) ++k;
            if (k < src_.size() && std::isdigit(static_cast<unsigned char>(src_[k]))) {
                j = digits(k);
                is_float = true;
            }
        }
        std::string text;
        for (size_t k = i; k < j; ++k) {
            if (src_[k] != '_') text += src_[k];
        }
        Token t{is_float ? Tok::Float : Tok::Int, text, p};
        if (is_float) {
            // strtod, not stod: subnormals like 5e-324 are valid Python floats.
            t.float_value = std::strtod(text.c_str(), nullptr);
        } else {
            try {
                t.int_value = std::stoll(text);
            } catch (const std::exception&) {
                fail(p, "integer literal does not fit in 64 bits: " + text);
            }
        }
        tokens_.push_back(std::move(t));
        return j;
    }

    size_t lex_string(size_t i, Pos p) {
        const char quote = src_[i];
        std::string out;
        size_t j = i + 1;
        while (true) {
            if (j >= src_.size()) fail(p, "unterminated string literal");
            const char c = src_[j];
            if (c == quote) break;
            if (c != '\\' || j + 1 >= src_.size()) {
                out += c;
                ++j;
                continue;
            }
            const char e = src_[j + 1];
            j += 2;
            switch (e) {
                case 'n':
                    out += '\n';
                    break;
                case 't':
                    out += '\t';
                    break;
                case 'r':
                    out += '\r';
                    break;
                case '0':
                    out += '\0';
                    break;
                case 'a':
                    out += '\a';
                    break;
                case 'b':
                    out += '\b';
                    break;
                case 'f':
                    out += '\f';
                    break;
                case 'v':
                    out += '\v';
                    break;
                case '\\':
                    out += '\\';
                    break;
                case '\'':
                    out += '\'';
                    break;
                case '"':
                    out += '"';
                    break;
                case '\n':
                    break;
                case 'x':
                case 'u':
                case 'U': {
                    const size_t n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
                    if (j + n > src_.size()) fail(p, "truncated escape in string literal");
                    const std::string hex = src_.substr(j, n);
                    for (char h : hex) {
                        if (!std::isxdigit(static_cast<unsigned char>(h)))
                            fail(p, "bad escape in string literal");
                    }
                    utf8_append(out, static_cast<char32_t>(std::stoul(hex, nullptr, 16)));
                    j += n;
                    break;
                }
                default:  // Python keeps unknown escapes as written
                    out += '\\';
                    out += e;
            }
        }
        tokens_.push_back({Tok::String, std::move(out), p});
        return j + 1;
    }

    std::string src_;
    size_t pos_ = 0;
    size_t mark_ = 0;
    Pos mark_pos_;
    std::vector<Token> tokens_;
};

}  // namespace

std::vector<Token> tokenize(const std::string& source) {
    return Lexer(normalize_newlines(source)).run();
}

}  // namespace niwa::text::jinja
