// jinja2's builtin tests (`x is defined`, `x is string`, ...), with Python's type rules:
// a bool is a number but not an integer; undefined is iterable (and empty).
#include <cmath>
#include <map>

#include "engine/text/jinja/builtins.h"
#include "engine/text/jinja/python_format.h"
#include "engine/text/jinja/utf8.h"

namespace niwa::text::jinja {
namespace {

using Test = bool (*)(Context& ctx, const Value& v, CallArgs& args);

const Value& one_arg(const char* name, CallArgs& args) {
    if (args.positional.size() != 1 || !args.keyword.empty())
        throw EvalError(std::string("test '") + name + "' takes one argument");
    return args.positional[0];
}

void no_args(const char* name, CallArgs& args) {
    if (!args.positional.empty() || !args.keyword.empty())
        throw EvalError(std::string("test '") + name + "' takes no arguments");
}

#define NIWA_SIMPLE_TEST(fn, name, expr)                \
    bool fn(Context&, const Value& v, CallArgs& args) { \
        no_args(name, args);                            \
        return (expr);                                  \
    }

NIWA_SIMPLE_TEST(t_defined, "defined", !v.is_undefined())
NIWA_SIMPLE_TEST(t_undefined, "undefined", v.is_undefined())
NIWA_SIMPLE_TEST(t_none, "none", v.is_none())
NIWA_SIMPLE_TEST(t_string, "string", v.is_string())
NIWA_SIMPLE_TEST(t_number, "number", v.is_number())
NIWA_SIMPLE_TEST(t_integer, "integer", v.is_int())
NIWA_SIMPLE_TEST(t_float, "float", v.is_float())
NIWA_SIMPLE_TEST(t_boolean, "boolean", v.is_bool())
NIWA_SIMPLE_TEST(t_true, "true", v.is_bool() && v.as_bool())
NIWA_SIMPLE_TEST(t_false, "false", v.is_bool() && !v.as_bool())
NIWA_SIMPLE_TEST(t_mapping, "mapping", v.is_dict())
NIWA_SIMPLE_TEST(t_iterable, "iterable", v.is_undefined() || v.is_string() || v.is_list() || v.is_dict())
NIWA_SIMPLE_TEST(t_sequence, "sequence", v.is_undefined() || v.is_string() || v.is_list() || v.is_dict())
NIWA_SIMPLE_TEST(t_callable, "callable", v.is_callable())
NIWA_SIMPLE_TEST(t_lower, "lower", v.is_string() && py_lower(v.as_string()) == v.as_string())
NIWA_SIMPLE_TEST(t_upper, "upper", v.is_string() && py_upper(v.as_string()) == v.as_string())

#undef NIWA_SIMPLE_TEST

bool t_odd(Context&, const Value& v, CallArgs& args) {
    no_args("odd", args);
    if (!v.is_int() && !v.is_bool()) throw EvalError("test 'odd' needs an integer");
    return v.as_int() % 2 != 0;
}

bool t_even(Context&, const Value& v, CallArgs& args) {
    no_args("even", args);
    if (!v.is_int() && !v.is_bool()) throw EvalError("test 'even' needs an integer");
    return v.as_int() % 2 == 0;
}

bool t_divisibleby(Context&, const Value& v, CallArgs& args) {
    const Value& n = one_arg("divisibleby", args);
    if (!v.is_number() || !n.is_number() || n.as_float() == 0)
        throw EvalError("test 'divisibleby' needs numbers");
    if (v.is_float() || n.is_float()) return std::fmod(v.as_float(), n.as_float()) == 0;
    return v.as_int() % n.as_int() == 0;
}

bool t_sameas(Context&, const Value& v, CallArgs& args) {
    const Value& other = one_arg("sameas", args);
    if (v.kind() != other.kind()) return false;
    if (v.is_none() || v.is_undefined()) return true;
    if (v.is_bool()) return v.as_bool() == other.as_bool();
    if (v.is_namespace() || v.is_callable() || v.is_dict()) return v.identity() == other.identity();
    return equals(v, other);
}

bool t_in(Context&, const Value& v, CallArgs& args) {
    return contains(one_arg("in", args), v);
}

template <const char* Op>
bool t_compare(Context&, const Value& v, CallArgs& args) {
    return compare(Op, v, one_arg(Op, args));
}

constexpr char kEq[] = "==", kNe[] = "!=", kLt[] = "<", kGt[] = ">", kLe[] = "<=", kGe[] = ">=";

const std::map<std::string, Test>& tests() {
    static const std::map<std::string, Test> kTests = {
        {"defined", t_defined},
        {"undefined", t_undefined},
        {"none", t_none},
        {"string", t_string},
        {"number", t_number},
        {"integer", t_integer},
        {"float", t_float},
        {"boolean", t_boolean},
        {"true", t_true},
        {"false", t_false},
        {"mapping", t_mapping},
        {"iterable", t_iterable},
        {"sequence", t_sequence},
        {"callable", t_callable},
        {"lower", t_lower},
        {"upper", t_upper},
        {"odd", t_odd},
        {"even", t_even},
        {"divisibleby", t_divisibleby},
        {"sameas", t_sameas},
        {"in", t_in},
        {"eq", t_compare<kEq>},
        {"equalto", t_compare<kEq>},
        {"ne", t_compare<kNe>},
        {"lt", t_compare<kLt>},
        {"lessthan", t_compare<kLt>},
        {"gt", t_compare<kGt>},
        {"greaterthan", t_compare<kGt>},
        {"le", t_compare<kLe>},
        {"ge", t_compare<kGe>},
    };
    return kTests;
}

}  // namespace

bool has_test(const std::string& name) {
    return tests().count(name) != 0;
}

bool apply_test(Context& ctx, const std::string& name, const Value& operand, CallArgs& args) {
    auto it = tests().find(name);
    if (it == tests().end()) throw EvalError("no test named '" + name + "'");
    return it->second(ctx, operand, args);
}

}  // namespace niwa::text::jinja
