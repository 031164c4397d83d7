// The messages of the conversation on screen, as the chat view draws them: Markdown cut into
// blocks, reasoning, tool calls and image thumbnails; the reply in progress shows the
// session's live text (fresher than the store's last flush).
#pragma once

#include <QAbstractListModel>

#include "gui/core/chat_message.h"

namespace niwa::gui {

class ChatSession;
class ChatStore;

class MessageListModel : public QAbstractListModel {
    Q_OBJECT
    Q_PROPERTY(int count READ count NOTIFY countChanged)
    Q_PROPERTY(bool dark READ dark WRITE setDark NOTIFY darkChanged)

public:
    enum Role {
        IdRole = Qt::UserRole + 1,
        RoleRole,
        ContentRole,
        BlocksRole,
        ReasoningRole,
        ToolCallsRole,
        ImagesRole,
        StreamingRole,
        TokensPerSecondRole,
        CompletionTokensRole,
        FinishReasonRole,
        LastRole  // the last message of the conversation
    };

    MessageListModel(ChatStore* store, ChatSession* session, QObject* parent = nullptr);

    int count() const { return int(messages_.size()); }
    bool dark() const { return dark_; }
    void setDark(bool dark);
    // The message's text as stored (for copy and edit).
    Q_INVOKABLE QString contentOf(qint64 messageId) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    void reload();

signals:
    void countChanged();
    void darkChanged();

private:
    void onStreaming();
    int rowOfId(qint64 id) const;

    ChatStore* store_;
    ChatSession* session_;
    QList<ChatMessage> messages_;
    bool dark_ = false;
};

// [{id, name, arguments}] from OpenAI's tool_calls JSON.
QVariantList toolCallsForView(const QString& toolCallsJson);

}  // namespace niwa::gui
