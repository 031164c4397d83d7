// The syntax tree of a template. Expressions evaluate to values, statements write output;
// both keep the position of their first token for error messages. Evaluation lives in
// evaluate.cpp (expressions) and interpreter.cpp (statements).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/text/jinja/error.h"
#include "engine/text/jinja/value.h"

namespace niwa::text::jinja {

class Context;

struct Expr {
    explicit Expr(Pos p) : pos(p) {}
    virtual ~Expr() = default;
    // Evaluates, turning a position-less EvalError from below into a TemplateError here.
    Value evaluate(Context& ctx) const;

    Pos pos;

protected:
    virtual Value eval(Context& ctx) const = 0;
};
using ExprPtr = std::unique_ptr<Expr>;
using KeywordArgs = std::vector<std::pair<std::string, ExprPtr>>;

struct Literal : Expr {
    Literal(Pos p, Value v) : Expr(p), value(std::move(v)) {}
    Value eval(Context& ctx) const override;
    Value value;
};

struct Name : Expr {
    Name(Pos p, std::string n) : Expr(p), name(std::move(n)) {}
    Value eval(Context& ctx) const override;
    std::string name;
};

struct ListExpr : Expr {
    using Expr::Expr;
    Value eval(Context& ctx) const override;
    std::vector<ExprPtr> items;
    bool tuple = false;
};

struct DictExpr : Expr {
    using Expr::Expr;
    Value eval(Context& ctx) const override;
    std::vector<std::pair<ExprPtr, ExprPtr>> items;
};

struct Attribute : Expr {
    using Expr::Expr;
    Value eval(Context& ctx) const override;
    ExprPtr object;
    std::string name;
};

struct Subscript : Expr {
    using Expr::Expr;
    Value eval(Context& ctx) const override;
    ExprPtr object;
    ExprPtr index;
};

struct Slice : Expr {
    using Expr::Expr;
    Value eval(Context& ctx) const override;
    ExprPtr object;
    ExprPtr start, stop, step;  // each may be null
};

struct CallExpr : Expr {
    using Expr::Expr;
    Value eval(Context& ctx) const override;
    ExprPtr callee;
    std::vector<ExprPtr> args;
    KeywordArgs kwargs;
};

struct FilterCall {
    Pos pos;
    std::string name;
    std::vector<ExprPtr> args;
    KeywordArgs kwargs;
};

struct FilterExpr : Expr {
    using Expr::Expr;
    Value eval(Context& ctx) const override;
    ExprPtr operand;
    FilterCall filter;
};

struct TestExpr : Expr {
    using Expr::Expr;
    Value eval(Context& ctx) const override;
    ExprPtr operand;
    std::string name;
    std::vector<ExprPtr> args;
    bool negated = false;
};

struct Unary : Expr {
    using Expr::Expr;
    Value eval(Context& ctx) const override;
    std::string op;  // "-", "+", "not"
    ExprPtr operand;
};

struct Binary : Expr {
    using Expr::Expr;
    Value eval(Context& ctx) const override;
    std::string op;  // arithmetic, "~", "and", "or"
    ExprPtr left, right;
};

// a < b <= c ...: Python's chained comparison, also "in" and "not in".
struct Compare : Expr {
    using Expr::Expr;
    Value eval(Context& ctx) const override;
    ExprPtr first;
    std::vector<std::pair<std::string, ExprPtr>> rest;
};

struct CondExpr : Expr {
    using Expr::Expr;
    Value eval(Context& ctx) const override;
    ExprPtr cond, then, otherwise;  // otherwise may be null: undefined
};

// --- Statements ----------------------------------------------------------------------------

enum class Flow { Normal, Break, Continue };

struct Stmt {
    explicit Stmt(Pos p) : pos(p) {}
    virtual ~Stmt() = default;
    virtual Flow exec(Context& ctx) const = 0;
    Pos pos;
};
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

Flow exec_body(const Body& body, Context& ctx);

struct TextStmt : Stmt {
    TextStmt(Pos p, std::string t) : Stmt(p), text(std::move(t)) {}
    Flow exec(Context& ctx) const override;
    std::string text;
};

struct OutputStmt : Stmt {
    using Stmt::Stmt;
    Flow exec(Context& ctx) const override;
    ExprPtr expr;
};

struct IfStmt : Stmt {
    using Stmt::Stmt;
    Flow exec(Context& ctx) const override;
    std::vector<std::pair<ExprPtr, Body>> branches;  // if, elif...
    Body otherwise;
};

struct ForStmt : Stmt {
    using Stmt::Stmt;
    Flow exec(Context& ctx) const override;
    std::vector<std::string> targets;  // more than one: unpack each item
    ExprPtr iterable;
    ExprPtr filter;  // `for x in xs if cond`; may be null
    Body body;
    Body otherwise;
};

struct SetStmt : Stmt {
    using Stmt::Stmt;
    Flow exec(Context& ctx) const override;
    std::vector<std::string> targets;  // `set a, b = ...` unpacks
    std::string attribute;             // `set ns.attr = ...`: targets[0] is the namespace
    ExprPtr value;
};

struct SetBlockStmt : Stmt {
    using Stmt::Stmt;
    Flow exec(Context& ctx) const override;
    std::string target;
    std::vector<FilterCall> filters;
    Body body;
};

struct MacroStmt : Stmt {
    using Stmt::Stmt;
    Flow exec(Context& ctx) const override;
    std::string name;
    std::vector<std::pair<std::string, ExprPtr>> params;  // default may be null
    Body body;
};

struct FilterBlockStmt : Stmt {
    using Stmt::Stmt;
    Flow exec(Context& ctx) const override;
    std::vector<FilterCall> filters;
    Body body;
};

// The body of transformers' `{% generation %}` block, which only marks assistant text.
struct PlainBlockStmt : Stmt {
    using Stmt::Stmt;
    Flow exec(Context& ctx) const override;
    Body body;
};

struct LoopControlStmt : Stmt {
    LoopControlStmt(Pos p, Flow f) : Stmt(p), flow(f) {}
    Flow exec(Context& ctx) const override;
    Flow flow;
};

}  // namespace niwa::text::jinja
