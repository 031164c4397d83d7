// ChatSession: the store is the truth; the streaming properties mirror the reply in flight.
#include "gui/core/chat_session.h"

#include <QJsonArray>
#include <QJsonDocument>

#include "gui/core/chat_reply.h"
#include "gui/core/chat_store.h"
#include "gui/core/engine_client.h"

namespace niwa::gui {

namespace {

constexpr int kTitleLength = 40;

QJsonValue messageContent(const ChatMessage& m) {
    if (m.images.isEmpty()) return m.content;
    // OpenAI's multi-part content: text, then each image inline as a data URL.
    QJsonArray parts;
    if (!m.content.isEmpty())
        parts.append(QJsonObject{{QStringLiteral("type"), QStringLiteral("text")},
                                 {QStringLiteral("text"), m.content}});
    for (const ChatImage& image : m.images) {
        const QString url = QStringLiteral("data:%1;base64,%2")
                                .arg(image.mime.isEmpty() ? QStringLiteral("image/png") : image.mime,
                                     QString::fromLatin1(image.data.toBase64()));
        parts.append(QJsonObject{{QStringLiteral("type"), QStringLiteral("image_url")},
                                 {QStringLiteral("image_url"), QJsonObject{{QStringLiteral("url"), url}}}});
    }
    return parts;
}

}  // namespace

ChatSession::ChatSession(EngineClient* client, ChatStore* store, QObject* parent)
    : QObject(parent), client_(client), store_(store) {
    flushTimer_.setInterval(200);
    connect(&flushTimer_, &QTimer::timeout, this, &ChatSession::flush);
}

ChatSession::~ChatSession() {
    if (reply_) {
        reply_->disconnect(this);
        reply_->abort();
        flush();
    }
}

void ChatSession::setConversationId(qint64 id) {
    if (id == conversationId_ || busy()) return;
    conversationId_ = id;
    content_.clear();
    reasoning_.clear();
    tokensPerSecond_ = 0;
    emit conversationChanged();
    emit streamingChanged();
}

bool ChatSession::send(const QString& text, const QList<ChatImage>& images) {
    if (busy() || conversationId_ == 0) return false;
    ChatMessage m;
    m.conversationId = conversationId_;
    m.role = QStringLiteral("user");
    m.content = text;
    m.images = images;
    if (!store_->addMessage(m)) {
        setError(store_->lastError());
        return false;
    }
    if (auto c = store_->conversation(conversationId_); c && c->title.isEmpty()) {
        c->title = text.simplified().left(kTitleLength);
        store_->updateConversation(*c);
    }
    return startReply();
}

bool ChatSession::regenerate() {
    if (busy() || conversationId_ == 0) return false;
    const QList<ChatMessage> messages = store_->messages(conversationId_);
    qsizetype lastUser = messages.size() - 1;
    while (lastUser >= 0 && messages[lastUser].role != QLatin1String("user")) --lastUser;
    if (lastUser < 0) return false;
    if (lastUser + 1 < messages.size()) store_->deleteFrom(messages[lastUser + 1].id);
    return startReply();
}

bool ChatSession::editAndResend(qint64 messageId, const QString& text) {
    if (busy() || conversationId_ == 0) return false;
    const QList<ChatMessage> messages = store_->messages(conversationId_);
    qsizetype i = 0;
    while (i < messages.size() && messages[i].id != messageId) ++i;
    if (i == messages.size() || messages[i].role != QLatin1String("user")) return false;
    if (!store_->setMessageContent(messageId, text)) return false;
    if (i + 1 < messages.size()) store_->deleteFrom(messages[i + 1].id);
    return startReply();
}

void ChatSession::stop() {
    if (reply_) reply_->abort();  // ends through onReplyEnded with "cancelled"
}

QJsonObject ChatSession::buildRequest() {
    QJsonObject request;
    const auto conversation = store_->conversation(conversationId_);
    if (!model_.isEmpty()) request[QStringLiteral("model")] = model_;
    QJsonArray messages;
    if (conversation && !conversation->systemPrompt.isEmpty())
        messages.append(QJsonObject{{QStringLiteral("role"), QStringLiteral("system")},
                                    {QStringLiteral("content"), conversation->systemPrompt}});
    for (const ChatMessage& m : store_->messages(conversationId_)) {
        QJsonObject o{{QStringLiteral("role"), m.role}, {QStringLiteral("content"), messageContent(m)}};
        if (!m.toolCallsJson.isEmpty())
            o[QStringLiteral("tool_calls")] = QJsonDocument::fromJson(m.toolCallsJson.toUtf8()).array();
        if (!m.toolCallId.isEmpty()) o[QStringLiteral("tool_call_id")] = m.toolCallId;
        messages.append(o);
    }
    request[QStringLiteral("messages")] = messages;
    const QString effort = conversation ? conversation->reasoningEffort : QString();
    if (effort == QLatin1String("off")) {
        request[QStringLiteral("chat_template_kwargs")] =
            QJsonObject{{QStringLiteral("enable_thinking"), false}};
    } else if (!effort.isEmpty()) {
        request[QStringLiteral("reasoning_effort")] = effort;
    }
    return request;
}

bool ChatSession::startReply() {
    const QJsonObject request = buildRequest();
    replyId_ = store_->beginReply(conversationId_, model_);
    if (!replyId_) {
        setError(store_->lastError());
        return false;
    }
    setError({});
    content_.clear();
    reasoning_.clear();
    pendingContent_.clear();
    pendingReasoning_.clear();
    tokensPerSecond_ = 0;
    sinceFirstToken_.invalidate();
    reply_ = client_->chat(request);
    connect(reply_, &ChatReply::contentDelta, this, [this](const QString& t) {
        content_ += t;
        pendingContent_ += t;
        onDelta();
    });
    connect(reply_, &ChatReply::reasoningDelta, this, [this](const QString& t) {
        reasoning_ += t;
        pendingReasoning_ += t;
        onDelta();
    });
    connect(reply_, &ChatReply::toolCallsChanged, this, &ChatSession::onDelta);
    connect(reply_, &ChatReply::finished, this, &ChatSession::onReplyEnded);
    connect(reply_, &ChatReply::failed, this, &ChatSession::onReplyEnded);
    flushTimer_.start();
    emit busyChanged(true);
    emit streamingChanged();
    return true;
}

void ChatSession::onDelta() {
    // Speed counts from the first token: the wait before it is prompt processing.
    if (!sinceFirstToken_.isValid()) {
        sinceFirstToken_.start();
    } else if (const qint64 ms = sinceFirstToken_.elapsed(); ms > 0) {
        tokensPerSecond_ = (reply_->deltaCount() - 1) * 1000.0 / double(ms);
    }
    emit streamingChanged();
}

void ChatSession::flush() {
    if (!replyId_ || (pendingContent_.isEmpty() && pendingReasoning_.isEmpty())) return;
    if (store_->appendToReply(replyId_, pendingContent_, pendingReasoning_)) {
        pendingContent_.clear();
        pendingReasoning_.clear();
    }
}

void ChatSession::onReplyEnded() {
    flushTimer_.stop();
    flush();
    ChatReply* reply = reply_;
    const QJsonObject usage = reply->usage();
    const int completionTokens = usage.contains(QStringLiteral("completion_tokens"))
                                     ? usage.value(QStringLiteral("completion_tokens")).toInt()
                                     : reply->deltaCount();
    if (sinceFirstToken_.isValid() && sinceFirstToken_.elapsed() > 0 && completionTokens > 1)
        tokensPerSecond_ = (completionTokens - 1) * 1000.0 / double(sinceFirstToken_.elapsed());
    const QString reason = reply->error().isEmpty() ? reply->finishReason() : QStringLiteral("error");
    const QJsonArray calls = reply->toolCalls();
    store_->finishReply(
        replyId_,
        calls.isEmpty() ? QString() : QString::fromUtf8(QJsonDocument(calls).toJson(QJsonDocument::Compact)),
        reason, usage.value(QStringLiteral("prompt_tokens")).toInt(), completionTokens, tokensPerSecond_);
    if (!reply->error().isEmpty()) setError(reply->error());
    reply_ = nullptr;
    reply->deleteLater();
    emit streamingChanged();
    emit busyChanged(false);
    emit replyFinished(replyId_, reason);
}

void ChatSession::setError(const QString& error) {
    if (error_ == error) return;
    error_ = error;
    emit errorChanged();
}

}  // namespace niwa::gui
