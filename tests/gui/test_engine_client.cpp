// EngineClient against FakeEngine on loopback: streamed chat (content, reasoning, tool
// calls, usage), cancel, errors, API key, /v1/models, /health, and the stats stream that
// reconnects after the engine restarts.
#include <QJsonArray>
#include <QSignalSpy>
#include <QTest>

#include "fake_engine.h"
#include "gui/core/chat_reply.h"
#include "gui/core/engine_client.h"

using niwa::gui::ChatReply;
using niwa::gui::EngineClient;
using niwa::test::FakeEngine;

namespace {

constexpr int kWait = 10000;  // a bound, not a measurement

QJsonObject content(const QString& t) {
    return {{QStringLiteral("content"), t}};
}
QJsonObject reasoning(const QString& t) {
    return {{QStringLiteral("reasoning_content"), t}};
}

QJsonObject userRequest(const QString& text) {
    return {
        {QStringLiteral("model"), QStringLiteral("bonsai-27b")},
        {QStringLiteral("messages"), QJsonArray{QJsonObject{{QStringLiteral("role"), QStringLiteral("user")},
                                                            {QStringLiteral("content"), text}}}}};
}

}  // namespace

class TestEngineClient : public QObject {
    Q_OBJECT

private slots:
    void streamsContentReasoningAndUsage() {
        FakeEngine engine;
        QVERIFY(engine.listen());
        FakeEngine::Script script;
        script.deltas = {reasoning(QStringLiteral("Think")), reasoning(QStringLiteral("ing.")),
                         content(QStringLiteral("こんにちは")), content(QStringLiteral(", world"))};
        script.usage = {{QStringLiteral("prompt_tokens"), 12},
                        {QStringLiteral("completion_tokens"), 4},
                        {QStringLiteral("total_tokens"), 16}};
        engine.setScript(script);
        EngineClient client;
        client.setBaseUrl(QUrl(engine.baseUrl()));
        ChatReply* reply = client.chat(userRequest(QStringLiteral("hi")));
        QSignalSpy deltas(reply, &ChatReply::contentDelta);
        QSignalSpy finished(reply, &ChatReply::finished);
        QSignalSpy failed(reply, &ChatReply::failed);
        QVERIFY(finished.wait(kWait));
        QCOMPARE(failed.count(), 0);
        QCOMPARE(deltas.count(), 2);
        QCOMPARE(reply->content(), QStringLiteral("こんにちは, world"));
        QCOMPARE(reply->reasoning(), QStringLiteral("Thinking."));
        QCOMPARE(reply->finishReason(), QStringLiteral("stop"));
        QCOMPARE(reply->usage().value("completion_tokens").toInt(), 4);
        QCOMPARE(reply->model(), QStringLiteral("bonsai-27b"));
        // The client forces streaming with usage on, and sent no key it was not given.
        const QJsonObject sent = engine.chatRequests().value(0);
        QCOMPARE(sent.value("stream").toBool(), true);
        QCOMPARE(sent.value("stream_options").toObject().value("include_usage").toBool(), true);
        QCOMPARE(engine.authorizations().value(0), QByteArray());
    }

    void assemblesToolCallsFromPieces() {
        FakeEngine engine;
        QVERIFY(engine.listen());
        const auto call = [](int index, const QJsonObject& fn, const QString& id = {}) {
            QJsonObject c{{QStringLiteral("index"), index}, {QStringLiteral("function"), fn}};
            if (!id.isEmpty()) {
                c["id"] = id;
                c["type"] = QStringLiteral("function");
            }
            return QJsonObject{{QStringLiteral("tool_calls"), QJsonArray{c}}};
        };
        FakeEngine::Script script;
        script.deltas = {call(0, {{"name", "get_weather"}, {"arguments", ""}}, "call_1"),
                         call(0, {{"arguments", "{\"city\":"}}), call(0, {{"arguments", "\"東京\"}"}}),
                         call(1, {{"name", "get_time"}, {"arguments", "{}"}}, "call_2")};
        script.finishReason = QStringLiteral("tool_calls");
        engine.setScript(script);
        EngineClient client;
        client.setBaseUrl(QUrl(engine.baseUrl()));
        ChatReply* reply = client.chat(userRequest(QStringLiteral("weather?")));
        QSignalSpy finished(reply, &ChatReply::finished);
        QVERIFY(finished.wait(kWait));
        const QJsonArray calls = reply->toolCalls();
        QCOMPARE(calls.size(), 2);
        QCOMPARE(calls[0].toObject().value("id").toString(), QStringLiteral("call_1"));
        QCOMPARE(calls[0].toObject().value("type").toString(), QStringLiteral("function"));
        QCOMPARE(calls[0].toObject().value("function").toObject().value("name").toString(),
                 QStringLiteral("get_weather"));
        QCOMPARE(calls[0].toObject().value("function").toObject().value("arguments").toString(),
                 QStringLiteral("{\"city\":\"東京\"}"));
        QCOMPARE(calls[1].toObject().value("function").toObject().value("name").toString(),
                 QStringLiteral("get_time"));
        QCOMPARE(reply->finishReason(), QStringLiteral("tool_calls"));
    }

    void cancelDropsTheConnection() {
        FakeEngine engine;
        QVERIFY(engine.listen());
        FakeEngine::Script script;
        script.deltas = {content("a"), content("b"), content("c")};
        script.holdAfter = 2;
        engine.setScript(script);
        EngineClient client;
        client.setBaseUrl(QUrl(engine.baseUrl()));
        ChatReply* reply = client.chat(userRequest(QStringLiteral("go")));
        QSignalSpy deltas(reply, &ChatReply::contentDelta);
        QSignalSpy finished(reply, &ChatReply::finished);
        QSignalSpy dropped(&engine, &FakeEngine::streamDropped);
        while (deltas.count() < 2) QVERIFY(deltas.wait(kWait));
        reply->abort();
        QCOMPARE(finished.count(), 1);
        QCOMPARE(reply->finishReason(), QStringLiteral("cancelled"));
        QCOMPARE(reply->content(), QStringLiteral("ab"));
        QVERIFY(dropped.count() == 1 || dropped.wait(kWait));  // the engine saw the client go
    }

    void reportsEngineErrorsAndSendsTheApiKey() {
        FakeEngine engine;
        QVERIFY(engine.listen());
        engine.setApiKey(QStringLiteral("sk-niwa-0123456789abcdef"));
        EngineClient client;
        client.setBaseUrl(QUrl(engine.baseUrl()));
        ChatReply* refused = client.chat(userRequest(QStringLiteral("hi")));
        QSignalSpy failed(refused, &ChatReply::failed);
        QVERIFY(failed.wait(kWait));
        QVERIFY2(refused->error().contains(QStringLiteral("401")) &&
                     refused->error().contains(QStringLiteral("invalid API key")),
                 qPrintable(refused->error()));

        client.setApiKey(QStringLiteral("sk-niwa-0123456789abcdef"));
        FakeEngine::Script script;
        script.errorStatus = 400;
        script.errorMessage = QStringLiteral("the prompt is longer than the context (40000 > 32768 tokens)");
        engine.setScript(script);
        ChatReply* tooLong = client.chat(userRequest(QStringLiteral("hi")));
        QSignalSpy failed2(tooLong, &ChatReply::failed);
        QVERIFY(failed2.wait(kWait));
        QVERIFY2(tooLong->error().contains(QStringLiteral("40000 > 32768")), qPrintable(tooLong->error()));
        QCOMPARE(engine.authorizations().value(0), QByteArray("Bearer sk-niwa-0123456789abcdef"));
    }

    void failsWhenTheStreamEndsEarly() {
        FakeEngine engine;
        QVERIFY(engine.listen());
        FakeEngine::Script script;
        script.deltas = {content("a"), content("b")};
        script.holdAfter = 1;
        engine.setScript(script);
        EngineClient client;
        client.setBaseUrl(QUrl(engine.baseUrl()));
        ChatReply* reply = client.chat(userRequest(QStringLiteral("go")));
        QSignalSpy deltas(reply, &ChatReply::contentDelta);
        QSignalSpy failed(reply, &ChatReply::failed);
        QVERIFY(deltas.wait(kWait));
        engine.shutdown();  // the engine died mid-reply
        QVERIFY(failed.wait(kWait));
        QCOMPARE(reply->content(), QStringLiteral("a"));
    }

    void modelsAndHealth() {
        FakeEngine engine;
        QVERIFY(engine.listen());
        engine.setLoadingSteps({0.25});
        EngineClient client;
        client.setBaseUrl(QUrl(engine.baseUrl()));
        QSignalSpy health(&client, &EngineClient::healthChecked);
        client.checkHealth();
        QVERIFY(health.wait(kWait));
        QCOMPARE(health[0][0].toInt(), 503);
        QCOMPARE(health[0][1].toJsonObject().value("progress").toDouble(), 0.25);
        client.checkHealth();
        QVERIFY(health.wait(kWait));
        QCOMPARE(health[1][0].toInt(), 200);
        QSignalSpy models(&client, &EngineClient::modelsFetched);
        client.fetchModels();
        QVERIFY(models.wait(kWait));
        QCOMPARE(models[0][0].toStringList(), QStringList{QStringLiteral("bonsai-27b")});

        engine.shutdown();
        client.checkHealth();
        QVERIFY(health.wait(kWait));
        QCOMPARE(health[2][0].toInt(), 0);  // unreachable
    }

    void statsStreamReconnectsAfterARestart() {
        FakeEngine engine;
        QVERIFY(engine.listen());
        engine.setStatsInterval(50);
        const quint16 port = engine.port();
        EngineClient client;
        client.setBaseUrl(QUrl(engine.baseUrl()));
        client.setReconnectDelays(50, 400);
        QSignalSpy stats(&client, &EngineClient::statsReceived);
        QSignalSpy connected(&client, &EngineClient::statsConnectedChanged);
        client.startStats();
        while (stats.count() < 3) QVERIFY(stats.wait(kWait));
        QVERIFY(client.statsConnected());
        QCOMPARE(stats[0][0].toJsonObject().value("kv").toObject().value("blocks_total").toInt(), 400);

        engine.shutdown();
        while (client.statsConnected()) QVERIFY(connected.wait(kWait));
        stats.clear();
        // Down for a while: the client keeps trying (with back-off) without giving up.
        QTest::qWait(600);
        QVERIFY(stats.isEmpty());
        FakeEngine restarted;
        QVERIFY(restarted.listen(port));
        restarted.setStatsInterval(50);
        QJsonObject changed = FakeEngine::sampleStats();
        changed["uptime_s"] = 1;
        restarted.setStats(changed);
        QVERIFY(stats.wait(kWait));
        QVERIFY(client.statsConnected());
        QCOMPARE(stats.last()[0].toJsonObject().value("uptime_s").toInt(), 1);
        QCOMPARE(restarted.statsStreamsOpened(), 1);

        client.stopStats();
        QVERIFY(!client.statsConnected());
    }
};

QTEST_GUILESS_MAIN(TestEngineClient)
#include "test_engine_client.moc"
