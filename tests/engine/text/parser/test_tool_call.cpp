// Tool-call ids and the OpenAI JSON shapes of calls and streamed call deltas.
#include <QtTest>

#include <regex>
#include <set>

#include "engine/text/tool_call.h"

using niwa::text::ToolCall;
using niwa::text::ToolCallDelta;
using niwa::text::ToolCallIds;
using nlohmann::json;

class TestToolCall : public QObject {
    Q_OBJECT

private slots:
    void idsHaveTheOpenAiForm() {
        ToolCallIds ids(7);
        const std::regex form("call_[A-Za-z0-9]{24}");
        std::set<std::string> seen;
        for (int i = 0; i < 200; ++i) {
            std::string id = ids.next();
            QVERIFY2(std::regex_match(id, form), id.c_str());
            seen.insert(id);
        }
        QCOMPARE(seen.size(), size_t{200});
    }

    void idsFollowTheSeed() {
        ToolCallIds a(42), b(42), c(43);
        std::string first = a.next();
        QCOMPARE(b.next(), first);
        QVERIFY(c.next() != first);
        QVERIFY(a.next() != first);
    }

    void callJson() {
        auto j = niwa::text::tool_call_json(ToolCall{"call_x", "get_weather", "{\"city\":\"Tokyo\"}"});
        const json want = {{"id", "call_x"},
                           {"type", "function"},
                           {"function", {{"name", "get_weather"}, {"arguments", "{\"city\":\"Tokyo\"}"}}}};
        QCOMPARE(j.dump(), want.dump());
    }

    void openingDeltaJson() {
        ToolCallDelta d{.index = 1, .id = "call_x", .name = "f", .arguments = ""};
        QVERIFY(d.opens_call());
        QCOMPARE(niwa::text::tool_call_delta_json(d).dump(),
                 std::string("{\"function\":{\"arguments\":\"\",\"name\":\"f\"},\"id\":\"call_x\",\"index\":"
                             "1,\"type\":\"function\"}"));
    }

    void argumentsDeltaJson() {
        ToolCallDelta d{.index = 2, .arguments = "{\"a\":1}"};
        QVERIFY(!d.opens_call());
        const json want = {{"index", 2}, {"function", {{"arguments", "{\"a\":1}"}}}};
        QCOMPARE(niwa::text::tool_call_delta_json(d).dump(), want.dump());
    }
};

QTEST_APPLESS_MAIN(TestToolCall)
#include "test_tool_call.moc"
