// Access into values as jinja2's sandbox does it: attributes, items, slices, iteration,
// len(), and the read-only methods of str, dict and list that chat templates call.
#include <algorithm>
#include <string>
#include <string_view>

#include "engine/text/jinja/builtins.h"
#include "engine/text/jinja/python_format.h"
#include "engine/text/jinja/utf8.h"

namespace niwa::text::jinja {

std::vector<Value> bind_args(const std::string& fn, CallArgs& args, const std::vector<std::string>& params,
                             size_t required) {
    if (args.positional.size() > params.size()) {
        throw EvalError(fn + "() takes at most " + std::to_string(params.size()) + " argument(s), " +
                        std::to_string(args.positional.size()) + " given");
    }
    std::vector<Value> out(params.size());
    std::vector<bool> given(params.size(), false);
    for (size_t i = 0; i < args.positional.size(); ++i) {
        out[i] = args.positional[i];
        given[i] = true;
    }
    for (auto& [key, v] : args.keyword) {
        auto it = std::find(params.begin(), params.end(), key);
        if (it == params.end()) throw EvalError(fn + "() got an unexpected keyword argument '" + key + "'");
        const auto i = static_cast<size_t>(it - params.begin());
        if (given[i]) throw EvalError(fn + "() got multiple values for argument '" + key + "'");
        out[i] = v;
        given[i] = true;
    }
    for (size_t i = 0; i < required; ++i) {
        if (!given[i]) throw EvalError(fn + "() missing required argument '" + params[i] + "'");
    }
    return out;
}

static std::string no_attribute(const Value& obj, const std::string& name) {
    const std::string type = obj.is_none() ? "None" : obj.type_name();
    return "'" + type + "' has no attribute '" + name + "'";
}

// `fn` is a view, not a std::string reference: a literal argument then creates no temporary
// that the returned reference could be mistaken for (GCC 13's -Wdangling-reference).
static const std::string& need_string(const Value& v, std::string_view fn) {
    if (!v.is_string()) throw EvalError(std::string(fn) + "() argument must be str, not " + v.type_name());
    return v.as_string();
}

size_t length_of(const Value& v) {
    switch (v.kind()) {
        case Value::Kind::Undefined:
            return 0;
        case Value::Kind::String:
            return utf8_length(v.as_string());
        case Value::Kind::List:
            return v.as_list().size();
        case Value::Kind::Dict:
            return v.as_dict().size();
        default:
            throw EvalError("object of type '" + v.type_name() + "' has no len()");
    }
}

List iterate(const Value& v) {
    switch (v.kind()) {
        case Value::Kind::Undefined:
            return {};
        case Value::Kind::List:
            return v.as_list();
        case Value::Kind::Dict: {
            List keys;
            for (const auto& kv : v.as_dict().items()) keys.emplace_back(kv.first);
            return keys;
        }
        case Value::Kind::String: {
            List chars;
            for (char32_t c : utf8_decode(v.as_string()))
                chars.emplace_back(utf8_encode(std::u32string(1, c)));
            return chars;
        }
        default:
            throw EvalError("'" + v.type_name() + "' is not iterable");
    }
}

// Python's slice.indices(): clamps start/stop for a sequence of length n.
static std::vector<size_t> slice_indices(int64_t n, const Value& start, const Value& stop,
                                         const Value& step) {
    auto as_index = [](const Value& v, const char* what) {
        if (!v.is_int() && !v.is_bool())
            throw EvalError(std::string("slice ") + what + " must be an integer or None");
        return v.as_int();
    };
    const int64_t st = step.is_none() ? 1 : as_index(step, "step");
    if (st == 0) throw EvalError("slice step cannot be zero");
    auto clamp = [&](const Value& v, int64_t dflt) {
        if (v.is_none()) return dflt;
        int64_t i = as_index(v, "index");
        if (i < 0) i += n;
        if (st > 0) return std::clamp<int64_t>(i, 0, n);
        return std::clamp<int64_t>(i, -1, n - 1);
    };
    const int64_t b = clamp(start, st > 0 ? 0 : n - 1);
    const int64_t e = clamp(stop, st > 0 ? n : -1);
    std::vector<size_t> out;
    for (int64_t i = b; st > 0 ? i < e : i > e; i += st) out.push_back(static_cast<size_t>(i));
    return out;
}

Value slice(const Value& obj, const Value& start, const Value& stop, const Value& step) {
    if (obj.is_string()) {
        const std::u32string cps = utf8_decode(obj.as_string());
        std::u32string out;
        for (size_t i : slice_indices(static_cast<int64_t>(cps.size()), start, stop, step)) out += cps[i];
        return Value(utf8_encode(out));
    }
    if (obj.is_list()) {
        const List& items = obj.as_list();
        List out;
        for (size_t i : slice_indices(static_cast<int64_t>(items.size()), start, stop, step))
            out.push_back(items[i]);
        return Value::list(std::move(out), obj.is_tuple());
    }
    throw EvalError("'" + obj.type_name() + "' is not subscriptable");
}

Value get_item(const Value& obj, const Value& key) {
    if (obj.is_dict()) {
        if (key.is_string()) {
            if (const Value* v = obj.as_dict().find(key.as_string())) return *v;
            return Value::undefined(no_attribute(obj, key.as_string()));
        }
        return Value::undefined("'dict object' has no element " + py_repr(key));
    }
    if ((obj.is_list() || obj.is_string()) && (key.is_int() || key.is_bool())) {
        const bool str = obj.is_string();
        const std::u32string cps = str ? utf8_decode(obj.as_string()) : std::u32string();
        const auto n = static_cast<int64_t>(str ? cps.size() : obj.as_list().size());
        int64_t i = key.as_int();
        if (i < 0) i += n;
        if (i < 0 || i >= n)
            return Value::undefined("'" + obj.type_name() + "' has no element " + py_repr(key));
        if (str) return Value(utf8_encode(std::u32string(1, cps[static_cast<size_t>(i)])));
        return obj.as_list()[static_cast<size_t>(i)];
    }
    if (key.is_string()) return get_attribute(obj, key.as_string());
    return Value::undefined("'" + obj.type_name() + "' has no element " + py_repr(key));
}

namespace {

using Method = Value (*)(const Value& self, CallArgs& args);

Value str_startswith_impl(const Value& self, CallArgs& args, bool ends) {
    const char* fn = ends ? "endswith" : "startswith";
    auto a = bind_args(fn, args, {"prefix"}, 1);
    const std::string& s = self.as_string();
    auto test = [&](const Value& p) {
        const std::string& x = need_string(p, fn);
        if (x.size() > s.size()) return false;
        return ends ? s.compare(s.size() - x.size(), x.size(), x) == 0 : s.compare(0, x.size(), x) == 0;
    };
    if (a[0].is_list() && a[0].is_tuple()) {
        for (const Value& p : a[0].as_list()) {
            if (test(p)) return Value(true);
        }
        return Value(false);
    }
    return Value(test(a[0]));
}

Value str_strip_impl(const Value& self, CallArgs& args, bool left, bool right) {
    auto a = bind_args("strip", args, {"chars"});
    if (a[0].is_undefined() || a[0].is_none()) return Value(py_strip(self.as_string(), nullptr, left, right));
    return Value(py_strip(self.as_string(), &need_string(a[0], "strip"), left, right));
}

Value str_split_impl(const Value& self, CallArgs& args, bool from_right) {
    auto a = bind_args("split", args, {"sep", "maxsplit"});
    const long maxsplit = a[1].is_undefined() ? -1 : static_cast<long>(a[1].as_int());
    const std::string* sep = a[0].is_undefined() || a[0].is_none() ? nullptr : &need_string(a[0], "split");
    if (sep && sep->empty()) throw EvalError("empty separator");
    std::vector<std::string> parts;
    if (from_right && maxsplit >= 0) {
        // rsplit: split the reversed string and reverse back; only separators and
        // whitespace are matched, so code points can be reversed as a whole.
        std::u32string r = utf8_decode(self.as_string());
        std::reverse(r.begin(), r.end());
        std::string rsep;
        if (sep) {
            std::u32string t = utf8_decode(*sep);
            std::reverse(t.begin(), t.end());
            rsep = utf8_encode(t);
        }
        parts = py_split(utf8_encode(r), sep ? &rsep : nullptr, maxsplit);
        std::reverse(parts.begin(), parts.end());
        for (auto& p : parts) {
            std::u32string t = utf8_decode(p);
            std::reverse(t.begin(), t.end());
            p = utf8_encode(t);
        }
    } else {
        parts = py_split(self.as_string(), sep, maxsplit);
    }
    List out;
    for (auto& p : parts) out.emplace_back(std::move(p));
    return Value::list(std::move(out));
}

Value str_replace(const Value& self, CallArgs& args) {
    auto a = bind_args("replace", args, {"old", "new", "count"}, 2);
    const std::string& from = need_string(a[0], "replace");
    const std::string& to = need_string(a[1], "replace");
    int64_t count = a[2].is_undefined() ? -1 : a[2].as_int();
    const std::string& s = self.as_string();
    std::string out;
    if (from.empty()) {
        // Python inserts `to` around every code point.
        const std::u32string cps = utf8_decode(s);
        for (size_t i = 0; i <= cps.size(); ++i) {
            if (count != 0) {
                out += to;
                if (count > 0) --count;
            }
            if (i < cps.size()) utf8_append(out, cps[i]);
        }
        return Value(std::move(out));
    }
    size_t pos = 0;
    while (count != 0) {
        const size_t at = s.find(from, pos);
        if (at == std::string::npos) break;
        out.append(s, pos, at - pos);
        out += to;
        pos = at + from.size();
        if (count > 0) --count;
    }
    out.append(s, pos, std::string::npos);
    return Value(std::move(out));
}

Value str_title(const Value& self, bool capitalize_only) {
    std::u32string cps = utf8_decode(self.as_string());
    bool start = true;
    for (char32_t& c : cps) {
        const std::string one = utf8_encode(std::u32string(1, c));
        const bool alpha = py_lower(one) != py_upper(one);
        const std::string mapped = start ? py_upper(one) : py_lower(one);
        c = utf8_decode(mapped)[0];
        if (capitalize_only)
            start = false;
        else
            start = !alpha;
    }
    return Value(utf8_encode(cps));
}

Value str_find(const Value& self, CallArgs& args, bool count_all) {
    auto a = bind_args(count_all ? "count" : "find", args, {"sub"}, 1);
    const std::string& sub = need_string(a[0], "find");
    const std::string& s = self.as_string();
    if (!count_all) {
        const size_t at = s.find(sub);
        return Value(at == std::string::npos ? int64_t{-1}
                                             : static_cast<int64_t>(utf8_length(s.substr(0, at))));
    }
    if (sub.empty()) return Value(static_cast<int64_t>(utf8_length(s) + 1));
    int64_t n = 0;
    for (size_t at = s.find(sub); at != std::string::npos; at = s.find(sub, at + sub.size())) ++n;
    return Value(n);
}

Value str_join(const Value& self, CallArgs& args) {
    auto a = bind_args("join", args, {"iterable"}, 1);
    std::string out;
    bool first = true;
    for (const Value& v : iterate(a[0])) {
        if (!first) out += self.as_string();
        first = false;
        out += need_string(v, "join");
    }
    return Value(std::move(out));
}

template <typename Pred>
Value str_is(const Value& self, Pred pred) {
    const std::u32string cps = utf8_decode(self.as_string());
    if (cps.empty()) return Value(false);
    for (char32_t c : cps) {
        if (!pred(c)) return Value(false);
    }
    return Value(true);
}

// str.format with `{}`, `{0}` and `{name}` fields (no format specs).
Value str_format(const Value& self, CallArgs& args) {
    const std::string& s = self.as_string();
    std::string out;
    size_t auto_index = 0;
    for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '{' && i + 1 < s.size() && s[i + 1] == '{') {
            out += '{';
            ++i;
        } else if (s[i] == '}' && i + 1 < s.size() && s[i + 1] == '}') {
            out += '}';
            ++i;
        } else if (s[i] == '{') {
            const size_t close = s.find('}', i);
            if (close == std::string::npos) throw EvalError("Single '{' encountered in format string");
            const std::string field = s.substr(i + 1, close - i - 1);
            if (field.find_first_of(":!") != std::string::npos)
                throw EvalError("format specs in str.format are not supported");
            const Value* v = nullptr;
            if (field.empty() || std::all_of(field.begin(), field.end(), ::isdigit)) {
                const size_t idx = field.empty() ? auto_index++ : std::stoul(field);
                if (idx >= args.positional.size())
                    throw EvalError("Replacement index " + std::to_string(idx) + " out of range");
                v = &args.positional[idx];
            } else {
                for (const auto& [k, kv] : args.keyword) {
                    if (k == field) v = &kv;
                }
                if (!v) throw EvalError("KeyError: '" + field + "'");
            }
            out += py_str(*v);
            i = close;
        } else {
            out += s[i];
        }
    }
    return Value(std::move(out));
}

Value string_method(const Value& self, const std::string& name, CallArgs& args) {
    if (name == "startswith") return str_startswith_impl(self, args, false);
    if (name == "endswith") return str_startswith_impl(self, args, true);
    if (name == "strip") return str_strip_impl(self, args, true, true);
    if (name == "lstrip") return str_strip_impl(self, args, true, false);
    if (name == "rstrip") return str_strip_impl(self, args, false, true);
    if (name == "split") return str_split_impl(self, args, false);
    if (name == "rsplit") return str_split_impl(self, args, true);
    if (name == "replace") return str_replace(self, args);
    if (name == "format") return str_format(self, args);
    if (name == "join") return str_join(self, args);
    if (name == "find") return str_find(self, args, false);
    if (name == "count") return str_find(self, args, true);
    bind_args(name, args, {});
    if (name == "upper") return Value(py_upper(self.as_string()));
    if (name == "lower") return Value(py_lower(self.as_string()));
    if (name == "title") return str_title(self, false);
    if (name == "capitalize") {
        const Value lowered(py_lower(self.as_string()));
        return str_title(lowered, true);
    }
    if (name == "isspace") return str_is(self, py_isspace);
    if (name == "isdigit") return str_is(self, [](char32_t c) { return c >= '0' && c <= '9'; });
    if (name == "isalpha")
        return str_is(self, [](char32_t c) {
            const std::string one = utf8_encode(std::u32string(1, c));
            return py_lower(one) != py_upper(one) || (c >= 0x80 && !py_isspace(c));
        });
    if (name == "splitlines") {
        List out;
        for (auto& p : py_split(self.as_string(), nullptr, -1)) out.emplace_back(std::move(p));
        return Value::list(std::move(out));
    }
    if (name == "islower")
        return Value(py_lower(self.as_string()) == self.as_string() &&
                     py_upper(self.as_string()) != self.as_string());
    if (name == "isupper")
        return Value(py_upper(self.as_string()) == self.as_string() &&
                     py_lower(self.as_string()) != self.as_string());
    throw EvalError("'str object' has no attribute '" + name + "'");
}

Value dict_method(const Value& self, const std::string& name, CallArgs& args) {
    const Dict& d = self.as_dict();
    if (name == "get") {
        auto a = bind_args("get", args, {"key", "default"}, 1);
        if (a[0].is_string()) {
            if (const Value* v = d.find(a[0].as_string())) return *v;
        }
        return a[1].is_undefined() ? Value::none() : a[1];
    }
    bind_args(name, args, {});
    List out;
    for (const auto& [k, v] : d.items()) {
        if (name == "items")
            out.push_back(Value::list({Value(k), v}, true));
        else if (name == "keys")
            out.emplace_back(k);
        else
            out.push_back(v);
    }
    return Value::list(std::move(out));
}

Value list_method(const Value& self, const std::string& name, CallArgs& args) {
    auto a = bind_args(name, args, {"value"}, 1);
    const List& items = self.as_list();
    if (name == "count") {
        return Value(static_cast<int64_t>(
            std::count_if(items.begin(), items.end(), [&](const Value& v) { return equals(v, a[0]); })));
    }
    for (size_t i = 0; i < items.size(); ++i) {
        if (equals(items[i], a[0])) return Value(static_cast<int64_t>(i));
    }
    throw EvalError(py_repr(a[0]) + " is not in list");
}

bool is_string_method(const std::string& n) {
    static const char* kNames[] = {"startswith", "endswith", "strip",   "lstrip",    "rstrip",     "split",
                                   "rsplit",     "replace",  "format",  "join",      "find",       "count",
                                   "upper",      "lower",    "title",   "isspace",   "capitalize", "isdigit",
                                   "isalpha",    "islower",  "isupper", "splitlines"};
    return std::any_of(std::begin(kNames), std::end(kNames), [&](const char* k) { return n == k; });
}

Value bound(const Value& self, const std::string& name,
            Value (*impl)(const Value&, const std::string&, CallArgs&)) {
    return Value::callable(name,
                           [self, name, impl](Context&, CallArgs& args) { return impl(self, name, args); });
}

}  // namespace

Value get_attribute(const Value& obj, const std::string& name) {
    switch (obj.kind()) {
        case Value::Kind::String:
            if (is_string_method(name)) return bound(obj, name, string_method);
            break;
        case Value::Kind::Dict:
            if (name == "items" || name == "keys" || name == "values" || name == "get")
                return bound(obj, name, dict_method);
            if (const Value* v = obj.as_dict().find(name)) return *v;
            break;
        case Value::Kind::Namespace:
            if (const Value* v = obj.as_dict().find(name)) return *v;
            break;
        case Value::Kind::List:
            if (name == "count" || name == "index") return bound(obj, name, list_method);
            break;
        default:
            break;
    }
    return Value::undefined(no_attribute(obj, name));
}

}  // namespace niwa::text::jinja
