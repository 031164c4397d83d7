// Property tests of the output parser: generated outputs with a known reading, parsed whole, byte by
// byte and at random splits; the streamed deltas must add up to the whole result, and that to the
// reading the output was built from.
#include <QtTest>

#include <random>

#include "engine/text/output_parser.h"

using niwa::text::OutputParser;
using niwa::text::ParserDelta;
using niwa::text::ParserOptions;
using niwa::text::ToolCall;
using nlohmann::json;

namespace {

struct Reading {
    std::string reasoning;
    std::string content;
    std::vector<std::pair<std::string, std::string>> calls;  // name, arguments
    std::vector<std::string> warnings;                       // a word each warning must contain
};

struct Case {
    std::string output;
    ParserOptions options;
    Reading expected;
};

// Pieces of text with multibyte characters and everything that looks like a tag but is not one.
const std::vector<std::string> kReasoningPieces = {
    "The user asks", " about Tokyo.", "\n",    "東京の天気", "？",        "🙂",      "é",
    "<b>",           "x < y > z",     "</thi", "nk",         "< /think>", "</think >", "<think>",
    "<tool_call>",   "</tool_call>",  "<tool", "\n\n",       "  ",        "a",
};
const std::vector<std::string> kContentPieces = {
    "Sure",
    ", here",
    "\n",
    "日本語",
    "です。",
    "🙂",
    "<tool_caller>",
    "<tool_call >",
    "</tool_call>",
    "<tool",
    "_call",
    "</think>",
    "<function=f>",
    "<",
    ">",
    "\n\n",
    " ",
    "Ω",
    "done",
};
const std::vector<std::string> kStringValues = {
    "Tokyo",
    "東京",
    "if (a < b && c > d) { return x<y>; }",
    "s = '</parameter'",
    "</parameters>",
    "t = '</parameter>' + u",
    "\nindented",
    "ends with newline\n",
    "<parameter=k>",
    "",
    "two\nlines",
    "42",
};
const std::vector<std::string> kBadBlocks = {
    "<tool_call>\n<parameter=a>\n1\n</parameter>\n</tool_call>",
    "<tool_call>\n<function=f>\n<parameter=a>\n1\n</function>\n</parameter>\n</tool_call>",
    "<tool_call>oops</tool_call>",
    "<tool_call>\n<function=f>\n</function>\ntrailing\n</tool_call>",
};
const std::vector<std::string> kSpaces = {"\n", "\n\n", " ", "\n \n"};

json tools() {
    return json::parse(
        R"([{"type": "function", "function": {"name": "search", "parameters": {"type": "object",
        "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}, "exact": {"type": "boolean"}}}}},
        {"type": "function", "function": {"name": "run", "parameters": {"type": "object",
        "properties": {"code": {"type": "string"}}}}}])");
}

class Generator {
public:
    explicit Generator(uint64_t seed) : rng_(seed) {}

    Case next() {
        Case c;
        c.options = {
            .reasoning = chance(3, 4), .tools = tools(), .parse_tool_calls = chance(4, 5), .id_seed = 9};
        if (c.options.reasoning) {
            // Starts and ends with a letter so the template's newlines are the only ones stripped.
            do c.expected.reasoning = "r" + text(kReasoningPieces, pick(0, 8)) + "r";
            while (c.expected.reasoning.find("</think>") != std::string::npos);
            c.output = c.expected.reasoning;
            if (chance(1, 8)) {
                c.expected.warnings.push_back("</think>");
                return c;
            }
            c.output += "\n</think>\n\n";
        }
        if (c.options.parse_tool_calls)
            add_blocks(c);
        else
            add_plain(c);
        return c;
    }

private:
    void add_plain(Case& c) {
        std::string s = text(kContentPieces, pick(0, 6)) + block();  // blocks stay text here
        c.output += s;
        c.expected.content = s;
    }

    // Items: content (no space at either end), calls and malformed blocks; whitespace only next to calls.
    void add_blocks(Case& c) {
        enum Kind { Content, Call, Bad };
        Kind previous = Bad;
        bool first = true;
        for (int n = pick(0, 5); n > 0; --n) {
            Kind kind = static_cast<Kind>(pick(0, 2));
            if (kind == Content && previous == Content && !first) kind = Call;
            if (!first && (kind == Call || previous == Call)) c.output += one(kSpaces);
            if (kind == Content) {
                std::string s = content_text();
                c.output += s;
                c.expected.content += s;
            } else if (kind == Call) {
                add_call(c);
            } else {
                std::string s = one(kBadBlocks);
                c.output += s;
                c.expected.content += s;
                c.expected.warnings.push_back("malformed");
            }
            previous = kind;
            first = false;
        }
        if (chance(1, 6)) {
            if (previous == Call) c.output += one(kSpaces);
            std::string s = "<tool_call>\n<function=run>\n<parameter=code>\n" + one(kStringValues);
            c.output += s;
            c.expected.content += s;
            c.expected.warnings.push_back("unterminated");
        } else if (previous == Call && chance(1, 2)) {
            c.output += one(kSpaces);
        }
    }

    void add_call(Case& c) {
        std::string name = one({"search", "run", "free"});
        nlohmann::ordered_json args = nlohmann::ordered_json::object();
        std::string xml = "<tool_call>\n<function=" + name + ">\n";
        for (int n = pick(0, 3); n > 0; --n) {
            auto [key, raw, value] = parameter(name);
            if (args.contains(key)) continue;
            args[key] = value;
            xml += "<parameter=" + key + ">\n" + raw + "\n</parameter>\n";
        }
        c.output += xml + "</function>\n</tool_call>";
        c.expected.calls.emplace_back(name, args.dump());
    }

    std::tuple<std::string, std::string, nlohmann::ordered_json> parameter(const std::string& tool) {
        if (tool == "run") {
            std::string code = one(kStringValues) + one(kStringValues);
            return {"code", code, code};
        }
        if (tool == "search") {
            switch (pick(0, 2)) {
                case 0: {
                    std::string q = one(kStringValues);
                    return {"query", q, q};
                }
                case 1: {
                    int n = pick(-5, 500);
                    return {"limit", std::to_string(n), n};
                }
                default: {
                    bool b = chance(1, 2);
                    return {"exact", b ? "true" : "false", b};
                }
            }
        }
        // No schema: numbers are guessed as numbers, words stay text.
        if (chance(1, 2)) {
            int n = pick(0, 99);
            return {"k" + std::to_string(pick(0, 3)), std::to_string(n), n};
        }
        std::string word = one({"Tokyo", "東京", "a < b", "null-ish", "x</parameter"});
        return {"w" + std::to_string(pick(0, 3)), word, word};
    }

    std::string content_text() {
        std::string s;
        do s = "c" + text(kContentPieces, pick(0, 6)) + "c";
        while (s.find("<tool_call>") != std::string::npos);
        return s;
    }

    std::string block() { return chance(1, 3) ? one(kBadBlocks) : ""; }

    std::string text(const std::vector<std::string>& pieces, int n) {
        std::string s;
        while (n-- > 0) s += one(pieces);
        return s;
    }

    const std::string& one(const std::vector<std::string>& v) {
        return v[pick(0, static_cast<int>(v.size()) - 1)];
    }
    std::string one(std::initializer_list<const char*> v) {
        return *(v.begin() + pick(0, static_cast<int>(v.size()) - 1));
    }
    int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
    bool chance(int num, int den) { return pick(1, den) <= num; }

    std::mt19937_64 rng_;
};

bool valid_utf8(std::string_view s) {
    for (size_t i = 0; i < s.size();) {
        auto c = static_cast<unsigned char>(s[i]);
        size_t len = c < 0x80             ? 1
                     : (c & 0xE0) == 0xC0 ? 2
                     : (c & 0xF0) == 0xE0 ? 3
                     : (c & 0xF8) == 0xF0 ? 4
                                          : 0;
        if (len == 0 || i + len > s.size()) return false;
        for (size_t k = 1; k < len; ++k)
            if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
        i += len;
    }
    return true;
}

// What a streaming client would put together from the deltas, next to the parser's own result.
struct Streamed {
    std::string reasoning;
    std::string content;
    std::vector<ToolCall> calls;
    std::string problem;  // the first broken rule of the delta shapes, if any
    OutputParser parser;

    explicit Streamed(ParserOptions o) : parser(std::move(o)) {}

    void take(const ParserDelta& d) {
        reasoning += d.reasoning;
        content += d.content;
        if (problem.empty() && (!valid_utf8(d.reasoning) || !valid_utf8(d.content)))
            problem = "half a character";
        for (const auto& t : d.tool_calls) {
            if (t.opens_call()) {
                if (t.index != static_cast<int>(calls.size()) || !t.arguments.empty())
                    problem = "bad opening delta";
                calls.push_back({t.id, t.name, ""});
            } else if (t.index + 1 != static_cast<int>(calls.size())) {
                problem = "arguments for a call not opened last";
            } else {
                calls.back().arguments += t.arguments;
            }
        }
    }
};

Streamed stream(const Case& c, const std::vector<size_t>& cuts) {
    Streamed s(c.options);
    size_t from = 0;
    for (size_t cut : cuts) {
        s.take(s.parser.push(std::string_view(c.output).substr(from, cut - from)));
        from = cut;
    }
    s.take(s.parser.push(std::string_view(c.output).substr(from)));
    s.take(s.parser.finish());
    return s;
}

std::vector<ToolCall> expected_calls(const Case& c) {
    niwa::text::ToolCallIds ids(*c.options.id_seed);
    std::vector<ToolCall> calls;
    for (const auto& [name, args] : c.expected.calls) calls.push_back({ids.next(), name, args});
    return calls;
}

bool same_calls(const std::vector<ToolCall>& a, const std::vector<ToolCall>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (a[i].id != b[i].id || a[i].name != b[i].name || a[i].arguments != b[i].arguments) return false;
    return true;
}

// Checks one streaming of `c` against the expected reading; returns what differs.
QString mismatch(const Case& c, const Streamed& s) {
    const auto& p = s.parser;
    if (!s.problem.empty()) return QString::fromStdString(s.problem);
    if (s.reasoning != p.reasoning() || s.content != p.content() || !same_calls(s.calls, p.tool_calls()))
        return "deltas do not add up to the parser's result";
    if (p.reasoning() != c.expected.reasoning)
        return "reasoning: " + QString::fromStdString(p.reasoning()) +
               " != " + QString::fromStdString(c.expected.reasoning);
    if (p.content() != c.expected.content)
        return "content: " + QString::fromStdString(p.content()) +
               " != " + QString::fromStdString(c.expected.content);
    if (!same_calls(p.tool_calls(), expected_calls(c))) return "tool calls differ";
    if (p.warnings().size() != c.expected.warnings.size()) return "warnings differ";
    for (size_t i = 0; i < p.warnings().size(); ++i)
        if (p.warnings()[i].find(c.expected.warnings[i]) == std::string::npos) return "warning differs";
    return {};
}

void check(const Case& c, const std::vector<size_t>& cuts, const char* how) {
    QString why = mismatch(c, stream(c, cuts));
    if (why.isEmpty()) return;
    QFAIL(qPrintable(QString("%1 split: %2\noutput: %3").arg(how, why, QString::fromStdString(c.output))));
}

}  // namespace

class TestOutputParserSplit : public QObject {
    Q_OBJECT

private slots:
    void wholeMatchesTheReading() {
        Generator gen(1);
        for (int i = 0; i < 2000; ++i) {
            check(gen.next(), {}, "no");
            if (QTest::currentTestFailed()) return;
        }
    }

    void byteByByte() {
        Generator gen(2);
        for (int i = 0; i < 300; ++i) {
            Case c = gen.next();
            std::vector<size_t> cuts;
            for (size_t k = 1; k < c.output.size(); ++k) cuts.push_back(k);
            check(c, cuts, "byte-by-byte");
            if (QTest::currentTestFailed()) return;
        }
    }

    void everySingleSplit() {
        Generator gen(3);
        for (int i = 0; i < 100; ++i) {
            Case c = gen.next();
            for (size_t k = 0; k <= c.output.size(); ++k) {
                check(c, {k}, "single");
                if (QTest::currentTestFailed()) return;
            }
        }
    }

    void randomSplits() {
        Generator gen(4);
        std::mt19937_64 rng(5);
        for (int i = 0; i < 1000; ++i) {
            Case c = gen.next();
            for (int round = 0; round < 10; ++round) {
                std::vector<size_t> cuts;
                for (size_t k = 1; k < c.output.size(); ++k)
                    if (rng() % 4 == 0) cuts.push_back(k);
                check(c, cuts, "random");
                if (QTest::currentTestFailed()) return;
            }
        }
    }

    // The generator must produce what the properties are about, or they prove little.
    void generatorCoversTheCases() {
        Generator gen(1);
        int calls = 0, bad = 0, unterminated = 0, no_close = 0, multibyte = 0, partial_tags = 0;
        for (int i = 0; i < 2000; ++i) {
            Case c = gen.next();
            calls += c.expected.calls.size() > 1;
            for (const auto& w : c.expected.warnings) {
                bad += w == "malformed";
                unterminated += w == "unterminated";
                no_close += w == "</think>";
            }
            multibyte += c.output.find("東京") != std::string::npos;
            partial_tags += c.output.find("</thi") != std::string::npos ||
                            c.output.find("<tool_call ") != std::string::npos;
        }
        QVERIFY(calls > 100 && bad > 100 && unterminated > 100 && no_close > 50 && multibyte > 200 &&
                partial_tags > 200);
    }
};

QTEST_APPLESS_MAIN(TestOutputParserSplit)
#include "test_output_parser_split.moc"
