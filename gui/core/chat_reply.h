// One streamed chat completion: the OpenAI chat.completion.chunk events of the engine turned
// into text, reasoning, tool calls and usage as they arrive. Ends exactly once, with
// finished() (the engine's finish_reason, or "cancelled" after abort()) or failed().
#pragma once

#include <QJsonArray>
#include <QJsonObject>
#include <QObject>
#include <QPointer>

#include "gui/core/sse_parser.h"

class QNetworkReply;

namespace niwa::gui {

class ChatReply : public QObject {
    Q_OBJECT

public:
    // Takes ownership of reply.
    explicit ChatReply(QNetworkReply* reply, QObject* parent = nullptr);
    ~ChatReply() override;

    QString content() const { return content_; }
    QString reasoning() const { return reasoning_; }
    // Complete calls so far, in OpenAI's shape (id, type, function{name, arguments}).
    QJsonArray toolCalls() const;
    QJsonObject usage() const { return usage_; }
    QString model() const { return model_; }
    QString finishReason() const { return finishReason_; }
    QString error() const { return error_; }
    bool isDone() const { return done_; }
    // Chunks that carried generated text: one token each from this engine, until usage says.
    int deltaCount() const { return deltaCount_; }

    // Drops the connection: the engine stops generating for it.
    void abort();

signals:
    void contentDelta(const QString& text);
    void reasoningDelta(const QString& text);
    void toolCallsChanged();
    void usageReceived(const QJsonObject& usage);
    void finished();
    void failed(const QString& error);

private:
    void onReadyRead();
    void onFinished();
    void handleChunk(const QJsonObject& chunk);
    void mergeToolCall(const QJsonObject& delta);
    void finish(const QString& reason);
    void fail(const QString& error);

    QPointer<QNetworkReply> reply_;
    SseParser parser_;
    QString content_;
    QString reasoning_;
    QList<QJsonObject> toolCalls_;  // by index
    QJsonObject usage_;
    QString model_;
    QString finishReason_;
    QString error_;
    bool done_ = false;
    int deltaCount_ = 0;
};

}  // namespace niwa::gui
