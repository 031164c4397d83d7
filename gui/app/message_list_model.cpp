// MessageListModel: a reload that keeps the same ids only updates rows, so a streaming
// reply does not reset the view (and its scroll position) at every flush.
#include "gui/app/message_list_model.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include "gui/app/message_blocks.h"
#include "gui/core/chat_session.h"
#include "gui/core/chat_store.h"

namespace niwa::gui {

QVariantList toolCallsForView(const QString& toolCallsJson) {
    QVariantList out;
    if (toolCallsJson.isEmpty()) return out;
    for (const QJsonValue& v : QJsonDocument::fromJson(toolCallsJson.toUtf8()).array()) {
        const QJsonObject call = v.toObject();
        const QJsonObject fn = call.value(QStringLiteral("function")).toObject();
        QString args = fn.value(QStringLiteral("arguments")).toString();
        const QJsonDocument parsed = QJsonDocument::fromJson(args.toUtf8());
        if (parsed.isObject()) args = QString::fromUtf8(parsed.toJson(QJsonDocument::Indented)).trimmed();
        out.append(QVariantMap{{QStringLiteral("id"), call.value(QStringLiteral("id")).toString()},
                               {QStringLiteral("name"), fn.value(QStringLiteral("name")).toString()},
                               {QStringLiteral("arguments"), args}});
    }
    return out;
}

MessageListModel::MessageListModel(ChatStore* store, ChatSession* session, QObject* parent)
    : QAbstractListModel(parent), store_(store), session_(session) {
    connect(store_, &ChatStore::messagesChanged, this, [this](qint64 conversationId) {
        if (conversationId == session_->conversationId()) reload();
    });
    connect(session_, &ChatSession::conversationChanged, this, &MessageListModel::reload);
    connect(session_, &ChatSession::streamingChanged, this, &MessageListModel::onStreaming);
    connect(session_, &ChatSession::busyChanged, this, &MessageListModel::reload);
}

void MessageListModel::setDark(bool dark) {
    if (dark == dark_) return;
    dark_ = dark;
    emit darkChanged();
    if (!messages_.isEmpty()) emit dataChanged(index(0), index(int(messages_.size()) - 1), {BlocksRole});
}

void MessageListModel::reload() {
    const qint64 id = session_->conversationId();
    QList<ChatMessage> fresh = id && store_->isOpen() ? store_->messages(id) : QList<ChatMessage>();
    bool sameIds = fresh.size() >= messages_.size() && !messages_.isEmpty();
    for (qsizetype i = 0; sameIds && i < messages_.size(); ++i) sameIds = fresh[i].id == messages_[i].id;
    if (!sameIds) {
        beginResetModel();
        messages_ = fresh;
        endResetModel();
        emit countChanged();
        return;
    }
    const qsizetype old = messages_.size();
    for (qsizetype i = 0; i < old; ++i) messages_[i] = fresh[i];
    if (old > 0) emit dataChanged(index(0), index(int(old) - 1));
    if (fresh.size() > old) {
        beginInsertRows({}, int(old), int(fresh.size()) - 1);
        for (qsizetype i = old; i < fresh.size(); ++i) messages_.append(fresh[i]);
        endInsertRows();
        emit countChanged();
    }
}

void MessageListModel::onStreaming() {
    if (!session_->busy()) return;
    const int row = rowOfId(session_->replyMessageId());
    if (row < 0) {
        reload();  // the reply row was just created
        return;
    }
    const QModelIndex i = index(row);
    emit dataChanged(i, i, {ContentRole, BlocksRole, ReasoningRole, StreamingRole, TokensPerSecondRole});
}

int MessageListModel::rowOfId(qint64 id) const {
    for (qsizetype i = messages_.size() - 1; i >= 0; --i)
        if (messages_[i].id == id) return int(i);
    return -1;
}

QString MessageListModel::contentOf(qint64 messageId) const {
    const int row = rowOfId(messageId);
    return row < 0 ? QString() : messages_[row].content;
}

int MessageListModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(messages_.size());
}

QVariant MessageListModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= messages_.size()) return {};
    const ChatMessage& m = messages_[index.row()];
    const bool live = session_->busy() && m.id == session_->replyMessageId();
    const QString content = live ? session_->streamingContent() : m.content;
    switch (role) {
        case IdRole:
            return m.id;
        case RoleRole:
            return m.role;
        case ContentRole:
            return content;
        case BlocksRole:
            return blocksForView(content, dark_);
        case ReasoningRole:
            return live ? session_->streamingReasoning() : m.reasoning;
        case ToolCallsRole:
            return toolCallsForView(m.toolCallsJson);
        case ImagesRole: {
            QStringList urls;
            for (qsizetype i = 0; i < m.images.size(); ++i)
                urls << QStringLiteral("image://niwa/message/%1/%2").arg(m.id).arg(i);
            return urls;
        }
        case StreamingRole:
            return live;
        case TokensPerSecondRole:
            return live ? session_->tokensPerSecond() : m.tokensPerSecond;
        case CompletionTokensRole:
            return m.completionTokens;
        case FinishReasonRole:
            return m.finishReason;
        case LastRole:
            return index.row() == messages_.size() - 1;
        default:
            return {};
    }
}

QHash<int, QByteArray> MessageListModel::roleNames() const {
    return {{IdRole, "messageId"},
            {RoleRole, "role"},
            {ContentRole, "content"},
            {BlocksRole, "blocks"},
            {ReasoningRole, "reasoning"},
            {ToolCallsRole, "toolCalls"},
            {ImagesRole, "images"},
            {StreamingRole, "streaming"},
            {TokensPerSecondRole, "tokensPerSecond"},
            {CompletionTokensRole, "completionTokens"},
            {FinishReasonRole, "finishReason"},
            {LastRole, "isLast"}};
}

}  // namespace niwa::gui
