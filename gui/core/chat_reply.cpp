// ChatReply: reads the SSE stream of POST /v1/chat/completions.
#include "gui/core/chat_reply.h"

#include <QJsonDocument>
#include <QNetworkReply>

namespace niwa::gui {

namespace {

// The engine's error body is OpenAI's {"error":{"message":…}}; fall back to the raw text.
QString errorMessage(const QByteArray& body) {
    const QJsonObject o = QJsonDocument::fromJson(body).object();
    const QString message =
        o.value(QStringLiteral("error")).toObject().value(QStringLiteral("message")).toString();
    return message.isEmpty() ? QString::fromUtf8(body.left(500)).trimmed() : message;
}

}  // namespace

ChatReply::ChatReply(QNetworkReply* reply, QObject* parent) : QObject(parent), reply_(reply) {
    reply->setParent(this);
    connect(reply, &QNetworkReply::readyRead, this, &ChatReply::onReadyRead);
    connect(reply, &QNetworkReply::finished, this, &ChatReply::onFinished);
}

ChatReply::~ChatReply() {
    if (reply_) {
        reply_->disconnect(this);
        reply_->abort();
    }
}

QJsonArray ChatReply::toolCalls() const {
    QJsonArray calls;
    for (const QJsonObject& c : toolCalls_) calls.append(c);
    return calls;
}

void ChatReply::abort() {
    if (done_) return;
    if (reply_) {
        reply_->disconnect(this);
        reply_->abort();
    }
    finish(QStringLiteral("cancelled"));
}

void ChatReply::onReadyRead() {
    if (done_ || !reply_) return;
    const int status = reply_->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    if (status != 200) return;  // the error body is read whole in onFinished
    for (const SseEvent& e : parser_.feed(reply_->readAll())) {
        if (done_) return;
        if (e.data == "[DONE]") {
            finish(finishReason_.isEmpty() ? QStringLiteral("stop") : finishReason_);
            return;
        }
        const QJsonObject chunk = QJsonDocument::fromJson(e.data).object();
        if (chunk.contains(QStringLiteral("error"))) {
            fail(QStringLiteral("the engine reported an error: %1")
                     .arg(chunk.value(QStringLiteral("error"))
                              .toObject()
                              .value(QStringLiteral("message"))
                              .toString()));
            return;
        }
        handleChunk(chunk);
    }
}

void ChatReply::handleChunk(const QJsonObject& chunk) {
    if (model_.isEmpty()) model_ = chunk.value(QStringLiteral("model")).toString();
    const QJsonValue usage = chunk.value(QStringLiteral("usage"));
    if (usage.isObject()) {
        usage_ = usage.toObject();
        emit usageReceived(usage_);
    }
    for (const QJsonValue& v : chunk.value(QStringLiteral("choices")).toArray()) {
        const QJsonObject choice = v.toObject();
        const QJsonObject delta = choice.value(QStringLiteral("delta")).toObject();
        const QString reasoning = delta.value(QStringLiteral("reasoning_content")).toString();
        const QString text = delta.value(QStringLiteral("content")).toString();
        if (!reasoning.isEmpty()) {
            reasoning_ += reasoning;
            ++deltaCount_;
            emit reasoningDelta(reasoning);
        }
        if (!text.isEmpty()) {
            content_ += text;
            ++deltaCount_;
            emit contentDelta(text);
        }
        const QJsonArray calls = delta.value(QStringLiteral("tool_calls")).toArray();
        for (const QJsonValue& c : calls) mergeToolCall(c.toObject());
        if (!calls.isEmpty()) {
            ++deltaCount_;
            emit toolCallsChanged();
        }
        const QJsonValue reason = choice.value(QStringLiteral("finish_reason"));
        if (reason.isString()) finishReason_ = reason.toString();
    }
}

// OpenAI streams a call as pieces: the first names it (id, function.name), the rest append
// to function.arguments; "index" says which call a piece belongs to.
void ChatReply::mergeToolCall(const QJsonObject& delta) {
    const int index = delta.value(QStringLiteral("index")).toInt();
    if (index < 0 || index > 1024) return;
    while (toolCalls_.size() <= index)
        toolCalls_.append(QJsonObject{
            {QStringLiteral("type"), QStringLiteral("function")},
            {QStringLiteral("function"),
             QJsonObject{{QStringLiteral("name"), QString()}, {QStringLiteral("arguments"), QString()}}}});
    QJsonObject& call = toolCalls_[index];
    if (delta.contains(QStringLiteral("id"))) call[QStringLiteral("id")] = delta.value(QStringLiteral("id"));
    if (delta.contains(QStringLiteral("type")))
        call[QStringLiteral("type")] = delta.value(QStringLiteral("type"));
    const QJsonObject fn = delta.value(QStringLiteral("function")).toObject();
    QJsonObject merged = call.value(QStringLiteral("function")).toObject();
    if (fn.contains(QStringLiteral("name")))
        merged[QStringLiteral("name")] =
            merged.value(QStringLiteral("name")).toString() + fn.value(QStringLiteral("name")).toString();
    if (fn.contains(QStringLiteral("arguments")))
        merged[QStringLiteral("arguments")] = merged.value(QStringLiteral("arguments")).toString() +
                                              fn.value(QStringLiteral("arguments")).toString();
    call[QStringLiteral("function")] = merged;
}

void ChatReply::onFinished() {
    if (done_ || !reply_) return;
    const int status = reply_->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    if (status != 0 && status != 200) {
        fail(QStringLiteral("the engine answered HTTP %1: %2")
                 .arg(status)
                 .arg(errorMessage(reply_->readAll())));
        return;
    }
    onReadyRead();  // whatever arrived with the end of the stream
    if (done_) return;
    if (reply_->error() != QNetworkReply::NoError) {
        fail(QStringLiteral("lost the connection to the engine: %1").arg(reply_->errorString()));
        return;
    }
    fail(QStringLiteral("the engine ended the stream before the reply was complete"));
}

void ChatReply::finish(const QString& reason) {
    done_ = true;
    finishReason_ = reason;
    emit finished();
}

void ChatReply::fail(const QString& error) {
    done_ = true;
    error_ = error;
    if (reply_) {
        reply_->disconnect(this);
        reply_->abort();
    }
    emit failed(error);
}

}  // namespace niwa::gui
