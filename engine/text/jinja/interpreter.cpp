// Statement execution and the render entry point. Scoping follows jinja2: `if` shares its
// parent's scope, every loop iteration starts a fresh one (a `set` inside a loop does not
// outlive the iteration), macros see their arguments and the template's top level.
#include "engine/text/jinja/interpreter.h"

#include "engine/text/jinja/builtins.h"
#include "engine/text/jinja/context.h"
#include "engine/text/jinja/lexer.h"
#include "engine/text/jinja/parser.h"
#include "engine/text/jinja/python_format.h"

namespace niwa::text::jinja {

Context::Context(Scope globals) {
    scopes_.push_back(std::make_shared<Scope>(std::move(globals)));
    scopes_.push_back(std::make_shared<Scope>());
}

Value Context::lookup(const std::string& name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
        auto found = (*it)->find(name);
        if (found != (*it)->end()) return found->second;
    }
    return Value::undefined("'" + name + "' is undefined");
}

std::vector<std::shared_ptr<Context::Scope>> Context::enter_macro() {
    std::vector<std::shared_ptr<Scope>> saved = scopes_;
    scopes_.resize(2);
    push_scope();
    return saved;
}

namespace {

// Runs `body` with output captured into a string.
std::string capture(Context& ctx, const Body& body) {
    std::string buffer;
    std::string* previous = ctx.redirect(&buffer);
    try {
        exec_body(body, ctx);
    } catch (...) {
        ctx.redirect(previous);
        throw;
    }
    ctx.redirect(previous);
    return buffer;
}

Value apply_filters(Context& ctx, const std::vector<FilterCall>& filters, Value v) {
    for (const FilterCall& f : filters) {
        CallArgs args;
        try {
            for (const auto& a : f.args) args.positional.push_back(a->evaluate(ctx));
            for (const auto& [k, e] : f.kwargs) args.keyword.emplace_back(k, e->evaluate(ctx));
            v = apply_filter(ctx, f.name, v, args);
        } catch (const EvalError& e) {
            fail(f.pos, e.what());
        }
    }
    return v;
}

void assign(Context& ctx, Pos pos, const std::vector<std::string>& targets, const Value& v) {
    if (targets.size() == 1) {
        ctx.set(targets[0], v);
        return;
    }
    if (!v.is_list())
        fail(pos, "cannot unpack " + v.type_name() + " into " + std::to_string(targets.size()) + " names");
    const List& items = v.as_list();
    if (items.size() != targets.size()) {
        fail(pos, std::string(items.size() > targets.size() ? "too many" : "not enough") +
                      " values to unpack (expected " + std::to_string(targets.size()) + ", got " +
                      std::to_string(items.size()) + ")");
    }
    for (size_t i = 0; i < items.size(); ++i) ctx.set(targets[i], items[i]);
}

}  // namespace

Flow exec_body(const Body& body, Context& ctx) {
    for (const StmtPtr& s : body) {
        const Flow f = s->exec(ctx);
        if (f != Flow::Normal) return f;
    }
    return Flow::Normal;
}

Flow TextStmt::exec(Context& ctx) const {
    ctx.out() += text;
    return Flow::Normal;
}

Flow OutputStmt::exec(Context& ctx) const {
    ctx.out() += py_str(expr->evaluate(ctx));
    return Flow::Normal;
}

Flow IfStmt::exec(Context& ctx) const {
    for (const auto& [cond, body] : branches) {
        if (cond->evaluate(ctx).truthy()) return exec_body(body, ctx);
    }
    return exec_body(otherwise, ctx);
}

Flow ForStmt::exec(Context& ctx) const {
    const Value seq = iterable->evaluate(ctx);
    List items;
    try {
        items = iterate(seq);
    } catch (const EvalError& e) {
        fail(iterable->pos, e.what());
    }
    if (filter) {
        List kept;
        for (Value& item : items) {
            ctx.push_scope();
            assign(ctx, pos, targets, item);
            const bool keep = filter->evaluate(ctx).truthy();
            ctx.pop_scope();
            if (keep) kept.push_back(std::move(item));
        }
        items = std::move(kept);
    }
    if (items.empty()) return exec_body(otherwise, ctx);

    const auto n = static_cast<int64_t>(items.size());
    for (int64_t i = 0; i < n; ++i) {
        Dict loop;
        loop.set("index", Value(i + 1));
        loop.set("index0", Value(i));
        loop.set("revindex", Value(n - i));
        loop.set("revindex0", Value(n - i - 1));
        loop.set("first", Value(i == 0));
        loop.set("last", Value(i == n - 1));
        loop.set("length", Value(n));
        loop.set("depth", Value(1));
        loop.set("depth0", Value(0));
        loop.set("previtem",
                 i > 0 ? items[static_cast<size_t>(i - 1)] : Value::undefined("there is no previous item"));
        loop.set("nextitem",
                 i + 1 < n ? items[static_cast<size_t>(i + 1)] : Value::undefined("there is no next item"));
        loop.set("cycle", Value::callable("cycle", [i](Context&, CallArgs& args) {
                     if (args.positional.empty()) throw EvalError("no items for cycling given");
                     return args.positional[static_cast<size_t>(i) % args.positional.size()];
                 }));
        ctx.push_scope();
        assign(ctx, pos, targets, items[static_cast<size_t>(i)]);
        ctx.set("loop", Value::dict(std::move(loop)));
        Flow f;
        try {
            f = exec_body(body, ctx);
        } catch (...) {
            ctx.pop_scope();
            throw;
        }
        ctx.pop_scope();
        if (f == Flow::Break) break;
    }
    return Flow::Normal;
}

Flow SetStmt::exec(Context& ctx) const {
    const Value v = value->evaluate(ctx);
    if (attribute.empty()) {
        assign(ctx, pos, targets, v);
        return Flow::Normal;
    }
    const Value target = ctx.lookup(targets[0]);
    if (!target.is_namespace())
        fail(pos, "cannot assign attribute on non-namespace object '" + targets[0] + "'");
    target.mutable_dict().set(attribute, v);
    return Flow::Normal;
}

Flow SetBlockStmt::exec(Context& ctx) const {
    ctx.set(target, apply_filters(ctx, filters, Value(capture(ctx, body))));
    return Flow::Normal;
}

Flow FilterBlockStmt::exec(Context& ctx) const {
    ctx.out() += py_str(apply_filters(ctx, filters, Value(capture(ctx, body))));
    return Flow::Normal;
}

Flow PlainBlockStmt::exec(Context& ctx) const {
    return exec_body(body, ctx);
}

Flow LoopControlStmt::exec(Context&) const {
    return flow;
}

Flow MacroStmt::exec(Context& ctx) const {
    const MacroStmt* self = this;
    auto call = [self](Context& c, CallArgs& args) -> Value {
        if (args.positional.size() > self->params.size()) {
            throw EvalError("macro '" + self->name + "' takes not more than " +
                            std::to_string(self->params.size()) + " argument(s)");
        }
        for (const auto& [key, v] : args.keyword) {
            bool known = false;
            for (const auto& p : self->params) known = known || p.first == key;
            if (!known) throw EvalError("macro '" + self->name + "' takes no keyword argument '" + key + "'");
        }
        auto saved = c.enter_macro();
        try {
            for (size_t i = 0; i < self->params.size(); ++i) {
                const auto& [param, def] = self->params[i];
                Value v;
                bool given = false;
                if (i < args.positional.size()) {
                    v = args.positional[i];
                    given = true;
                }
                for (const auto& [key, kv] : args.keyword) {
                    if (key != param) continue;
                    if (given)
                        throw EvalError("macro '" + self->name + "' got multiple values for argument '" +
                                        key + "'");
                    v = kv;
                    given = true;
                }
                if (!given)
                    v = def ? def->evaluate(c)
                            : Value::undefined("parameter '" + param + "' was not provided");
                c.set(param, v);
            }
            Value result(capture(c, self->body));
            c.leave_macro(std::move(saved));
            return result;
        } catch (...) {
            c.leave_macro(std::move(saved));
            throw;
        }
    };
    ctx.set(name, Value::callable(name, call, true));
    return Flow::Normal;
}

Template::Template(const std::string& source) : body_(parse(tokenize(source))) {}

std::string Template::render(const Dict& variables) const {
    Context::Scope globals = make_globals();
    for (const auto& [k, v] : variables.items()) globals[k] = v;
    Context ctx(std::move(globals));
    std::string out;
    ctx.redirect(&out);
    exec_body(body_, ctx);
    return out;
}

}  // namespace niwa::text::jinja
