// CPython's str(), repr() and json.dumps() over template values.
#include "engine/text/jinja/python_format.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include <utf8proc.h>

#include "engine/text/jinja/error.h"
#include "engine/text/jinja/utf8.h"

namespace niwa::text::jinja {

std::string py_float_repr(double d) {
    if (std::isnan(d)) return "nan";
    if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
    // Shortest round-trip digits, then laid out with repr()'s rule: positional notation
    // while the decimal point sits within (-4, 16], scientific outside.
    char buf[64];
    const auto res = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
    std::string sci(buf, res.ptr);
    std::string sign;
    if (sci[0] == '-') {
        sign = "-";
        sci.erase(0, 1);
    }
    const size_t e = sci.find('e');
    std::string digits = sci.substr(0, e);
    digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
    const int exp10 = std::stoi(sci.substr(e + 1));
    const int decpt = exp10 + 1;
    const int n = static_cast<int>(digits.size());
    if (decpt > -4 && decpt <= 16) {
        if (decpt <= 0) return sign + "0." + std::string(static_cast<size_t>(-decpt), '0') + digits;
        if (decpt >= n) return sign + digits + std::string(static_cast<size_t>(decpt - n), '0') + ".0";
        return sign + digits.substr(0, static_cast<size_t>(decpt)) + "." +
               digits.substr(static_cast<size_t>(decpt));
    }
    std::string mantissa = digits.substr(0, 1);
    if (n > 1) mantissa += "." + digits.substr(1);
    char ebuf[16];
    std::snprintf(ebuf, sizeof ebuf, "e%c%02d", exp10 < 0 ? '-' : '+', std::abs(exp10));
    return sign + mantissa + ebuf;
}

static bool py_isprintable(char32_t c) {
    if (c == ' ') return true;
    switch (utf8proc_category(static_cast<utf8proc_int32_t>(c))) {
        case UTF8PROC_CATEGORY_CC:
        case UTF8PROC_CATEGORY_CF:
        case UTF8PROC_CATEGORY_CS:
        case UTF8PROC_CATEGORY_CO:
        case UTF8PROC_CATEGORY_CN:
        case UTF8PROC_CATEGORY_ZL:
        case UTF8PROC_CATEGORY_ZP:
        case UTF8PROC_CATEGORY_ZS:
            return false;
        default:
            return true;
    }
}

static std::string repr_string(const std::string& s) {
    const bool has_single = s.find('\'') != std::string::npos;
    const bool has_double = s.find('"') != std::string::npos;
    const char quote = has_single && !has_double ? '"' : '\'';
    std::string out(1, quote);
    char buf[16];
    for (char32_t c : utf8_decode(s)) {
        if (c == static_cast<char32_t>(quote) || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c == '\n') {
            out += "\\n";
        } else if (c == '\r') {
            out += "\\r";
        } else if (c == '\t') {
            out += "\\t";
        } else if (c < 0x20 || c == 0x7F) {
            std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(c));
            out += buf;
        } else if (c < 0x80 || py_isprintable(c)) {
            utf8_append(out, c);
        } else {
            const unsigned u = static_cast<unsigned>(c);
            std::snprintf(buf, sizeof buf, u < 0x100 ? "\\x%02x" : u < 0x10000 ? "\\u%04x" : "\\U%08x", u);
            out += buf;
        }
    }
    out += quote;
    return out;
}

std::string py_repr(const Value& v) {
    if (v.is_string()) return repr_string(v.as_string());
    if (v.is_undefined()) return "Undefined";
    return py_str(v);
}

std::string py_str(const Value& v) {
    switch (v.kind()) {
        case Value::Kind::Undefined:
            return "";
        case Value::Kind::None:
            return "None";
        case Value::Kind::Bool:
            return v.as_bool() ? "True" : "False";
        case Value::Kind::Int:
            return std::to_string(v.as_int());
        case Value::Kind::Float:
            return py_float_repr(v.as_float());
        case Value::Kind::String:
            return v.as_string();
        case Value::Kind::List: {
            const List& items = v.as_list();
            std::string out = v.is_tuple() ? "(" : "[";
            for (size_t i = 0; i < items.size(); ++i) {
                if (i) out += ", ";
                out += py_repr(items[i]);
            }
            if (v.is_tuple() && items.size() == 1) out += ",";
            return out + (v.is_tuple() ? ")" : "]");
        }
        case Value::Kind::Dict:
        case Value::Kind::Namespace: {
            std::string out = v.is_namespace() ? "<Namespace {" : "{";
            bool first = true;
            for (const auto& [k, e] : v.as_dict().items()) {
                if (!first) out += ", ";
                first = false;
                out += repr_string(k) + ": " + py_repr(e);
            }
            return out + (v.is_namespace() ? "}>" : "}");
        }
        case Value::Kind::Callable:
            if (v.as_callable().is_macro) return "<Macro '" + v.as_callable().name + "'>";
            return "<function " + v.as_callable().name + ">";
    }
    return "";
}

static void json_string(std::string& out, const std::string& s, bool ensure_ascii) {
    out += '"';
    char buf[16];
    auto escape_unit = [&](unsigned u) {
        std::snprintf(buf, sizeof buf, "\\u%04x", u);
        out += buf;
    };
    for (char32_t c : utf8_decode(s)) {
        switch (c) {
            case '"':
                out += "\\\"";
                continue;
            case '\\':
                out += "\\\\";
                continue;
            case '\n':
                out += "\\n";
                continue;
            case '\r':
                out += "\\r";
                continue;
            case '\t':
                out += "\\t";
                continue;
            case '\b':
                out += "\\b";
                continue;
            case '\f':
                out += "\\f";
                continue;
            default:
                break;
        }
        if (c < 0x20 || (ensure_ascii && c >= 0x7F)) {
            if (c >= 0x10000) {
                const unsigned v = static_cast<unsigned>(c) - 0x10000;
                escape_unit(0xD800 | (v >> 10));
                escape_unit(0xDC00 | (v & 0x3FF));
            } else {
                escape_unit(static_cast<unsigned>(c));
            }
            continue;
        }
        utf8_append(out, c);
    }
    out += '"';
}

namespace {

struct JsonWriter {
    const JsonOptions& opt;
    std::string item_sep;
    std::string key_sep;
    std::string out;

    void newline(int level) {
        if (!opt.indent) return;
        out += '\n';
        for (int i = 0; i < level; ++i) out += *opt.indent;
    }

    void write(const Value& v, int level) {
        switch (v.kind()) {
            case Value::Kind::None:
                out += "null";
                return;
            case Value::Kind::Bool:
                out += v.as_bool() ? "true" : "false";
                return;
            case Value::Kind::Int:
                out += std::to_string(v.as_int());
                return;
            case Value::Kind::Float: {
                const double d = v.as_float();
                if (std::isnan(d))
                    out += "NaN";
                else if (std::isinf(d))
                    out += d < 0 ? "-Infinity" : "Infinity";
                else
                    out += py_float_repr(d);
                return;
            }
            case Value::Kind::String:
                json_string(out, v.as_string(), opt.ensure_ascii);
                return;
            case Value::Kind::List: {
                const List& items = v.as_list();
                if (items.empty()) {
                    out += "[]";
                    return;
                }
                out += '[';
                for (size_t i = 0; i < items.size(); ++i) {
                    if (i) out += item_sep;
                    newline(level + 1);
                    write(items[i], level + 1);
                }
                newline(level);
                out += ']';
                return;
            }
            case Value::Kind::Dict: {
                std::vector<const std::pair<std::string, Value>*> items;
                for (const auto& kv : v.as_dict().items()) items.push_back(&kv);
                if (opt.sort_keys) {
                    std::stable_sort(items.begin(), items.end(),
                                     [](const auto* a, const auto* b) { return a->first < b->first; });
                }
                if (items.empty()) {
                    out += "{}";
                    return;
                }
                out += '{';
                for (size_t i = 0; i < items.size(); ++i) {
                    if (i) out += item_sep;
                    newline(level + 1);
                    json_string(out, items[i]->first, opt.ensure_ascii);
                    out += key_sep;
                    write(items[i]->second, level + 1);
                }
                newline(level);
                out += '}';
                return;
            }
            case Value::Kind::Undefined:
                throw EvalError("Object of type Undefined is not JSON serializable");
            case Value::Kind::Namespace:
                throw EvalError("Object of type Namespace is not JSON serializable");
            case Value::Kind::Callable:
                throw EvalError("Object of type function is not JSON serializable");
        }
    }
};

}  // namespace

std::string json_dumps(const Value& v, const JsonOptions& options) {
    // Python's defaults: ", " between items, or "," when indenting (the newline separates).
    JsonWriter w{options,
                 options.item_separator.value_or(options.indent ? "," : ", "),
                 options.key_separator.value_or(": "),
                 {}};
    w.write(v, 0);
    return std::move(w.out);
}

}  // namespace niwa::text::jinja
