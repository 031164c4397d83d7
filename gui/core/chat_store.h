// The chat history: conversations, messages and their images in one SQLite file (WAL).
// A streaming reply is written as it arrives, each piece in its own transaction, so killing
// the app mid-reply loses nothing written so far; such a reply stays marked incomplete.
// The schema is versioned and migrated forward on open.
#pragma once

#include <QList>
#include <QObject>
#include <QSqlDatabase>
#include <optional>

#include "gui/core/chat_message.h"
#include "gui/core/conversation.h"

namespace niwa::gui {

class ChatStore : public QObject {
    Q_OBJECT

public:
    static constexpr int kSchemaVersion = 3;

    struct SearchHit {
        qint64 messageId = 0;
        qint64 conversationId = 0;
        QString snippet;
    };

    explicit ChatStore(QObject* parent = nullptr);
    ~ChatStore() override;

    // Opens (creating or migrating) the store; false with lastError() on failure.
    bool open(const QString& path);
    void close();
    bool isOpen() const;
    QString lastError() const { return lastError_; }
    int schemaVersion();
    bool hasFullTextSearch() const { return fts_; }

    qint64 createConversation(const QString& title, const QString& systemPrompt = {},
                              const QString& reasoningEffort = {});
    bool updateConversation(const Conversation& c);
    bool deleteConversation(qint64 id);
    std::optional<Conversation> conversation(qint64 id);
    // Most recently updated first.
    QList<Conversation> conversations();

    // A finished message (user, system, tool). Returns its id, 0 on failure.
    qint64 addMessage(const ChatMessage& message);
    // An assistant reply about to stream in: stored at once, marked incomplete.
    qint64 beginReply(qint64 conversationId, const QString& model);
    // Appends what arrived since the last call, in one transaction.
    bool appendToReply(qint64 messageId, const QString& content, const QString& reasoning);
    // Marks the reply complete with what is known only at its end.
    bool finishReply(qint64 messageId, const QString& toolCallsJson, const QString& finishReason,
                     int promptTokens, int completionTokens, double tokensPerSecond);
    bool setMessageContent(qint64 messageId, const QString& content);
    // Deletes the message and every later one of its conversation.
    bool deleteFrom(qint64 messageId);
    std::optional<ChatMessage> message(qint64 id);
    QList<ChatMessage> messages(qint64 conversationId);

    // Messages whose content or reasoning contains text (case-insensitive), newest first.
    QList<SearchHit> search(const QString& text, int limit = 50);

signals:
    void conversationsChanged();
    void messagesChanged(qint64 conversationId);

private:
    bool exec(const QString& sql);
    bool migrate();
    bool migrateTo(int version);
    bool touchConversation(qint64 conversationId, qint64 nowMs);
    QList<ChatImage> images(qint64 messageId);
    bool fail(const QString& what, const QString& error);

    QString connection_;
    QSqlDatabase db_;
    QString lastError_;
    bool fts_ = false;
};

}  // namespace niwa::gui
