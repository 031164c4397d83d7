// Expression evaluation with Python's operator semantics (floor division and modulo round
// toward negative infinity, `/` always gives a float, `and`/`or` return an operand) and
// jinja2's Undefined: printing it is fine, computing with it is an error.
#include <cmath>

#include "engine/text/jinja/ast.h"
#include "engine/text/jinja/builtins.h"
#include "engine/text/jinja/context.h"
#include "engine/text/jinja/python_format.h"

namespace niwa::text::jinja {
namespace {

std::string py_type(const Value& v) {
    switch (v.kind()) {
        case Value::Kind::None:
            return "NoneType";
        case Value::Kind::Bool:
            return "bool";
        case Value::Kind::Int:
            return "int";
        case Value::Kind::Float:
            return "float";
        case Value::Kind::String:
            return "str";
        case Value::Kind::List:
            return v.is_tuple() ? "tuple" : "list";
        case Value::Kind::Dict:
            return "dict";
        case Value::Kind::Namespace:
            return "Namespace";
        case Value::Kind::Callable:
            return "function";
        case Value::Kind::Undefined:
            return "Undefined";
    }
    return "object";
}

[[noreturn]] void undefined_error(const Value& v) {
    throw EvalError(v.undefined_hint().empty() ? "undefined value" : v.undefined_hint());
}

void check_defined(const Value& a, const Value& b) {
    if (a.is_undefined()) undefined_error(a);
    if (b.is_undefined()) undefined_error(b);
}

[[noreturn]] void unsupported(const std::string& op, const Value& a, const Value& b) {
    throw EvalError("unsupported operand type(s) for " + op + ": '" + py_type(a) + "' and '" + py_type(b) +
                    "'");
}

int64_t floor_div(int64_t a, int64_t b) {
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
    return q;
}

// Python's ints never overflow; ours are 64-bit, so overflow is an error, not a wrong number.
int64_t checked(bool overflowed, int64_t r) {
    if (overflowed) throw EvalError("integer result does not fit in 64 bits");
    return r;
}

int64_t add(int64_t a, int64_t b) {
    int64_t r = 0;
    const bool overflowed = __builtin_add_overflow(a, b, &r);
    return checked(overflowed, r);
}

int64_t sub(int64_t a, int64_t b) {
    int64_t r = 0;
    const bool overflowed = __builtin_sub_overflow(a, b, &r);
    return checked(overflowed, r);
}

int64_t mul(int64_t a, int64_t b) {
    int64_t r = 0;
    const bool overflowed = __builtin_mul_overflow(a, b, &r);
    return checked(overflowed, r);
}

Value repeat(const Value& seq, int64_t n) {
    if (seq.is_string()) {
        std::string out;
        for (int64_t i = 0; i < n; ++i) out += seq.as_string();
        return Value(std::move(out));
    }
    List out;
    for (int64_t i = 0; i < n; ++i) out.insert(out.end(), seq.as_list().begin(), seq.as_list().end());
    return Value::list(std::move(out), seq.is_tuple());
}

Value arithmetic(const std::string& op, const Value& a, const Value& b) {
    if (op == "~") return Value(py_str(a) + py_str(b));
    check_defined(a, b);
    const bool nums = a.is_number() && b.is_number();
    const bool ints = nums && !a.is_float() && !b.is_float();
    if (op == "+") {
        if (ints) return Value(add(a.as_int(), b.as_int()));
        if (nums) return Value(a.as_float() + b.as_float());
        if (a.is_string() && b.is_string()) return Value(a.as_string() + b.as_string());
        if (a.is_string()) throw EvalError("can only concatenate str (not \"" + py_type(b) + "\") to str");
        if (a.is_list() && b.is_list() && a.is_tuple() == b.is_tuple()) {
            List out = a.as_list();
            out.insert(out.end(), b.as_list().begin(), b.as_list().end());
            return Value::list(std::move(out), a.is_tuple());
        }
        unsupported(op, a, b);
    }
    if (op == "*") {
        if (ints) return Value(mul(a.as_int(), b.as_int()));
        if (nums) return Value(a.as_float() * b.as_float());
        if ((a.is_string() || a.is_list()) && b.is_number() && !b.is_float()) return repeat(a, b.as_int());
        if ((b.is_string() || b.is_list()) && a.is_number() && !a.is_float()) return repeat(b, a.as_int());
        unsupported(op, a, b);
    }
    if (!nums) unsupported(op, a, b);
    if (op == "-") return ints ? Value(sub(a.as_int(), b.as_int())) : Value(a.as_float() - b.as_float());
    if (op == "/") {
        if (b.as_float() == 0) throw EvalError("division by zero");
        return Value(a.as_float() / b.as_float());
    }
    if (op == "//") {
        if (b.as_float() == 0) throw EvalError("integer division or modulo by zero");
        if (ints) return Value(floor_div(a.as_int(), b.as_int()));
        return Value(std::floor(a.as_float() / b.as_float()));
    }
    if (op == "%") {
        if (b.as_float() == 0) throw EvalError("integer division or modulo by zero");
        if (ints) return Value(a.as_int() - floor_div(a.as_int(), b.as_int()) * b.as_int());
        double r = std::fmod(a.as_float(), b.as_float());
        if (r != 0 && ((r < 0) != (b.as_float() < 0))) r += b.as_float();
        return Value(r);
    }
    if (op == "**") {
        if (ints && b.as_int() >= 0) {
            int64_t r = 1;
            for (int64_t i = 0; i < b.as_int(); ++i) r = mul(r, a.as_int());
            return Value(r);
        }
        return Value(std::pow(a.as_float(), b.as_float()));
    }
    throw EvalError("unknown operator " + op);
}

int order(const Value& a, const Value& b, const std::string& op) {
    check_defined(a, b);
    if (a.is_number() && b.is_number()) {
        if (!a.is_float() && !b.is_float()) return a.as_int() < b.as_int() ? -1 : a.as_int() > b.as_int();
        return a.as_float() < b.as_float() ? -1 : a.as_float() > b.as_float();
    }
    if (a.is_string() && b.is_string())
        return a.as_string().compare(b.as_string()) < 0 ? -1 : a.as_string() != b.as_string();
    if (a.is_list() && b.is_list()) {
        const List& x = a.as_list();
        const List& y = b.as_list();
        for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
            if (!equals(x[i], y[i])) return order(x[i], y[i], op);
        }
        return x.size() < y.size() ? -1 : x.size() > y.size();
    }
    throw EvalError("'" + op + "' not supported between instances of '" + py_type(a) + "' and '" +
                    py_type(b) + "'");
}

}  // namespace

bool contains(const Value& container, const Value& item) {
    switch (container.kind()) {
        case Value::Kind::Undefined:
            return false;
        case Value::Kind::String:
            if (!item.is_string())
                throw EvalError("'in <string>' requires string as left operand, not " + py_type(item));
            return container.as_string().find(item.as_string()) != std::string::npos;
        case Value::Kind::List:
            for (const Value& v : container.as_list()) {
                if (equals(v, item)) return true;
            }
            return false;
        case Value::Kind::Dict:
            return item.is_string() && container.as_dict().find(item.as_string()) != nullptr;
        default:
            throw EvalError("argument of type '" + py_type(container) + "' is not iterable");
    }
}

bool compare(const std::string& op, const Value& a, const Value& b) {
    if (op == "==") return equals(a, b);
    if (op == "!=") return !equals(a, b);
    if (op == "in") return contains(b, a);
    if (op == "not in") return !contains(b, a);
    const int c = order(a, b, op);
    if (op == "<") return c < 0;
    if (op == ">") return c > 0;
    if (op == "<=") return c <= 0;
    return c >= 0;
}

Value Expr::evaluate(Context& ctx) const {
    try {
        return eval(ctx);
    } catch (const EvalError& e) {
        fail(pos, e.what());
    }
}

Value Literal::eval(Context&) const {
    return value;
}

Value Name::eval(Context& ctx) const {
    return ctx.lookup(name);
}

Value ListExpr::eval(Context& ctx) const {
    List out;
    out.reserve(items.size());
    for (const auto& e : items) out.push_back(e->evaluate(ctx));
    return Value::list(std::move(out), tuple);
}

Value DictExpr::eval(Context& ctx) const {
    Dict d;
    for (const auto& [k, v] : items) {
        const Value key = k->evaluate(ctx);
        if (!key.is_string()) throw EvalError("dict keys must be strings, not " + py_type(key));
        d.set(key.as_string(), v->evaluate(ctx));
    }
    return Value::dict(std::move(d));
}

Value Attribute::eval(Context& ctx) const {
    const Value obj = object->evaluate(ctx);
    if (obj.is_undefined()) undefined_error(obj);
    return get_attribute(obj, name);
}

Value Subscript::eval(Context& ctx) const {
    const Value obj = object->evaluate(ctx);
    if (obj.is_undefined()) undefined_error(obj);
    return get_item(obj, index->evaluate(ctx));
}

Value Slice::eval(Context& ctx) const {
    const Value obj = object->evaluate(ctx);
    if (obj.is_undefined()) undefined_error(obj);
    auto part = [&](const ExprPtr& e) { return e ? e->evaluate(ctx) : Value::none(); };
    return slice(obj, part(start), part(stop), part(step));
}

static CallArgs evaluate_args(Context& ctx, const std::vector<ExprPtr>& args, const KeywordArgs& kwargs) {
    CallArgs out;
    for (const auto& a : args) out.positional.push_back(a->evaluate(ctx));
    for (const auto& [k, v] : kwargs) out.keyword.emplace_back(k, v->evaluate(ctx));
    return out;
}

Value CallExpr::eval(Context& ctx) const {
    const Value fn = callee->evaluate(ctx);
    if (fn.is_undefined()) undefined_error(fn);
    if (!fn.is_callable()) throw EvalError("'" + fn.type_name() + "' is not callable");
    CallArgs args = evaluate_args(ctx, this->args, kwargs);
    return fn.as_callable().fn(ctx, args);
}

Value FilterExpr::eval(Context& ctx) const {
    const Value v = operand->evaluate(ctx);
    CallArgs args = evaluate_args(ctx, filter.args, filter.kwargs);
    return apply_filter(ctx, filter.name, v, args);
}

Value TestExpr::eval(Context& ctx) const {
    const Value v = operand->evaluate(ctx);
    CallArgs a = evaluate_args(ctx, args, {});
    return Value(apply_test(ctx, name, v, a) != negated);
}

Value Unary::eval(Context& ctx) const {
    const Value v = operand->evaluate(ctx);
    if (op == "not") return Value(!v.truthy());
    if (v.is_undefined()) undefined_error(v);
    if (!v.is_number()) throw EvalError("bad operand type for unary " + op + ": '" + py_type(v) + "'");
    if (op == "+") return v.is_float() ? v : Value(v.as_int());
    return v.is_float() ? Value(-v.as_float()) : Value(-v.as_int());
}

Value Binary::eval(Context& ctx) const {
    const Value l = left->evaluate(ctx);
    if (op == "and") return l.truthy() ? right->evaluate(ctx) : l;
    if (op == "or") return l.truthy() ? l : right->evaluate(ctx);
    return arithmetic(op, l, right->evaluate(ctx));
}

Value Compare::eval(Context& ctx) const {
    Value l = first->evaluate(ctx);
    for (const auto& [op, e] : rest) {
        Value r = e->evaluate(ctx);
        if (!compare(op, l, r)) return Value(false);
        l = std::move(r);
    }
    return Value(true);
}

Value CondExpr::eval(Context& ctx) const {
    if (cond->evaluate(ctx).truthy()) return then->evaluate(ctx);
    if (otherwise) return otherwise->evaluate(ctx);
    return Value::undefined("the inline if-expression evaluated to false and has no else section");
}

}  // namespace niwa::text::jinja
