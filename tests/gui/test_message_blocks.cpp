// Splitting replies at code fences (CommonMark's rules), the highlighter, tool calls for view.
#include <QTest>

#include "gui/app/message_blocks.h"
#include "gui/app/message_list_model.h"

using namespace niwa::gui;
using Kind = MessageBlock::Kind;

class TestMessageBlocks : public QObject {
    Q_OBJECT

private slots:
    void proseOnlyIsOneBlock() {
        const auto b = splitMessage(QStringLiteral("Hello **world**\n\n- a\n- b"));
        QCOMPARE(b.size(), 1);
        QCOMPARE(b[0].kind, Kind::Markdown);
        QCOMPARE(b[0].text, QStringLiteral("Hello **world**\n\n- a\n- b"));
    }

    void codeBetweenProse() {
        const auto b = splitMessage(QStringLiteral("Run this:\n```python\nprint('hi')\n```\nDone."));
        QCOMPARE(b.size(), 3);
        QCOMPARE(b[0].text, QStringLiteral("Run this:"));
        QCOMPARE(b[1].kind, Kind::Code);
        QCOMPARE(b[1].language, QStringLiteral("python"));
        QCOMPARE(b[1].text, QStringLiteral("print('hi')"));
        QVERIFY(b[1].closed);
        QCOMPARE(b[2].text, QStringLiteral("Done."));
    }

    void closingFenceMustMatch() {
        // ~~~ does not close ```, a shorter fence does not close a longer one, and a fence
        // line with an info string does not close.
        const auto b = splitMessage(QStringLiteral("````\na\n~~~\n```\n```js\nb\n````"));
        QCOMPARE(b.size(), 1);
        QCOMPARE(b[0].text, QStringLiteral("a\n~~~\n```\n```js\nb"));
    }

    void anUnclosedFenceRunsToTheEndWhileStreaming() {
        const auto b = splitMessage(QStringLiteral("Here:\n```cpp\nint main() {"));
        QCOMPARE(b.size(), 2);
        QCOMPARE(b[1].kind, Kind::Code);
        QCOMPARE(b[1].text, QStringLiteral("int main() {"));
        QVERIFY(!b[1].closed);
    }

    void indentedFourSpacesIsNotAFence() {
        const auto b = splitMessage(QStringLiteral("    ```\nx"));
        QCOMPARE(b.size(), 1);
        QCOMPARE(b[0].kind, Kind::Markdown);
    }

    void emptyProseBetweenFencesIsDropped() {
        const auto b = splitMessage(QStringLiteral("```\na\n```\n\n```\nb\n```"));
        QCOMPARE(b.size(), 2);
        QCOMPARE(b[0].text, QStringLiteral("a"));
        QCOMPARE(b[1].text, QStringLiteral("b"));
    }

    void highlighterEscapesAndColours() {
        const QString html =
            highlightCode(QStringLiteral("if (a < 2) return \"x\"; // c"), QStringLiteral("cpp"), false);
        QVERIFY(html.startsWith(QStringLiteral("<pre")));
        QVERIFY(html.contains(QStringLiteral("&lt;")));
        QVERIFY(html.contains(QStringLiteral(">if</span>")));
        QVERIFY(html.contains(QStringLiteral(">return</span>")));
        QVERIFY(html.contains(QStringLiteral(">&quot;x&quot;</span>")));
        QVERIFY(html.contains(QStringLiteral(">// c</span>")));
        QVERIFY(html.contains(QStringLiteral(">2</span>")));
    }

    void hashCommentsInScripts() {
        const QString py = highlightCode(QStringLiteral("x = 1  # note"), QStringLiteral("python"), true);
        QVERIFY(py.contains(QStringLiteral("># note</span>")));
        const QString c = highlightCode(QStringLiteral("#include <a>"), QStringLiteral("c"), true);
        QVERIFY(!c.contains(QStringLiteral(">#include &lt;a&gt;</span>")));
    }

    void blocksForViewCarryHtmlForCode() {
        const QVariantList v = blocksForView(QStringLiteral("a\n```\nb\n```"), false);
        QCOMPARE(v.size(), 2);
        QCOMPARE(v[0].toMap().value(QStringLiteral("kind")).toString(), QStringLiteral("markdown"));
        QVERIFY(v[0].toMap().value(QStringLiteral("html")).toString().isEmpty());
        QCOMPARE(v[1].toMap().value(QStringLiteral("kind")).toString(), QStringLiteral("code"));
        QVERIFY(v[1].toMap().value(QStringLiteral("html")).toString().contains(QStringLiteral("b")));
    }

    void toolCallsArePrettyPrinted() {
        const QVariantList calls = toolCallsForView(
            QStringLiteral("[{\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"get_weather\","
                           "\"arguments\":\"{\\\"city\\\":\\\"Tokyo\\\"}\"}}]"));
        QCOMPARE(calls.size(), 1);
        const QVariantMap c = calls[0].toMap();
        QCOMPARE(c.value(QStringLiteral("name")).toString(), QStringLiteral("get_weather"));
        QCOMPARE(c.value(QStringLiteral("id")).toString(), QStringLiteral("c1"));
        QVERIFY(
            c.value(QStringLiteral("arguments")).toString().contains(QStringLiteral("\"city\": \"Tokyo\"")));
        QVERIFY(toolCallsForView({}).isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestMessageBlocks)
#include "test_message_blocks.moc"
