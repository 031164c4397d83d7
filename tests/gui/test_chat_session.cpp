// ChatSession with a real ChatStore file and FakeEngine: what is sent, what is stored while
// and after streaming, stop, regenerate, edit-and-resend, errors.
#include <QJsonArray>
#include <QSignalSpy>
#include <QTest>

#include "fake_engine.h"
#include "gui/core/chat_session.h"
#include "gui/core/chat_store.h"
#include "gui/core/engine_client.h"
#include "support/temp_dir.h"

using niwa::gui::ChatMessage;
using niwa::gui::ChatSession;
using niwa::gui::ChatStore;
using niwa::gui::EngineClient;
using niwa::test::FakeEngine;

namespace {

constexpr int kWait = 10000;

QJsonObject content(const QString& t) {
    return {{QStringLiteral("content"), t}};
}
QJsonObject reasoning(const QString& t) {
    return {{QStringLiteral("reasoning_content"), t}};
}

FakeEngine::Script reply(const QStringList& pieces, const QString& thought = {}) {
    FakeEngine::Script s;
    if (!thought.isEmpty()) s.deltas << reasoning(thought);
    for (const QString& p : pieces) s.deltas << content(p);
    s.usage = {{QStringLiteral("prompt_tokens"), 20},
               {QStringLiteral("completion_tokens"), int(s.deltas.size())}};
    return s;
}

}  // namespace

class TestChatSession : public QObject {
    Q_OBJECT

    niwa::test::TempDir* dir_ = nullptr;
    FakeEngine* engine_ = nullptr;
    EngineClient* client_ = nullptr;
    ChatStore* store_ = nullptr;
    ChatSession* session_ = nullptr;
    qint64 conversation_ = 0;

    bool waitIdle() {
        QSignalSpy busy(session_, &ChatSession::busyChanged);
        while (session_->busy())
            if (!busy.wait(kWait)) return false;
        return true;
    }

private slots:
    void init() {
        dir_ = new niwa::test::TempDir;
        engine_ = new FakeEngine;
        QVERIFY(engine_->listen());
        client_ = new EngineClient;
        client_->setBaseUrl(QUrl(engine_->baseUrl()));
        store_ = new ChatStore;
        QVERIFY(store_->open(dir_->file("chats.db")));
        conversation_ =
            store_->createConversation({}, QStringLiteral("Answer in Japanese."), QStringLiteral("low"));
        session_ = new ChatSession(client_, store_);
        session_->setModel(QStringLiteral("bonsai-27b"));
        session_->setConversationId(conversation_);
    }

    void cleanup() {
        delete session_;
        delete store_;
        delete client_;
        delete engine_;
        delete dir_;
    }

    void sendsTheConversationAndStoresTheReply() {
        engine_->setScript(
            reply({QStringLiteral("はい、"), QStringLiteral("わかりました。")}, QStringLiteral("ok")));
        QSignalSpy streaming(session_, &ChatSession::streamingChanged);
        QSignalSpy finished(session_, &ChatSession::replyFinished);
        QVERIFY(session_->send(QStringLiteral("Hello")));
        QVERIFY(session_->busy());
        QVERIFY(!session_->send(QStringLiteral("again")));  // one reply at a time
        QVERIFY(finished.wait(kWait));
        QVERIFY(streaming.count() >= 3);
        QCOMPARE(session_->streamingContent(), QStringLiteral("はい、わかりました。"));
        QCOMPARE(session_->streamingReasoning(), QStringLiteral("ok"));

        const QJsonObject sent = engine_->chatRequests().value(0);
        QCOMPARE(sent.value("model").toString(), QStringLiteral("bonsai-27b"));
        QCOMPARE(sent.value("reasoning_effort").toString(), QStringLiteral("low"));
        const QJsonArray messages = sent.value("messages").toArray();
        QCOMPARE(messages.size(), 2);
        QCOMPARE(messages[0].toObject().value("role").toString(), QStringLiteral("system"));
        QCOMPARE(messages[0].toObject().value("content").toString(), QStringLiteral("Answer in Japanese."));
        QCOMPARE(messages[1].toObject().value("content").toString(), QStringLiteral("Hello"));

        const QList<ChatMessage> stored = store_->messages(conversation_);
        QCOMPARE(stored.size(), 2);
        QCOMPARE(stored[1].content, QStringLiteral("はい、わかりました。"));
        QCOMPARE(stored[1].reasoning, QStringLiteral("ok"));
        QCOMPARE(stored[1].finishReason, QStringLiteral("stop"));
        QCOMPARE(stored[1].promptTokens, 20);
        QCOMPARE(stored[1].completionTokens, 3);
        QVERIFY(stored[1].complete);
        QCOMPARE(store_->conversation(conversation_)->title, QStringLiteral("Hello"));

        // The second turn carries the first.
        engine_->setScript(reply({QStringLiteral("二回目")}));
        QVERIFY(session_->send(QStringLiteral("More")));
        QVERIFY(waitIdle());
        QCOMPARE(engine_->chatRequests().value(1).value("messages").toArray().size(), 4);
        QCOMPARE(engine_->chatRequests()
                     .value(1)
                     .value("messages")
                     .toArray()[2]
                     .toObject()
                     .value("content")
                     .toString(),
                 QStringLiteral("はい、わかりました。"));
    }

    void writesTheReplyWhileItStreams() {
        FakeEngine::Script s =
            reply({QStringLiteral("one "), QStringLiteral("two "), QStringLiteral("three")});
        s.holdAfter = 2;
        engine_->setScript(s);
        session_->setFlushInterval(20);
        QVERIFY(session_->send(QStringLiteral("count")));
        const qint64 id = session_->replyMessageId();
        QVERIFY(id > 0);
        QTRY_COMPARE_WITH_TIMEOUT(store_->message(id)->content, QStringLiteral("one two "), kWait);
        QVERIFY(!store_->message(id)->complete);
        QVERIFY(session_->tokensPerSecond() >= 0);
        session_->stop();
        QVERIFY(!session_->busy());
        const ChatMessage m = *store_->message(id);
        QCOMPARE(m.content, QStringLiteral("one two "));
        QCOMPARE(m.finishReason, QStringLiteral("cancelled"));
        QVERIFY(m.complete);
    }

    void regenerateReplacesTheLastReply() {
        engine_->setScript(reply({QStringLiteral("first answer")}));
        QVERIFY(session_->send(QStringLiteral("Q")));
        QVERIFY(waitIdle());
        engine_->setScript(reply({QStringLiteral("second answer")}));
        QVERIFY(session_->regenerate());
        QVERIFY(waitIdle());
        const QList<ChatMessage> stored = store_->messages(conversation_);
        QCOMPARE(stored.size(), 2);
        QCOMPARE(stored[1].content, QStringLiteral("second answer"));
        QCOMPARE(stored[1].completionTokens, 1);
        // The regenerated request did not include the reply it replaces.
        QCOMPARE(engine_->chatRequests().value(1).value("messages").toArray().size(), 2);
    }

    void editAndResendTruncatesAfterTheEditedMessage() {
        engine_->setScript(reply({QStringLiteral("A1")}));
        QVERIFY(session_->send(QStringLiteral("Q1")));
        QVERIFY(waitIdle());
        engine_->setScript(reply({QStringLiteral("A2")}));
        QVERIFY(session_->send(QStringLiteral("Q2")));
        QVERIFY(waitIdle());
        const qint64 q1 = store_->messages(conversation_).first().id;
        engine_->setScript(reply({QStringLiteral("A1 again")}));
        QVERIFY(session_->editAndResend(q1, QStringLiteral("Q1 edited")));
        QVERIFY(waitIdle());
        const QList<ChatMessage> stored = store_->messages(conversation_);
        QCOMPARE(stored.size(), 2);
        QCOMPARE(stored[0].content, QStringLiteral("Q1 edited"));
        QCOMPARE(stored[1].content, QStringLiteral("A1 again"));
        const QJsonArray sent = engine_->chatRequests().last().value("messages").toArray();
        QCOMPARE(sent.size(), 2);
        QCOMPARE(sent[1].toObject().value("content").toString(), QStringLiteral("Q1 edited"));
        // Only user messages can be edited.
        QVERIFY(!session_->editAndResend(stored[1].id, QStringLiteral("no")));
    }

    void reasoningOffAndImages() {
        auto c = *store_->conversation(conversation_);
        c.reasoningEffort = QStringLiteral("off");
        QVERIFY(store_->updateConversation(c));
        engine_->setScript(reply({QStringLiteral("a cat")}));
        QVERIFY(session_->send(
            QStringLiteral("What is this?"),
            {{QStringLiteral("/tmp/x.png"), QStringLiteral("image/png"), QByteArray("PNGDATA")}}));
        QVERIFY(waitIdle());
        const QJsonObject sent = engine_->chatRequests().value(0);
        QVERIFY(!sent.contains("reasoning_effort"));
        QCOMPARE(sent.value("chat_template_kwargs").toObject().value("enable_thinking").toBool(true), false);
        const QJsonArray parts = sent.value("messages").toArray()[1].toObject().value("content").toArray();
        QCOMPARE(parts.size(), 2);
        QCOMPARE(parts[0].toObject().value("text").toString(), QStringLiteral("What is this?"));
        QCOMPARE(
            parts[1].toObject().value("image_url").toObject().value("url").toString(),
            QStringLiteral("data:image/png;base64,") + QString::fromLatin1(QByteArray("PNGDATA").toBase64()));
    }

    void engineErrorsAreShownAndStored() {
        FakeEngine::Script s;
        s.errorStatus = 503;
        s.errorMessage = QStringLiteral("the engine is still loading the model");
        engine_->setScript(s);
        QSignalSpy error(session_, &ChatSession::errorChanged);
        QVERIFY(session_->send(QStringLiteral("hi")));
        QVERIFY(waitIdle());
        QVERIFY2(session_->error().contains(QStringLiteral("still loading")), qPrintable(session_->error()));
        QCOMPARE(store_->message(session_->replyMessageId())->finishReason, QStringLiteral("error"));
        // The next successful reply clears it.
        engine_->setScript(reply({QStringLiteral("ok")}));
        QVERIFY(session_->regenerate());
        QVERIFY(waitIdle());
        QVERIFY(session_->error().isEmpty());
        QCOMPARE(store_->messages(conversation_).size(), 2);
    }
};

QTEST_GUILESS_MAIN(TestChatSession)
#include "test_chat_session.moc"
