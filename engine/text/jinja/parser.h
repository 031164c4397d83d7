// Builds the syntax tree from tokens, following jinja2's grammar and operator precedence
// (including its quirks: `is` and `|` bind tighter than arithmetic, `-x ** 2` is (-x) ** 2).
#pragma once

#include <vector>

#include "engine/text/jinja/ast.h"
#include "engine/text/jinja/lexer.h"

namespace niwa::text::jinja {

// Throws TemplateError naming the line and column of the first problem.
Body parse(const std::vector<Token>& tokens);

}  // namespace niwa::text::jinja
