// The XML body of one <tool_call> block: structure, malformed blocks, and value typing by schema.
#include <QtTest>

#include "engine/text/tool_call_xml.h"

using niwa::text::parse_tool_call_xml;
using niwa::text::ToolSchemas;
using nlohmann::json;

namespace {

json weather_tools() {
    return json::parse(R"([{"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {
            "city": {"type": "string"}, "days": {"type": "integer"}, "temp": {"type": "number"},
            "metric": {"type": "boolean"}, "where": {"type": "object"}, "hours": {"type": "array"},
            "nothing": {"type": "null"}, "either": {"type": ["integer", "string"]},
            "maybe": {"anyOf": [{"type": "number"}, {"type": "null"}]}, "untyped": {}}}}}])");
}

std::string typed(const ToolSchemas& s, const std::string& key, const std::string& raw) {
    return s.typed_value("get_weather", key, raw).dump();
}

}  // namespace

class TestToolCallXml : public QObject {
    Q_OBJECT

private slots:
    void parsesTemplateShape() {
        ToolSchemas schemas(weather_tools());
        auto call = parse_tool_call_xml(
            "\n<function=get_weather>\n<parameter=days>\n3\n</parameter>\n<parameter=city>\nTokyo\n</"
            "parameter>\n"
            "</function>\n",
            schemas);
        QVERIFY2(call.ok(), call.error.c_str());
        QCOMPARE(call.name, std::string("get_weather"));
        // Keys stay in the order the model wrote them.
        QCOMPARE(call.arguments, std::string("{\"days\":3,\"city\":\"Tokyo\"}"));
    }

    void noParameters() {
        auto call = parse_tool_call_xml("\n<function=now>\n</function>\n", ToolSchemas(json()));
        QVERIFY(call.ok());
        QCOMPARE(call.name, std::string("now"));
        QCOMPARE(call.arguments, std::string("{}"));
    }

    void valueNewlines() {
        ToolSchemas none{json()};
        // One newline on each side belongs to the template; more belong to the value.
        auto call = parse_tool_call_xml(
            "<function=f>\n<parameter=a>\n\nx\n\n</parameter>\n<parameter=b>\n\n</parameter>\n"
            "<parameter=c>inline</parameter></function>",
            none);
        QVERIFY2(call.ok(), call.error.c_str());
        const nlohmann::ordered_json want = {{"a", "\nx\n"}, {"b", ""}, {"c", "inline"}};
        QCOMPARE(call.arguments, want.dump());
    }

    void valueWithAngleBracketsAndLookalikes() {
        ToolSchemas none{json()};
        std::string code =
            "if (a < b && c > d) {\n  s = \"</parameter\";\n  t = \"</parameters>\";\n}\n"
            "xml = '<parameter=k>v</parameter>' + y";
        auto call = parse_tool_call_xml(
            "\n<function=run>\n<parameter=code>\n" + code + "\n</parameter>\n</function>\n", none);
        QVERIFY2(call.ok(), call.error.c_str());
        QCOMPARE(json::parse(call.arguments)["code"].get<std::string>(), code);
    }

    void malformedBlocks_data() {
        QTest::addColumn<QString>("body");
        QTest::addColumn<QString>("error");
        QTest::newRow("empty") << ""
                               << "missing <function=NAME>";
        QTest::newRow("no function") << "\n<parameter=a>\n1\n</parameter>\n"
                                     << "missing <function=NAME>";
        QTest::newRow("empty name") << "<function=>\n</function>"
                                    << "bad <function=NAME> tag";
        QTest::newRow("unclosed function tag") << "<function=f\n</function>"
                                               << "bad <function=NAME> tag";
        QTest::newRow("no </function>") << "<function=f>\n<parameter=a>\n1\n</parameter>\n"
                                        << "missing </function>";
        QTest::newRow("bad nesting") << "<function=f>\n<parameter=a>\n1\n</function>\n</parameter>\n"
                                     << "missing </function>";
        QTest::newRow("unclosed parameter") << "<function=f>\n<parameter=a>\n1\n</function>"
                                            << "unclosed <parameter=a>";
        QTest::newRow("stray text") << "<function=f>\nhello\n</function>"
                                    << "unexpected text inside <function=f>";
        QTest::newRow("text after") << "<function=f>\n</function>\nmore"
                                    << "text after </function>";
        QTest::newRow("empty key") << "<function=f>\n<parameter=>\n1\n</parameter>\n</function>"
                                   << "bad <parameter=KEY> tag";
    }

    void malformedBlocks() {
        QFETCH(QString, body);
        QFETCH(QString, error);
        auto call = parse_tool_call_xml(body.toStdString(), ToolSchemas(json()));
        QVERIFY(!call.ok());
        QCOMPARE(QString::fromStdString(call.error), error);
    }

    void typesBySchema() {
        ToolSchemas s(weather_tools());
        QCOMPARE(typed(s, "city", "42"), std::string("\"42\""));
        QCOMPARE(typed(s, "city", "true"), std::string("\"true\""));
        QCOMPARE(typed(s, "days", "42"), std::string("42"));
        QCOMPARE(typed(s, "days", "forty"), std::string("\"forty\""));
        QCOMPARE(typed(s, "temp", "-3.5"), std::string("-3.5"));
        QCOMPARE(typed(s, "metric", "false"), std::string("false"));
        QCOMPARE(typed(s, "where", "{\"lat\": 35.7, \"lon\": 139.7}"),
                 std::string("{\"lat\":35.7,\"lon\":139.7}"));
        QCOMPARE(typed(s, "where", "{broken"), std::string("\"{broken\""));
        QCOMPARE(typed(s, "hours", "[1, 2]"), std::string("[1,2]"));
        QCOMPARE(typed(s, "nothing", "null"), std::string("null"));
        QCOMPARE(typed(s, "either", "7"), std::string("7"));
        QCOMPARE(typed(s, "either", "[7]"), std::string("\"[7]\""));
        QCOMPARE(typed(s, "maybe", "null"), std::string("null"));
        QCOMPARE(typed(s, "maybe", "2"), std::string("2"));
        QCOMPARE(typed(s, "untyped", "2"), std::string("2"));
        QCOMPARE(typed(s, "undeclared", "abc"), std::string("\"abc\""));
    }

    void typesWithoutSchema() {
        ToolSchemas s{json()};
        auto guess = [&](const std::string& raw) { return s.typed_value("any", "k", raw).dump(); };
        QCOMPARE(guess("12"), std::string("12"));
        QCOMPARE(guess("1e3"), std::string("1000.0"));
        QCOMPARE(guess("true"), std::string("true"));
        QCOMPARE(guess("null"), std::string("null"));
        QCOMPARE(guess("[1,\"a\"]"), std::string("[1,\"a\"]"));
        QCOMPARE(guess("{\"a\":{}}"), std::string("{\"a\":{}}"));
        // A JSON string literal is not unwrapped: the model wrote the quotes as text.
        QCOMPARE(s.typed_value("any", "k", "\"hi\"").get<std::string>(), std::string("\"hi\""));
        QCOMPARE(guess("Tokyo"), std::string("\"Tokyo\""));
        QCOMPARE(guess("東京"), std::string("\"東京\""));
        QCOMPARE(guess(""), std::string("\"\""));
        QCOMPARE(guess("12 apples"), std::string("\"12 apples\""));
    }

    void toleratesOddTools() {
        json tools = json::parse(R"([1, "x", {"type": "function"}, {"function": {"name": 3}},
            {"function": {"name": "f", "parameters": {"properties": []}}},
            {"function": {"name": "g", "parameters": {"properties": {"n": {"type": "string"}}}}}])");
        ToolSchemas s(tools);
        QCOMPARE(s.typed_value("f", "n", "5").dump(), std::string("5"));
        QCOMPARE(s.typed_value("g", "n", "5").dump(), std::string("\"5\""));
        ToolSchemas not_array(json::object());
        QCOMPARE(not_array.typed_value("g", "n", "5").dump(), std::string("5"));
    }

    void invalidUtf8DoesNotThrow() {
        auto call = parse_tool_call_xml("<function=f>\n<parameter=a>\n\xff\xfe\n</parameter>\n</function>",
                                        ToolSchemas(json()));
        QVERIFY(call.ok());
        QVERIFY(json::accept(call.arguments));
    }
};

QTEST_APPLESS_MAIN(TestToolCallXml)
#include "test_tool_call_xml.moc"
