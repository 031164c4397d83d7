// jinja2's builtin filters that chat templates use, plus transformers' own `tojson`
// (json.dumps with ensure_ascii=False, no HTML escaping, indent/separators/sort_keys).
#include <algorithm>
#include <cmath>
#include <map>

#include "engine/text/jinja/builtins.h"
#include "engine/text/jinja/python_format.h"
#include "engine/text/jinja/utf8.h"

namespace niwa::text::jinja {
namespace {

using Filter = Value (*)(Context& ctx, const Value& v, CallArgs& args);

std::string soft_str(const Value& v) {
    return py_str(v);
}

Value f_default(Context&, const Value& v, CallArgs& args) {
    auto a = bind_args("default", args, {"default_value", "boolean"});
    const bool boolean = a[1].truthy();
    if (v.is_undefined() || (boolean && !v.truthy())) return a[0].is_undefined() ? Value("") : a[0];
    return v;
}

Value f_trim(Context&, const Value& v, CallArgs& args) {
    auto a = bind_args("trim", args, {"chars"});
    const std::string s = soft_str(v);
    if (a[0].is_undefined() || a[0].is_none()) return Value(py_strip(s, nullptr, true, true));
    const std::string chars = soft_str(a[0]);
    return Value(py_strip(s, &chars, true, true));
}

Value f_length(Context&, const Value& v, CallArgs& args) {
    bind_args("length", args, {});
    return Value(static_cast<int64_t>(length_of(v)));
}

Value f_items(Context&, const Value& v, CallArgs& args) {
    bind_args("items", args, {});
    if (v.is_undefined()) return Value::list({});
    if (!v.is_dict()) throw EvalError("Can only get item pairs from a mapping.");
    List out;
    for (const auto& [k, e] : v.as_dict().items()) out.push_back(Value::list({Value(k), e}, true));
    return Value::list(std::move(out));
}

Value f_tojson(Context&, const Value& v, CallArgs& args) {
    auto a = bind_args("tojson", args, {"ensure_ascii", "indent", "separators", "sort_keys"});
    JsonOptions o;
    o.ensure_ascii = a[0].truthy();
    const Value& indent = a[1];
    if (indent.is_string()) {
        o.indent = indent.as_string();
    } else if (indent.is_int() || indent.is_bool()) {
        o.indent = std::string(static_cast<size_t>(std::max<int64_t>(0, indent.as_int())), ' ');
    } else if (!indent.is_undefined() && !indent.is_none()) {
        throw EvalError("tojson: indent must be an integer or a string");
    }
    if (a[2].is_list() && a[2].as_list().size() == 2 && a[2].as_list()[0].is_string() &&
        a[2].as_list()[1].is_string()) {
        o.item_separator = a[2].as_list()[0].as_string();
        o.key_separator = a[2].as_list()[1].as_string();
    } else if (!a[2].is_undefined() && !a[2].is_none()) {
        throw EvalError("tojson: separators must be a pair of strings");
    }
    o.sort_keys = a[3].truthy();
    return Value(json_dumps(v, o));
}

Value f_string(Context&, const Value& v, CallArgs& args) {
    bind_args("string", args, {});
    return v.is_string() ? v : Value(soft_str(v));
}

Value f_join(Context&, const Value& v, CallArgs& args) {
    auto a = bind_args("join", args, {"d", "attribute"});
    const std::string sep = a[0].is_undefined() ? "" : soft_str(a[0]);
    std::string out;
    bool first = true;
    for (const Value& item : iterate(v)) {
        if (!first) out += sep;
        first = false;
        out += soft_str(a[1].is_undefined() ? item : get_item(item, a[1]));
    }
    return Value(std::move(out));
}

Value f_upper(Context&, const Value& v, CallArgs& args) {
    bind_args("upper", args, {});
    return Value(py_upper(soft_str(v)));
}

Value f_lower(Context&, const Value& v, CallArgs& args) {
    bind_args("lower", args, {});
    return Value(py_lower(soft_str(v)));
}

Value f_capitalize(Context& ctx, const Value& v, CallArgs& args) {
    bind_args("capitalize", args, {});
    CallArgs none;
    return get_attribute(Value(soft_str(v)), "capitalize").as_callable().fn(ctx, none);
}

Value f_title(Context& ctx, const Value& v, CallArgs& args) {
    bind_args("title", args, {});
    CallArgs none;
    return get_attribute(Value(soft_str(v)), "title").as_callable().fn(ctx, none);
}

Value f_first(Context&, const Value& v, CallArgs& args) {
    bind_args("first", args, {});
    const List items = iterate(v);
    return items.empty() ? Value::undefined("No first item, sequence was empty.") : items.front();
}

Value f_last(Context&, const Value& v, CallArgs& args) {
    bind_args("last", args, {});
    const List items = iterate(v);
    return items.empty() ? Value::undefined("No last item, sequence was empty.") : items.back();
}

Value f_list(Context&, const Value& v, CallArgs& args) {
    bind_args("list", args, {});
    return Value::list(iterate(v));
}

Value f_replace(Context& ctx, const Value& v, CallArgs& args) {
    auto a = bind_args("replace", args, {"old", "new", "count"}, 2);
    CallArgs inner;
    inner.positional = {Value(soft_str(a[0])), Value(soft_str(a[1]))};
    if (!a[2].is_undefined() && !a[2].is_none()) inner.positional.push_back(a[2]);
    return get_attribute(Value(soft_str(v)), "replace").as_callable().fn(ctx, inner);
}

// Python's int() of a string: optional sign and surrounding whitespace, digits, '_' between.
bool parse_int(const std::string& text, int64_t base, int64_t& out) {
    const std::string s = py_strip(text, nullptr, true, true);
    if (s.empty()) return false;
    size_t i = 0;
    bool neg = false;
    if (s[0] == '+' || s[0] == '-') {
        neg = s[0] == '-';
        ++i;
    }
    if (i == s.size()) return false;
    int64_t n = 0;
    for (; i < s.size(); ++i) {
        const char c = static_cast<char>(std::tolower(static_cast<unsigned char>(s[i])));
        int64_t d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'z' ? c - 'a' + 10 : 99;
        if (d >= base) return false;
        n = n * base + d;
    }
    out = neg ? -n : n;
    return true;
}

bool parse_float(const std::string& text, double& out) {
    const std::string s = py_strip(text, nullptr, true, true);
    if (s.empty()) return false;
    try {
        size_t used = 0;
        out = std::stod(s, &used);
        return used == s.size();
    } catch (const std::exception&) {
        return false;
    }
}

Value f_int(Context&, const Value& v, CallArgs& args) {
    auto a = bind_args("int", args, {"default", "base"});
    const Value dflt = a[0].is_undefined() ? Value(int64_t{0}) : a[0];
    const int64_t base = a[1].is_undefined() ? 10 : a[1].as_int();
    if (v.is_int() || v.is_bool()) return Value(v.as_int());
    if (v.is_float()) return std::isfinite(v.as_float()) ? Value(static_cast<int64_t>(v.as_float())) : dflt;
    if (v.is_string()) {
        int64_t n = 0;
        if (parse_int(v.as_string(), base, n)) return Value(n);
        double d = 0;
        if (parse_float(v.as_string(), d) && std::isfinite(d)) return Value(static_cast<int64_t>(d));
    }
    if (v.is_undefined())
        throw EvalError(v.undefined_hint().empty() ? "undefined value" : v.undefined_hint());
    return dflt;
}

Value f_float(Context&, const Value& v, CallArgs& args) {
    auto a = bind_args("float", args, {"default"});
    const Value dflt = a[0].is_undefined() ? Value(0.0) : a[0];
    if (v.is_number()) return Value(v.as_float());
    double d = 0;
    if (v.is_string() && parse_float(v.as_string(), d)) return Value(d);
    return dflt;
}

Value f_abs(Context&, const Value& v, CallArgs& args) {
    bind_args("abs", args, {});
    if (v.is_float()) return Value(std::fabs(v.as_float()));
    if (v.is_number()) return Value(v.as_int() < 0 ? -v.as_int() : v.as_int());
    throw EvalError("bad operand type for abs(): '" + v.type_name() + "'");
}

Value f_safe(Context&, const Value& v, CallArgs& args) {
    bind_args("safe", args, {});
    return v.is_string() ? v : Value(soft_str(v));
}

Value f_escape(Context&, const Value& v, CallArgs& args) {
    bind_args("escape", args, {});
    std::string out;
    for (char c : soft_str(v)) {
        switch (c) {
            case '&':
                out += "&amp;";
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '"':
                out += "&#34;";
                break;
            case '\'':
                out += "&#39;";
                break;
            default:
                out += c;
        }
    }
    return Value(std::move(out));
}

Value f_reverse(Context&, const Value& v, CallArgs& args) {
    bind_args("reverse", args, {});
    if (v.is_string()) {
        std::u32string cps = utf8_decode(v.as_string());
        std::reverse(cps.begin(), cps.end());
        return Value(utf8_encode(cps));
    }
    List items = iterate(v);
    std::reverse(items.begin(), items.end());
    return Value::list(std::move(items));
}

Value sort_key(const Value& item, const Value& attribute, bool case_sensitive) {
    Value k = attribute.is_undefined() || attribute.is_none() ? item : get_item(item, attribute);
    if (!case_sensitive && k.is_string()) k = Value(py_lower(k.as_string()));
    return k;
}

Value f_sort(Context&, const Value& v, CallArgs& args) {
    auto a = bind_args("sort", args, {"reverse", "case_sensitive", "attribute"});
    const bool reverse = a[0].truthy();
    const bool cs = a[1].truthy();
    List items = iterate(v);
    std::stable_sort(items.begin(), items.end(), [&](const Value& x, const Value& y) {
        const Value kx = sort_key(x, a[2], cs), ky = sort_key(y, a[2], cs);
        return reverse ? compare("<", ky, kx) : compare("<", kx, ky);
    });
    return Value::list(std::move(items));
}

Value f_unique(Context&, const Value& v, CallArgs& args) {
    auto a = bind_args("unique", args, {"case_sensitive", "attribute"});
    List out, keys;
    for (const Value& item : iterate(v)) {
        const Value k = sort_key(item, a[1], a[0].truthy());
        if (std::any_of(keys.begin(), keys.end(), [&](const Value& s) { return equals(s, k); })) continue;
        keys.push_back(k);
        out.push_back(item);
    }
    return Value::list(std::move(out));
}

Value extreme(const Value& v, CallArgs& args, bool max) {
    auto a = bind_args(max ? "max" : "min", args, {"case_sensitive", "attribute"});
    const List items = iterate(v);
    if (items.empty()) return Value::undefined(std::string("No aggregated item, sequence was empty."));
    const Value* best = &items[0];
    for (const Value& item : items) {
        const Value kb = sort_key(*best, a[1], a[0].truthy()), ki = sort_key(item, a[1], a[0].truthy());
        if (max ? compare(">", ki, kb) : compare("<", ki, kb)) best = &item;
    }
    return *best;
}

Value f_max(Context&, const Value& v, CallArgs& args) {
    return extreme(v, args, true);
}
Value f_min(Context&, const Value& v, CallArgs& args) {
    return extreme(v, args, false);
}

Value f_sum(Context&, const Value& v, CallArgs& args) {
    auto a = bind_args("sum", args, {"attribute", "start"});
    Value total = a[1].is_undefined() ? Value(int64_t{0}) : a[1];
    for (const Value& item : iterate(v)) {
        const Value x = a[0].is_undefined() ? item : get_item(item, a[0]);
        if (!x.is_number() || !total.is_number()) throw EvalError("sum: items must be numbers");
        total = total.is_float() || x.is_float() ? Value(total.as_float() + x.as_float())
                                                 : Value(total.as_int() + x.as_int());
    }
    return total;
}

Value f_round(Context&, const Value& v, CallArgs& args) {
    auto a = bind_args("round", args, {"precision", "method"});
    const int64_t precision = a[0].is_undefined() ? 0 : a[0].as_int();
    const std::string method = a[1].is_undefined() ? "common" : soft_str(a[1]);
    if (!v.is_number()) throw EvalError("round: value must be a number");
    const double scale = std::pow(10.0, static_cast<double>(precision));
    const double x = v.as_float() * scale;
    // Python's round() goes half to even.
    double r = method == "ceil" ? std::ceil(x) : method == "floor" ? std::floor(x) : std::nearbyint(x);
    if (method != "common" && method != "ceil" && method != "floor")
        throw EvalError("method must be common, ceil or floor");
    return Value(r / scale);
}

Value f_indent(Context&, const Value& v, CallArgs& args) {
    auto a = bind_args("indent", args, {"width", "first", "blank"});
    const std::string pad =
        a[0].is_string() ? a[0].as_string()
                         : std::string(static_cast<size_t>(a[0].is_undefined() ? 4 : a[0].as_int()), ' ');
    const std::string s = soft_str(v);
    std::string out;
    size_t start = 0;
    bool first_line = true;
    while (start <= s.size()) {
        size_t nl = s.find('\n', start);
        const bool last = nl == std::string::npos;
        const std::string line = s.substr(start, last ? std::string::npos : nl - start);
        const bool indent_it =
            first_line ? a[1].truthy() : (a[2].truthy() || !py_strip(line, nullptr, true, true).empty());
        if (indent_it) out += pad;
        out += line;
        if (last) break;
        out += '\n';
        start = nl + 1;
        first_line = false;
    }
    return Value(std::move(out));
}

Value f_attr(Context&, const Value& v, CallArgs& args) {
    auto a = bind_args("attr", args, {"name"}, 1);
    return get_attribute(v, soft_str(a[0]));
}

// `map(attribute='x')` or `map('filter', args...)`.
Value f_map(Context& ctx, const Value& v, CallArgs& args) {
    List out;
    const List items = iterate(v);
    if (args.positional.empty()) {
        auto a = bind_args("map", args, {"attribute", "default"});
        if (a[0].is_undefined()) throw EvalError("map: give a filter name or attribute=");
        for (const Value& item : items) {
            Value x = a[0].is_int() ? get_item(item, a[0]) : get_item(item, Value(soft_str(a[0])));
            if (x.is_undefined() && !a[1].is_undefined()) x = a[1];
            out.push_back(std::move(x));
        }
        return Value::list(std::move(out));
    }
    const std::string name = soft_str(args.positional[0]);
    if (!has_filter(name)) throw EvalError("no filter named '" + name + "'");
    for (const Value& item : items) {
        CallArgs rest{{args.positional.begin() + 1, args.positional.end()}, args.keyword};
        out.push_back(apply_filter(ctx, name, item, rest));
    }
    return Value::list(std::move(out));
}

Value select_impl(Context& ctx, const Value& v, CallArgs& args, bool keep, bool by_attribute) {
    List out;
    size_t at = 0;
    Value attribute;
    if (by_attribute) {
        if (args.positional.empty()) throw EvalError("selectattr: missing attribute");
        attribute = args.positional[at++];
    }
    std::string test;
    if (at < args.positional.size()) test = soft_str(args.positional[at++]);
    if (!test.empty() && !has_test(test)) throw EvalError("no test named '" + test + "'");
    for (const Value& item : iterate(v)) {
        const Value x = by_attribute ? get_item(item, attribute) : item;
        bool ok = x.truthy();
        if (!test.empty()) {
            CallArgs rest{{args.positional.begin() + static_cast<long>(at), args.positional.end()}, {}};
            ok = apply_test(ctx, test, x, rest);
        }
        if (ok == keep) out.push_back(item);
    }
    return Value::list(std::move(out));
}

Value f_select(Context& c, const Value& v, CallArgs& a) {
    return select_impl(c, v, a, true, false);
}
Value f_reject(Context& c, const Value& v, CallArgs& a) {
    return select_impl(c, v, a, false, false);
}
Value f_selectattr(Context& c, const Value& v, CallArgs& a) {
    return select_impl(c, v, a, true, true);
}
Value f_rejectattr(Context& c, const Value& v, CallArgs& a) {
    return select_impl(c, v, a, false, true);
}

// printf-style `"%s and %d"|format(a, b)`.
Value f_format(Context&, const Value& v, CallArgs& args) {
    const std::string s = soft_str(v);
    std::string out;
    size_t next = 0;
    for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] != '%') {
            out += s[i];
            continue;
        }
        if (i + 1 >= s.size()) throw EvalError("incomplete format");
        const char spec = s[++i];
        if (spec == '%') {
            out += '%';
            continue;
        }
        if (next >= args.positional.size()) throw EvalError("not enough arguments for format string");
        const Value& x = args.positional[next++];
        if (spec == 's')
            out += soft_str(x);
        else if (spec == 'r')
            out += py_repr(x);
        else if (spec == 'd' || spec == 'i') {
            if (!x.is_number()) throw EvalError("%d format: a number is required");
            out += std::to_string(x.is_float() ? static_cast<int64_t>(x.as_float()) : x.as_int());
        } else
            throw EvalError(std::string("unsupported format character '") + spec + "'");
    }
    return Value(std::move(out));
}

const std::map<std::string, Filter>& filters() {
    static const std::map<std::string, Filter> kFilters = {
        {"default", f_default},
        {"d", f_default},
        {"trim", f_trim},
        {"length", f_length},
        {"count", f_length},
        {"items", f_items},
        {"tojson", f_tojson},
        {"string", f_string},
        {"safe", f_safe},
        {"join", f_join},
        {"upper", f_upper},
        {"lower", f_lower},
        {"first", f_first},
        {"last", f_last},
        {"list", f_list},
        {"replace", f_replace},
        {"int", f_int},
        {"float", f_float},
        {"abs", f_abs},
        {"map", f_map},
        {"select", f_select},
        {"reject", f_reject},
        {"selectattr", f_selectattr},
        {"rejectattr", f_rejectattr},
        {"capitalize", f_capitalize},
        {"title", f_title},
        {"reverse", f_reverse},
        {"sort", f_sort},
        {"unique", f_unique},
        {"min", f_min},
        {"max", f_max},
        {"sum", f_sum},
        {"round", f_round},
        {"indent", f_indent},
        {"attr", f_attr},
        {"format", f_format},
        {"escape", f_escape},
        {"e", f_escape},
    };
    return kFilters;
}

}  // namespace

bool has_filter(const std::string& name) {
    return filters().count(name) != 0;
}

Value apply_filter(Context& ctx, const std::string& name, const Value& operand, CallArgs& args) {
    auto it = filters().find(name);
    if (it == filters().end()) throw EvalError("no filter named '" + name + "'");
    return it->second(ctx, operand, args);
}

}  // namespace niwa::text::jinja
