// SseParser: events come out the same however the bytes are cut.
#include <QTest>

#include "gui/core/sse_parser.h"

using niwa::gui::SseEvent;
using niwa::gui::SseParser;

class TestSseParser : public QObject {
    Q_OBJECT

private slots:
    void parsesEventsInEveryChunking() {
        const QByteArray stream =
            ": keep-alive\r\n"
            "data: {\"a\":1}\r\n\r\n"
            "event: stats\ndata: line one\ndata: line two\nid: 7\n\n"
            "data: [DONE]\r\r";
        for (int cut = 1; cut <= stream.size(); ++cut) {
            SseParser p;
            QList<SseEvent> events;
            for (qsizetype i = 0; i < stream.size(); i += cut) events += p.feed(stream.mid(i, cut));
            QCOMPARE(events.size(), 3);
            QCOMPARE(events[0].data, QByteArray("{\"a\":1}"));
            QCOMPARE(events[0].event, QStringLiteral("message"));
            QCOMPARE(events[1].event, QStringLiteral("stats"));
            QCOMPARE(events[1].data, QByteArray("line one\nline two"));
            QCOMPARE(events[1].id, QStringLiteral("7"));
            QCOMPARE(events[2].data, QByteArray("[DONE]"));
        }
    }

    void waitsForTheBlankLine() {
        SseParser p;
        QVERIFY(p.feed("data: half").isEmpty());
        QVERIFY(p.feed(" more\n").isEmpty());
        const QList<SseEvent> events = p.feed("\n");
        QCOMPARE(events.size(), 1);
        QCOMPARE(events[0].data, QByteArray("half more"));
    }

    void ignoresEventsWithoutData() {
        SseParser p;
        QVERIFY(p.feed("event: ping\n\n: comment\n\n").isEmpty());
        QCOMPARE(p.feed("data:x\n\n").value(0).data, QByteArray("x"));  // no space after the colon
    }
};

QTEST_GUILESS_MAIN(TestSseParser)
#include "test_sse_parser.moc"
