// The functions every template can call: jinja2's range/namespace/dict and the ones
// transformers adds (raise_exception, strftime_now).
#include <ctime>

#include "engine/text/jinja/builtins.h"
#include "engine/text/jinja/error.h"
#include "engine/text/jinja/python_format.h"

namespace niwa::text::jinja {
namespace {

// jinja2's sandbox refuses ranges longer than this.
constexpr int64_t kMaxRange = 100000;

Value g_range(Context&, CallArgs& args) {
    if (!args.keyword.empty()) throw EvalError("range() takes no keyword arguments");
    const auto& p = args.positional;
    if (p.empty() || p.size() > 3)
        throw EvalError("range expected 1 to 3 arguments, got " + std::to_string(p.size()));
    for (const Value& v : p) {
        if (!v.is_int() && !v.is_bool())
            throw EvalError("'" + v.type_name() + "' cannot be interpreted as an integer");
    }
    const int64_t start = p.size() == 1 ? 0 : p[0].as_int();
    const int64_t stop = p.size() == 1 ? p[0].as_int() : p[1].as_int();
    const int64_t step = p.size() == 3 ? p[2].as_int() : 1;
    if (step == 0) throw EvalError("range() arg 3 must not be zero");
    List out;
    for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
        if (static_cast<int64_t>(out.size()) >= kMaxRange)
            throw EvalError("Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).");
        out.emplace_back(i);
    }
    return Value::list(std::move(out));
}

Dict dict_from(const char* fn, CallArgs& args) {
    Dict d;
    if (args.positional.size() > 1)
        throw EvalError(std::string(fn) + "() takes at most one positional argument");
    if (!args.positional.empty()) {
        if (!args.positional[0].is_dict()) throw EvalError(std::string(fn) + "() needs a mapping");
        d = args.positional[0].as_dict();
    }
    for (auto& [k, v] : args.keyword) d.set(k, v);
    return d;
}

Value g_namespace(Context&, CallArgs& args) {
    return Value::ns(dict_from("namespace", args));
}

Value g_dict(Context&, CallArgs& args) {
    return Value::dict(dict_from("dict", args));
}

Value g_raise_exception(Context&, CallArgs& args) {
    auto a = bind_args("raise_exception", args, {"message"}, 1);
    throw RaisedError(py_str(a[0]));
}

Value g_strftime_now(Context&, CallArgs& args) {
    auto a = bind_args("strftime_now", args, {"format"}, 1);
    const std::time_t now = std::time(nullptr);
    std::tm local{};
    localtime_r(&now, &local);
    char buf[256];
    const size_t n = std::strftime(buf, sizeof buf, py_str(a[0]).c_str(), &local);
    return Value(std::string(buf, n));
}

}  // namespace

Context::Scope make_globals() {
    Context::Scope g;
    g["range"] = Value::callable("range", g_range);
    g["namespace"] = Value::callable("namespace", g_namespace);
    g["dict"] = Value::callable("dict", g_dict);
    g["raise_exception"] = Value::callable("raise_exception", g_raise_exception);
    g["strftime_now"] = Value::callable("strftime_now", g_strftime_now);
    return g;
}

}  // namespace niwa::text::jinja
