// Errors of template rendering. TemplateError: the template itself is wrong (syntax, an
// unknown filter, a type error while rendering); its message starts with "line L, column C".
// RaisedError: the template called raise_exception(msg) - the request it was given is wrong.
#pragma once

#include <stdexcept>
#include <string>

namespace niwa::text {

class TemplateError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

namespace jinja {

struct Pos {
    int line = 1;
    int column = 1;
};

class RaisedError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Thrown inside the interpreter without a position; the statement or expression that sees
// it first adds its own (see fail()).
class EvalError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

[[noreturn]] inline void fail(Pos pos, const std::string& message) {
    throw TemplateError("line " + std::to_string(pos.line) + ", column " + std::to_string(pos.column) + ": " +
                        message);
}

}  // namespace jinja
}  // namespace niwa::text
