// Recursive descent over the token list; one function per precedence level.
#include "engine/text/jinja/parser.h"

#include <initializer_list>

#include "engine/text/jinja/builtins.h"

namespace niwa::text::jinja {
namespace {

class Parser {
public:
    explicit Parser(const std::vector<Token>& tokens) : t_(tokens) {}

    Body parse_template() {
        Body body = parse_body({});
        if (cur().type != Tok::Eof) fail(cur().pos, "unexpected '" + cur().text + "'");
        return body;
    }

private:
    const Token& cur() const { return t_[i_]; }
    const Token& peek(size_t n = 1) const { return t_[std::min(i_ + n, t_.size() - 1)]; }
    const Token& next() { return t_[i_ < t_.size() - 1 ? i_++ : i_]; }

    bool is_op(const char* op) const { return cur().type == Tok::Op && cur().text == op; }
    bool is_name(const char* name) const { return cur().type == Tok::Name && cur().text == name; }
    bool skip_op(const char* op) {
        if (!is_op(op)) return false;
        ++i_;
        return true;
    }
    bool skip_name(const char* name) {
        if (!is_name(name)) return false;
        ++i_;
        return true;
    }

    static std::string describe(const Token& t) {
        switch (t.type) {
            case Tok::Eof:
                return "end of template";
            case Tok::BlockEnd:
                return "'%}'";
            case Tok::VarEnd:
                return "'}}'";
            case Tok::String:
                return "string literal";
            default:
                return "'" + t.text + "'";
        }
    }

    void expect_op(const char* op) {
        if (!skip_op(op)) fail(cur().pos, std::string("expected '") + op + "', found " + describe(cur()));
    }
    std::string expect_name(const char* what) {
        if (cur().type != Tok::Name)
            fail(cur().pos, std::string("expected ") + what + ", found " + describe(cur()));
        return next().text;
    }
    void expect_block_end(const std::string& tag) {
        if (cur().type != Tok::BlockEnd)
            fail(cur().pos, "expected '%}' to close '" + tag + "', found " + describe(cur()));
        ++i_;
    }

    // Statements until `{% <one of end_tags>`; stops with cur() at that tag's name.
    Body parse_body(std::initializer_list<const char*> end_tags) {
        Body body;
        while (true) {
            const Token& t = cur();
            switch (t.type) {
                case Tok::Eof:
                    // The last end tag is the closing one ("endfor" after "else").
                    if (end_tags.size() != 0)
                        fail(t.pos, std::string("unexpected end of template: expected '{% ") +
                                        *(end_tags.end() - 1) + " %}'");
                    return body;
                case Tok::Text:
                    body.push_back(std::make_unique<TextStmt>(t.pos, t.text));
                    ++i_;
                    break;
                case Tok::VarBegin: {
                    auto out = std::make_unique<OutputStmt>(t.pos);
                    ++i_;
                    out->expr = parse_tuple_expr();
                    if (cur().type != Tok::VarEnd) fail(cur().pos, "expected '}}', found " + describe(cur()));
                    ++i_;
                    body.push_back(std::move(out));
                    break;
                }
                case Tok::BlockBegin: {
                    const Token& tag = peek();
                    if (tag.type != Tok::Name) fail(tag.pos, "expected a tag name after '{%'");
                    for (const char* end : end_tags) {
                        if (tag.text == end) {
                            ++i_;
                            return body;
                        }
                    }
                    ++i_;
                    body.push_back(parse_statement());
                    break;
                }
                default:
                    fail(t.pos, "unexpected " + describe(t));
            }
        }
    }

    StmtPtr parse_statement() {
        const Token& tag = next();
        const std::string& name = tag.text;
        if (name == "if") return parse_if(tag.pos);
        if (name == "for") return parse_for(tag.pos);
        if (name == "set") return parse_set(tag.pos);
        if (name == "macro") return parse_macro(tag.pos);
        if (name == "filter") return parse_filter_block(tag.pos);
        if (name == "generation") {
            auto s = std::make_unique<PlainBlockStmt>(tag.pos);
            expect_block_end(name);
            s->body = parse_body({"endgeneration"});
            close_tag("endgeneration");
            return s;
        }
        if (name == "break" || name == "continue") {
            expect_block_end(name);
            return std::make_unique<LoopControlStmt>(tag.pos, name == "break" ? Flow::Break : Flow::Continue);
        }
        fail(tag.pos, "unknown or unsupported tag '" + name + "'");
    }

    void close_tag(const char* name) {
        ++i_;  // the end tag's name
        expect_block_end(name);
    }

    StmtPtr parse_if(Pos pos) {
        auto s = std::make_unique<IfStmt>(pos);
        while (true) {
            ExprPtr cond = parse_expression();
            expect_block_end("if");
            Body body = parse_body({"elif", "else", "endif"});
            s->branches.emplace_back(std::move(cond), std::move(body));
            const std::string tag = next().text;
            if (tag == "elif") continue;
            if (tag == "else") {
                expect_block_end("else");
                s->otherwise = parse_body({"endif"});
                close_tag("endif");
            } else {
                expect_block_end("endif");
            }
            return s;
        }
    }

    std::vector<std::string> parse_targets() {
        std::vector<std::string> names;
        const bool paren = skip_op("(");
        do {
            names.push_back(expect_name("a variable name"));
        } while (skip_op(",") && cur().type == Tok::Name);
        if (paren) expect_op(")");
        return names;
    }

    StmtPtr parse_for(Pos pos) {
        auto s = std::make_unique<ForStmt>(pos);
        s->targets = parse_targets();
        if (!skip_name("in")) fail(cur().pos, "expected 'in' in for loop, found " + describe(cur()));
        s->iterable = parse_tuple_expr(false);
        if (skip_name("if")) s->filter = parse_expression();
        if (is_name("recursive")) fail(cur().pos, "recursive loops are not supported");
        expect_block_end("for");
        s->body = parse_body({"else", "endfor"});
        if (next().text == "else") {
            expect_block_end("else");
            s->otherwise = parse_body({"endfor"});
            close_tag("endfor");
        } else {
            expect_block_end("endfor");
        }
        return s;
    }

    StmtPtr parse_set(Pos pos) {
        const std::string first = expect_name("a variable name");
        if (skip_op(".")) {
            auto s = std::make_unique<SetStmt>(pos);
            s->targets = {first};
            s->attribute = expect_name("an attribute name");
            expect_op("=");
            s->value = parse_tuple_expr();
            expect_block_end("set");
            return s;
        }
        if (is_op("=") || is_op(",")) {
            auto s = std::make_unique<SetStmt>(pos);
            s->targets = {first};
            while (skip_op(",")) s->targets.push_back(expect_name("a variable name"));
            expect_op("=");
            s->value = parse_tuple_expr();
            expect_block_end("set");
            return s;
        }
        auto s = std::make_unique<SetBlockStmt>(pos);
        s->target = first;
        while (skip_op("|")) s->filters.push_back(parse_filter_call());
        expect_block_end("set");
        s->body = parse_body({"endset"});
        close_tag("endset");
        return s;
    }

    StmtPtr parse_macro(Pos pos) {
        auto s = std::make_unique<MacroStmt>(pos);
        s->name = expect_name("a macro name");
        expect_op("(");
        while (!is_op(")")) {
            std::string param = expect_name("a parameter name");
            ExprPtr def;
            if (skip_op("=")) def = parse_expression();
            s->params.emplace_back(std::move(param), std::move(def));
            if (!skip_op(",")) break;
        }
        expect_op(")");
        expect_block_end("macro");
        s->body = parse_body({"endmacro"});
        close_tag("endmacro");
        return s;
    }

    StmtPtr parse_filter_block(Pos pos) {
        auto s = std::make_unique<FilterBlockStmt>(pos);
        do {
            s->filters.push_back(parse_filter_call());
        } while (skip_op("|"));
        expect_block_end("filter");
        s->body = parse_body({"endfilter"});
        close_tag("endfilter");
        return s;
    }

    // --- Expressions ---------------------------------------------------------------------

    // An expression that may be a bare tuple (`a, b`), as in `{{ }}`, `set` and `for`.
    ExprPtr parse_tuple_expr(bool with_condexpr = true) {
        const Pos pos = cur().pos;
        ExprPtr first = with_condexpr ? parse_expression() : parse_or();
        if (!is_op(",")) return first;
        auto tuple = std::make_unique<ListExpr>(pos);
        tuple->tuple = true;
        tuple->items.push_back(std::move(first));
        while (skip_op(",")) {
            if (cur().type == Tok::BlockEnd || cur().type == Tok::VarEnd || is_op(")") || is_name("if"))
                break;
            tuple->items.push_back(with_condexpr ? parse_expression() : parse_or());
        }
        return tuple;
    }

    ExprPtr parse_expression() {
        ExprPtr expr = parse_or();
        while (is_name("if")) {
            auto c = std::make_unique<CondExpr>(cur().pos);
            ++i_;
            c->cond = parse_or();
            if (skip_name("else")) c->otherwise = parse_expression();
            c->then = std::move(expr);
            expr = std::move(c);
        }
        return expr;
    }

    ExprPtr binary(const std::string& op, ExprPtr left, ExprPtr right, Pos pos) {
        auto b = std::make_unique<Binary>(pos);
        b->op = op;
        b->left = std::move(left);
        b->right = std::move(right);
        return b;
    }

    ExprPtr parse_or() {
        ExprPtr left = parse_and();
        while (is_name("or")) {
            const Pos pos = next().pos;
            left = binary("or", std::move(left), parse_and(), pos);
        }
        return left;
    }

    ExprPtr parse_and() {
        ExprPtr left = parse_not();
        while (is_name("and")) {
            const Pos pos = next().pos;
            left = binary("and", std::move(left), parse_not(), pos);
        }
        return left;
    }

    ExprPtr parse_not() {
        if (is_name("not")) {
            auto u = std::make_unique<Unary>(next().pos);
            u->op = "not";
            u->operand = parse_not();
            return u;
        }
        return parse_compare();
    }

    ExprPtr parse_compare() {
        const Pos pos = cur().pos;
        ExprPtr first = parse_math1();
        std::vector<std::pair<std::string, ExprPtr>> rest;
        while (true) {
            std::string op;
            if (cur().type == Tok::Op && (cur().text == "==" || cur().text == "!=" || cur().text == "<" ||
                                          cur().text == ">" || cur().text == "<=" || cur().text == ">=")) {
                op = next().text;
            } else if (is_name("in")) {
                ++i_;
                op = "in";
            } else if (is_name("not") && peek().type == Tok::Name && peek().text == "in") {
                i_ += 2;
                op = "not in";
            } else {
                break;
            }
            rest.emplace_back(op, parse_math1());
        }
        if (rest.empty()) return first;
        auto c = std::make_unique<Compare>(pos);
        c->first = std::move(first);
        c->rest = std::move(rest);
        return c;
    }

    ExprPtr parse_math1() {
        ExprPtr left = parse_concat();
        while (is_op("+") || is_op("-")) {
            const Token& op = next();
            left = binary(op.text, std::move(left), parse_concat(), op.pos);
        }
        return left;
    }

    ExprPtr parse_concat() {
        ExprPtr left = parse_math2();
        while (is_op("~")) {
            const Pos pos = next().pos;
            left = binary("~", std::move(left), parse_math2(), pos);
        }
        return left;
    }

    ExprPtr parse_math2() {
        ExprPtr left = parse_pow();
        while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
            const Token& op = next();
            left = binary(op.text, std::move(left), parse_pow(), op.pos);
        }
        return left;
    }

    ExprPtr parse_pow() {
        ExprPtr left = parse_unary(true);
        while (is_op("**")) {
            const Pos pos = next().pos;
            left = binary("**", std::move(left), parse_unary(true), pos);
        }
        return left;
    }

    ExprPtr parse_unary(bool with_filter) {
        ExprPtr node;
        if (is_op("-") || is_op("+")) {
            auto u = std::make_unique<Unary>(cur().pos);
            u->op = next().text;
            u->operand = parse_unary(false);
            node = std::move(u);
        } else {
            node = parse_primary();
        }
        node = parse_postfix(std::move(node));
        if (with_filter) node = parse_filter_expr(std::move(node));
        return node;
    }

    ExprPtr parse_primary() {
        const Token& t = cur();
        switch (t.type) {
            case Tok::Name: {
                ++i_;
                if (t.text == "true" || t.text == "True")
                    return std::make_unique<Literal>(t.pos, Value(true));
                if (t.text == "false" || t.text == "False")
                    return std::make_unique<Literal>(t.pos, Value(false));
                if (t.text == "none" || t.text == "None")
                    return std::make_unique<Literal>(t.pos, Value::none());
                return std::make_unique<Name>(t.pos, t.text);
            }
            case Tok::String: {
                std::string s;
                while (cur().type == Tok::String) s += next().text;  // "a" "b" is "ab"
                return std::make_unique<Literal>(t.pos, Value(std::move(s)));
            }
            case Tok::Int:
                ++i_;
                return std::make_unique<Literal>(t.pos, Value(t.int_value));
            case Tok::Float:
                ++i_;
                return std::make_unique<Literal>(t.pos, Value(t.float_value));
            case Tok::Op:
                if (t.text == "(") return parse_parenthesized();
                if (t.text == "[") return parse_list();
                if (t.text == "{") return parse_dict();
                break;
            default:
                break;
        }
        fail(t.pos, "unexpected " + describe(t));
    }

    ExprPtr parse_parenthesized() {
        const Pos pos = next().pos;
        if (skip_op(")")) {
            auto empty = std::make_unique<ListExpr>(pos);
            empty->tuple = true;
            return empty;
        }
        ExprPtr first = parse_expression();
        if (skip_op(")")) return first;
        auto tuple = std::make_unique<ListExpr>(pos);
        tuple->tuple = true;
        tuple->items.push_back(std::move(first));
        while (skip_op(",")) {
            if (is_op(")")) break;
            tuple->items.push_back(parse_expression());
        }
        expect_op(")");
        return tuple;
    }

    ExprPtr parse_list() {
        auto list = std::make_unique<ListExpr>(next().pos);
        while (!is_op("]")) {
            list->items.push_back(parse_expression());
            if (!skip_op(",")) break;
        }
        expect_op("]");
        return list;
    }

    ExprPtr parse_dict() {
        auto dict = std::make_unique<DictExpr>(next().pos);
        while (!is_op("}")) {
            ExprPtr key = parse_expression();
            expect_op(":");
            dict->items.emplace_back(std::move(key), parse_expression());
            if (!skip_op(",")) break;
        }
        expect_op("}");
        return dict;
    }

    ExprPtr parse_postfix(ExprPtr node) {
        while (true) {
            if (is_op(".")) {
                const Pos pos = next().pos;
                if (cur().type == Tok::Int) {
                    auto s = std::make_unique<Subscript>(pos);
                    s->object = std::move(node);
                    s->index = std::make_unique<Literal>(cur().pos, Value(next().int_value));
                    node = std::move(s);
                    continue;
                }
                auto a = std::make_unique<Attribute>(pos);
                a->object = std::move(node);
                a->name = expect_name("an attribute name");
                node = std::move(a);
            } else if (is_op("[")) {
                node = parse_subscript(std::move(node));
            } else if (is_op("(")) {
                node = parse_call(std::move(node));
            } else {
                return node;
            }
        }
    }

    ExprPtr parse_subscript(ExprPtr object) {
        const Pos pos = next().pos;
        ExprPtr start;
        if (!is_op(":")) {
            start = parse_expression();
            if (skip_op("]")) {
                auto s = std::make_unique<Subscript>(pos);
                s->object = std::move(object);
                s->index = std::move(start);
                return s;
            }
        }
        auto s = std::make_unique<Slice>(pos);
        s->object = std::move(object);
        s->start = std::move(start);
        expect_op(":");
        if (!is_op(":") && !is_op("]")) s->stop = parse_expression();
        if (skip_op(":") && !is_op("]")) s->step = parse_expression();
        expect_op("]");
        return s;
    }

    void parse_args(std::vector<ExprPtr>& args, KeywordArgs& kwargs) {
        expect_op("(");
        while (!is_op(")")) {
            if (is_op("*") || is_op("**")) fail(cur().pos, "*args and **kwargs in calls are not supported");
            if (cur().type == Tok::Name && peek().type == Tok::Op && peek().text == "=") {
                std::string key = next().text;
                ++i_;
                kwargs.emplace_back(std::move(key), parse_expression());
            } else {
                if (!kwargs.empty()) fail(cur().pos, "positional argument follows keyword argument");
                args.push_back(parse_expression());
            }
            if (!skip_op(",")) break;
        }
        expect_op(")");
    }

    ExprPtr parse_call(ExprPtr callee) {
        auto c = std::make_unique<CallExpr>(cur().pos);
        c->callee = std::move(callee);
        parse_args(c->args, c->kwargs);
        return c;
    }

    FilterCall parse_filter_call() {
        FilterCall f;
        f.pos = cur().pos;
        f.name = expect_name("a filter name");
        if (!has_filter(f.name)) fail(f.pos, "no filter named '" + f.name + "'");
        if (is_op("(")) parse_args(f.args, f.kwargs);
        return f;
    }

    ExprPtr parse_filter_expr(ExprPtr node) {
        while (true) {
            if (is_op("|")) {
                auto f = std::make_unique<FilterExpr>(next().pos);
                f->operand = std::move(node);
                f->filter = parse_filter_call();
                node = std::move(f);
            } else if (is_name("is")) {
                node = parse_test(std::move(node));
            } else if (is_op("(")) {
                node = parse_call(std::move(node));
            } else {
                return node;
            }
        }
    }

    ExprPtr parse_test(ExprPtr operand) {
        auto t = std::make_unique<TestExpr>(next().pos);
        t->operand = std::move(operand);
        t->negated = skip_name("not");
        const Pos name_pos = cur().pos;
        t->name = expect_name("a test name");
        if (!has_test(t->name)) fail(name_pos, "no test named '" + t->name + "'");
        if (is_op("(")) {
            KeywordArgs kwargs;
            parse_args(t->args, kwargs);
            if (!kwargs.empty()) fail(name_pos, "tests take no keyword arguments");
        } else if ((cur().type == Tok::Name || cur().type == Tok::String || cur().type == Tok::Int ||
                    cur().type == Tok::Float || is_op("[") || is_op("{")) &&
                   !is_name("else") && !is_name("or") && !is_name("and")) {
            if (is_name("is")) fail(cur().pos, "tests cannot be chained with 'is'");
            t->args.push_back(parse_postfix(parse_primary()));
        }
        return t;
    }

    const std::vector<Token>& t_;
    size_t i_ = 0;
};

}  // namespace

Body parse(const std::vector<Token>& tokens) {
    return Parser(tokens).parse_template();
}

}  // namespace niwa::text::jinja
