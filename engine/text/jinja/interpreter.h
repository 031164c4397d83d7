// A parsed Jinja template, rendered as transformers' jinja2 environment would render it.
#pragma once

#include <string>

#include "engine/text/jinja/ast.h"
#include "engine/text/jinja/value.h"

namespace niwa::text::jinja {

class Template {
public:
    // Parses `source`; TemplateError with line and column when it is malformed.
    explicit Template(const std::string& source);
    Template(Template&&) = default;
    Template& operator=(Template&&) = default;

    // Renders with `variables` (JSON values) as the template's globals. Throws RaisedError
    // for raise_exception(), TemplateError for anything else that goes wrong.
    std::string render(const Dict& variables) const;

private:
    Body body_;
};

}  // namespace niwa::text::jinja
