// The output parser on hand-written outputs: reasoning, content, tool calls, malformed and
// unterminated blocks, lookalike tags, and how little streaming holds back.
#include <QtTest>

#include <regex>

#include "engine/text/output_parser.h"

using niwa::text::OutputParser;
using niwa::text::ParserDelta;
using niwa::text::ParserOptions;
using nlohmann::json;

namespace {

json weather_tools() {
    return json::parse(R"([{"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}}},
        {"type": "function", "function": {"name": "run", "parameters": {
        "type": "object", "properties": {"code": {"type": "string"}}}}}])");
}

ParserOptions with_tools(bool reasoning = true) {
    return {.reasoning = reasoning, .tools = weather_tools(), .parse_tool_calls = true, .id_seed = 1};
}

// The template's rendering of one call (MODEL.md "Chat template").
std::string call_xml(const std::string& name,
                     const std::vector<std::pair<std::string, std::string>>& params) {
    std::string s = "<tool_call>\n<function=" + name + ">\n";
    for (const auto& [k, v] : params) s += "<parameter=" + k + ">\n" + v + "\n</parameter>\n";
    return s + "</function>\n</tool_call>";
}

OutputParser parse_whole(ParserOptions options, std::string_view text) {
    OutputParser p(std::move(options));
    p.push(text);
    p.finish();
    return p;
}

bool has_warning(const OutputParser& p, const std::string& word) {
    for (const auto& w : p.warnings())
        if (w.find(word) != std::string::npos) return true;
    return false;
}

const std::string kWeather = call_xml("get_weather", {{"city", "Tokyo"}, {"days", "3"}});

}  // namespace

class TestOutputParser : public QObject {
    Q_OBJECT

private slots:
    void reasoningThenContent() {
        auto p = parse_whole({}, "Let me think.\nStill thinking.\n</think>\n\nHello!");
        QCOMPARE(p.reasoning(), std::string("Let me think.\nStill thinking."));
        QCOMPARE(p.content(), std::string("Hello!"));
        QVERIFY(!p.has_tool_calls());
        QVERIFY(p.warnings().empty());
    }

    void separatorNewlinesAreStripped_data() {
        QTest::addColumn<QString>("output");
        QTest::addColumn<QString>("reasoning");
        QTest::addColumn<QString>("content");
        QTest::newRow("template") << "r\n</think>\n\nc"
                                  << "r"
                                  << "c";
        QTest::newRow("model repeats <think>'s newline") << "\nr\n</think>\n\nc"
                                                         << "r"
                                                         << "c";
        QTest::newRow("empty reasoning") << "\n</think>\n\nc"
                                         << ""
                                         << "c";
        QTest::newRow("bare tag") << "</think>c"
                                  << ""
                                  << "c";
        QTest::newRow("one newline after") << "r</think>\nc"
                                           << "r"
                                           << "c";
        QTest::newRow("only one pair stripped") << "\n\nr\n\n</think>\n\n\nc\n"
                                                << "\nr\n"
                                                << "\nc\n";
        QTest::newRow("nothing after") << "r\n</think>\n\n"
                                       << "r"
                                       << "";
    }

    void separatorNewlinesAreStripped() {
        QFETCH(QString, output);
        QFETCH(QString, reasoning);
        QFETCH(QString, content);
        auto p = parse_whole({}, output.toStdString());
        QCOMPARE(QString::fromStdString(p.reasoning()), reasoning);
        QCOMPARE(QString::fromStdString(p.content()), content);
        QVERIFY(p.warnings().empty());
    }

    void reasoningOffIsAllContent() {
        auto p = parse_whole({.reasoning = false}, "Hi</think>\n\nthere\n");
        QCOMPARE(p.reasoning(), std::string());
        QCOMPARE(p.content(), std::string("Hi</think>\n\nthere\n"));
        QVERIFY(p.warnings().empty());
    }

    void onlyReasoning() {
        auto p = parse_whole({}, "I ran out of tokens while thinking about <tool_call>");
        QCOMPARE(p.reasoning(), std::string("I ran out of tokens while thinking about <tool_call>"));
        QCOMPARE(p.content(), std::string());
        QVERIFY(!p.has_tool_calls());
        QVERIFY(has_warning(p, "</think>"));
    }

    void emptyOutput() {
        for (bool reasoning : {true, false}) {
            OutputParser p(with_tools(reasoning));
            QVERIFY(p.push("").empty());
            QVERIFY(p.finish().empty());
            QVERIFY(p.reasoning().empty() && p.content().empty() && !p.has_tool_calls());
            QVERIFY(p.warnings().empty());
        }
    }

    void oneToolCall() {
        auto p = parse_whole(with_tools(), "The user wants weather.\n</think>\n\n" + kWeather);
        QCOMPARE(p.reasoning(), std::string("The user wants weather."));
        QCOMPARE(p.content(), std::string());
        QVERIFY(p.has_tool_calls());
        QCOMPARE(p.tool_calls().size(), size_t{1});
        const auto& call = p.tool_calls()[0];
        QCOMPARE(call.name, std::string("get_weather"));
        QCOMPARE(call.arguments, std::string("{\"city\":\"Tokyo\",\"days\":3}"));
        QVERIFY(std::regex_match(call.id, std::regex("call_[A-Za-z0-9]{24}")));
        QVERIFY(p.warnings().empty());
    }

    void streamedCallDeltasHaveOpenAiShape() {
        OutputParser p(with_tools(false));
        ParserDelta d = p.push(kWeather);
        QCOMPARE(d.tool_calls.size(), size_t{2});
        QVERIFY(d.tool_calls[0].opens_call());
        QCOMPARE(d.tool_calls[0].index, 0);
        QCOMPARE(d.tool_calls[0].id, p.tool_calls()[0].id);
        QCOMPARE(d.tool_calls[0].name, std::string("get_weather"));
        QCOMPARE(d.tool_calls[0].arguments, std::string());
        QVERIFY(!d.tool_calls[1].opens_call());
        QCOMPARE(d.tool_calls[1].index, 0);
        QCOMPARE(d.tool_calls[1].arguments, p.tool_calls()[0].arguments);
        QVERIFY(p.finish().empty());
    }

    void multipleToolCalls() {
        std::string second = call_xml("run", {{"code", "print(1)"}});
        auto p = parse_whole(with_tools(), "two\n</think>\n\n" + kWeather + "\n" + second + "\n");
        QCOMPARE(p.content(), std::string());
        QCOMPARE(p.tool_calls().size(), size_t{2});
        QCOMPARE(p.tool_calls()[1].name, std::string("run"));
        QCOMPARE(p.tool_calls()[1].arguments, std::string("{\"code\":\"print(1)\"}"));
        QVERIFY(p.tool_calls()[0].id != p.tool_calls()[1].id);

        OutputParser s(with_tools(false));
        ParserDelta d = s.push(kWeather + "\n\n" + second);
        QCOMPARE(d.tool_calls.size(), size_t{4});
        QCOMPARE(d.tool_calls[2].index, 1);
        QVERIFY(d.tool_calls[2].opens_call());
    }

    void toolCallWithoutReasoning() {
        auto p = parse_whole(with_tools(false), kWeather);
        QCOMPARE(p.reasoning(), std::string());
        QCOMPARE(p.content(), std::string());
        QCOMPARE(p.tool_calls().size(), size_t{1});
    }

    void contentAroundToolCalls() {
        auto p = parse_whole(with_tools(),
                             "r\n</think>\n\nI will check.\n\n" + kWeather + "\n\nAnd then: done.\n");
        // Whitespace next to a call separates blocks; the text on either side is kept.
        QCOMPARE(p.content(), std::string("I will check.And then: done.\n"));
        QCOMPARE(p.tool_calls().size(), size_t{1});
    }

    void angleBracketsInValues() {
        std::string code =
            "template <typename T>\nbool less(T a, T b) { return a < b && !(b > a); }\n// <tool_call> x";
        auto p = parse_whole(with_tools(false), call_xml("run", {{"code", code}}));
        QCOMPARE(p.tool_calls().size(), size_t{1});
        QCOMPARE(json::parse(p.tool_calls()[0].arguments)["code"].get<std::string>(), code);
    }

    void parameterCloseLookalikeInValue() {
        std::string code = "s = '</parameter'\nt = '</parameter>' + u\n</parameters>";
        auto p = parse_whole(with_tools(false), call_xml("run", {{"code", code}}));
        QVERIFY(p.warnings().empty());
        QCOMPARE(json::parse(p.tool_calls()[0].arguments)["code"].get<std::string>(), code);
    }

    void malformedCallIsKeptVerbatim_data() {
        QTest::addColumn<QString>("block");
        QTest::newRow("no function") << "<tool_call>\n<parameter=city>\nTokyo\n</parameter>\n</tool_call>";
        QTest::newRow("bad nesting")
            << "<tool_call>\n<function=f>\n<parameter=a>\n1\n</function>\n</parameter>\n</tool_call>";
        QTest::newRow("prose") << "<tool_call>I would call a tool here</tool_call>";
        QTest::newRow("nested open") << "<tool_call>\n<tool_call>\n<function=f>\n</function>\n</tool_call>";
    }

    void malformedCallIsKeptVerbatim() {
        QFETCH(QString, block);
        std::string text = "Before.\n" + block.toStdString() + "\nAfter.";
        auto p = parse_whole(with_tools(false), text);
        QCOMPARE(p.content(), text);
        QVERIFY(!p.has_tool_calls());
        QVERIFY(has_warning(p, "malformed <tool_call>"));
    }

    void malformedThenGoodCall() {
        std::string bad = "<tool_call>oops</tool_call>";
        auto p = parse_whole(with_tools(false), "x" + bad + "\n" + kWeather);
        QCOMPARE(p.content(), "x" + bad);
        QCOMPARE(p.tool_calls().size(), size_t{1});
    }

    void unterminatedCallIsKeptAsContent() {
        std::string text = "Sure.\n<tool_call>\n<function=get_weather>\n<parameter=city>\nTok";
        auto p = parse_whole(with_tools(), "r\n</think>\n\n" + text);
        QCOMPARE(p.content(), text);
        QVERIFY(!p.has_tool_calls());
        QVERIFY(has_warning(p, "unterminated <tool_call>"));
    }

    void lookalikeTagsArePlainText() {
        std::string reasoning = "a < /think> b </think > c </thinking d <think> e <tool_call> f";
        std::string content = "<tool_caller> <tool_call > </tool_call> <tool-call> </think> <tool_call";
        auto p = parse_whole(with_tools(), reasoning + "\n</think>\n\n" + content);
        QCOMPARE(p.reasoning(), reasoning);
        QCOMPARE(p.content(), content);
        QVERIFY(!p.has_tool_calls());
    }

    void toolCallsOffKeepsBlocksAsContent() {
        ParserOptions o{.tools = weather_tools(), .parse_tool_calls = false};
        auto p = parse_whole(o, "r\n</think>\n\n" + kWeather + "\n");
        QCOMPARE(p.content(), kWeather + "\n");
        QVERIFY(!p.has_tool_calls());
        QVERIFY(p.warnings().empty());
    }

    void valuesTypedWithoutSchema() {
        auto p = parse_whole({.reasoning = false}, call_xml("unknown", {{"n", "42"},
                                                                        {"ok", "true"},
                                                                        {"o", "{\"a\": [1]}"},
                                                                        {"s", "hello"},
                                                                        {"q", "\"quoted\""},
                                                                        {"jp", "東京"}}));
        QCOMPARE(p.tool_calls().size(), size_t{1});
        const nlohmann::ordered_json want = {{"n", 42},      {"ok", true},        {"o", {{"a", {1}}}},
                                             {"s", "hello"}, {"q", "\"quoted\""}, {"jp", "東京"}};
        QCOMPARE(p.tool_calls()[0].arguments, want.dump());
    }

    void idsFollowTheSeed() {
        auto a = parse_whole(with_tools(false), kWeather);
        auto b = parse_whole(with_tools(false), kWeather);
        QCOMPARE(a.tool_calls()[0].id, b.tool_calls()[0].id);
        ParserOptions other = with_tools(false);
        other.id_seed = 2;
        QVERIFY(parse_whole(other, kWeather).tool_calls()[0].id != a.tool_calls()[0].id);
    }

    void holdsBackOnlyPossibleTags() {
        OutputParser p(with_tools());
        QCOMPARE(p.push("Hello wor").reasoning, std::string("Hello wor"));
        QCOMPARE(p.push("ld <").reasoning, std::string("ld "));
        QCOMPARE(p.push("b>\n").reasoning, std::string("<b>"));
        QCOMPARE(p.push("x</thi").reasoning, std::string("\nx"));
        QCOMPARE(p.push("s").reasoning, std::string("</this"));
        QCOMPARE(p.push("\n</thi").reasoning, std::string());
        ParserDelta d = p.push("nk>\n");
        QVERIFY(d.empty());
        QCOMPARE(p.reasoning(), std::string("Hello world <b>\nx</this"));
        QVERIFY(p.push("\n").empty());
        QCOMPARE(p.push("Use <tool").content, std::string("Use"));
        QCOMPARE(p.push("box>").content, std::string(" <toolbox>"));
        QCOMPARE(p.push("!\n\n").content, std::string("!"));
        QCOMPARE(p.finish().content, std::string("\n\n"));
        QCOMPARE(p.content(), std::string("Use <toolbox>!\n\n"));
    }

    void holdsBackHalfCharacters() {
        const std::string kanji = "日";  // three bytes
        for (bool tools : {true, false}) {
            OutputParser p({.reasoning = false, .parse_tool_calls = tools});
            QCOMPARE(p.push(kanji.substr(0, 1)).content, std::string());
            QCOMPARE(p.push(kanji.substr(1, 1)).content, std::string());
            QCOMPARE(p.push(kanji.substr(2) + "本").content, std::string("日本"));
        }
        OutputParser r({});
        QCOMPARE(r.push("思" + kanji.substr(0, 2)).reasoning, std::string("思"));
        QCOMPARE(r.push(kanji.substr(2)).reasoning, kanji);
    }

    void japaneseText() {
        auto p = parse_whole(with_tools(), "東京の天気を調べる。\n</think>\n\n確認します。\n" +
                                               call_xml("get_weather", {{"city", "東京"}, {"days", "２"}}));
        QCOMPARE(p.reasoning(), std::string("東京の天気を調べる。"));
        QCOMPARE(p.content(), std::string("確認します。"));
        QCOMPARE(p.tool_calls()[0].arguments, std::string("{\"city\":\"東京\",\"days\":\"２\"}"));
    }
};

QTEST_APPLESS_MAIN(TestOutputParser)
#include "test_output_parser.moc"
