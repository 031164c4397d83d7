// What a template can call without defining it: filters (`x|trim`), tests (`x is string`),
// methods of str and dict (`s.startswith('a')`, `d.items()`), attribute and item access with
// jinja2's rules, and the global functions (range, namespace, raise_exception, ...).
// Errors are thrown as EvalError; the calling node adds its position.
#pragma once

#include <string>

#include "engine/text/jinja/context.h"
#include "engine/text/jinja/error.h"
#include "engine/text/jinja/value.h"

namespace niwa::text::jinja {

bool has_filter(const std::string& name);
bool has_test(const std::string& name);
Value apply_filter(Context& ctx, const std::string& name, const Value& operand, CallArgs& args);
bool apply_test(Context& ctx, const std::string& name, const Value& operand, CallArgs& args);

// obj.name: a method of str/dict/list, else the dict's key; undefined when neither exists.
Value get_attribute(const Value& obj, const std::string& name);
// obj[key]: the dict key or list/str index first, then the attribute (as jinja2 does).
Value get_item(const Value& obj, const Value& key);
Value slice(const Value& obj, const Value& start, const Value& stop, const Value& step);

// Iterating a value: list items, dict keys, str characters; undefined iterates as empty.
List iterate(const Value& v);
size_t length_of(const Value& v);  // len(); EvalError for what has none

Context::Scope make_globals();

// Python's `item in container` and comparison operators (==, !=, <, >, <=, >=, in, not in).
bool contains(const Value& container, const Value& item);
bool compare(const std::string& op, const Value& a, const Value& b);

// Matches a builtin's arguments to its parameter names, Python style: positional first, then
// keywords; unknown or repeated ones are errors, the first `required` must be given, and
// the rest come back undefined when missing.
std::vector<Value> bind_args(const std::string& fn, CallArgs& args, const std::vector<std::string>& params,
                             size_t required = 0);

}  // namespace niwa::text::jinja
