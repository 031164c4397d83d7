// Splits template source into tokens the way jinja2's lexer does under transformers'
// settings (trim_blocks, lstrip_blocks, no trailing newline kept), so whitespace comes out
// byte for byte as Python renders it. Every token carries its line and column.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/text/jinja/error.h"

namespace niwa::text::jinja {

enum class Tok { Text, VarBegin, VarEnd, BlockBegin, BlockEnd, Name, String, Int, Float, Op, Eof };

struct Token {
    Tok type = Tok::Eof;
    std::string text;  // text, name, operator, or the decoded string literal
    Pos pos;
    int64_t int_value = 0;
    double float_value = 0;
};

// Throws TemplateError (with line and column) on malformed source.
std::vector<Token> tokenize(const std::string& source);

}  // namespace niwa::text::jinja
