// Values printed the way Python prints them: str() for {{ }} and the `string` filter, repr()
// inside lists and dicts, float repr (shortest round trip), and json.dumps as transformers'
// `tojson` filter calls it. Output must match CPython byte for byte.
#pragma once

#include <optional>
#include <string>

#include "engine/text/jinja/value.h"

namespace niwa::text::jinja {

std::string py_str(const Value& v);
std::string py_repr(const Value& v);
std::string py_float_repr(double d);

struct JsonOptions {
    std::optional<std::string> indent;  // json.dumps' indent, already turned into a string
    std::optional<std::string> item_separator;
    std::optional<std::string> key_separator;
    bool sort_keys = false;
    bool ensure_ascii = false;
};

// json.dumps(v, ...); throws EvalError for what Python cannot serialise (undefined, macros).
std::string json_dumps(const Value& v, const JsonOptions& options);

}  // namespace niwa::text::jinja
