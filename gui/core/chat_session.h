// One conversation being chatted in: sends it to the engine, streams the reply into the chat
// store as it arrives (so a crash loses at most one flush interval), and exposes the text,
// reasoning and speed of the reply in progress to the UI.
#pragma once

#include <QElapsedTimer>
#include <QJsonObject>
#include <QObject>
#include <QPointer>
#include <QTimer>

#include "gui/core/chat_message.h"

namespace niwa::gui {

class ChatReply;
class ChatStore;
class EngineClient;

class ChatSession : public QObject {
    Q_OBJECT
    Q_PROPERTY(qint64 conversationId READ conversationId WRITE setConversationId NOTIFY conversationChanged)
    Q_PROPERTY(bool busy READ busy NOTIFY busyChanged)
    Q_PROPERTY(QString streamingContent READ streamingContent NOTIFY streamingChanged)
    Q_PROPERTY(QString streamingReasoning READ streamingReasoning NOTIFY streamingChanged)
    Q_PROPERTY(double tokensPerSecond READ tokensPerSecond NOTIFY streamingChanged)
    Q_PROPERTY(QString error READ error NOTIFY errorChanged)

public:
    ChatSession(EngineClient* client, ChatStore* store, QObject* parent = nullptr);
    ~ChatSession() override;

    qint64 conversationId() const { return conversationId_; }
    void setConversationId(qint64 id);
    // The model id sent with each request (from /v1/models).
    void setModel(const QString& model) { model_ = model; }
    // How often the reply in progress is written to the store.
    void setFlushInterval(int ms) { flushTimer_.setInterval(ms); }

    bool busy() const { return !reply_.isNull(); }
    QString streamingContent() const { return content_; }
    QString streamingReasoning() const { return reasoning_; }
    double tokensPerSecond() const { return tokensPerSecond_; }
    QString error() const { return error_; }
    // The assistant message being written (or last written).
    qint64 replyMessageId() const { return replyId_; }

    // Each returns false (doing nothing) while a reply streams or with no conversation.
    Q_INVOKABLE bool send(const QString& text, const QList<niwa::gui::ChatImage>& images = {});
    // Replaces the last assistant reply with a new one.
    Q_INVOKABLE bool regenerate();
    // Changes a user message, forgets everything after it, and asks again.
    Q_INVOKABLE bool editAndResend(qint64 messageId, const QString& text);
    Q_INVOKABLE void stop();

    // The OpenAI request for the conversation as stored now.
    QJsonObject buildRequest();

signals:
    void conversationChanged();
    void busyChanged(bool busy);
    void streamingChanged();
    void errorChanged();
    void replyFinished(qint64 messageId, const QString& finishReason);

private:
    bool startReply();
    void onDelta();
    void flush();
    void onReplyEnded();
    void setError(const QString& error);

    EngineClient* client_;
    ChatStore* store_;
    qint64 conversationId_ = 0;
    QString model_;
    QPointer<ChatReply> reply_;
    qint64 replyId_ = 0;
    QString content_;
    QString reasoning_;
    QString pendingContent_;
    QString pendingReasoning_;
    double tokensPerSecond_ = 0;
    QElapsedTimer sinceFirstToken_;
    QTimer flushTimer_;
    QString error_;
};

}  // namespace niwa::gui
