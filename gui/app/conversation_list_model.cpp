// ConversationListModel: reloads whenever the store says the conversations changed.
#include "gui/app/conversation_list_model.h"

#include <QDateTime>
#include <QHash>

#include "gui/core/chat_store.h"

namespace niwa::gui {

ConversationListModel::ConversationListModel(ChatStore* store, QObject* parent)
    : QAbstractListModel(parent), store_(store) {
    connect(store_, &ChatStore::conversationsChanged, this, &ConversationListModel::reload);
    reload();
}

void ConversationListModel::setSearch(const QString& text) {
    if (text == search_) return;
    search_ = text;
    emit searchChanged();
    reload();
}

void ConversationListModel::reload() {
    QList<Row> rows;
    const QList<Conversation> all = store_->isOpen() ? store_->conversations() : QList<Conversation>();
    const QString needle = search_.trimmed();
    if (needle.isEmpty()) {
        for (const Conversation& c : all) rows.append({c, {}});
    } else {
        QHash<qint64, QString> snippets;
        for (const ChatStore::SearchHit& hit : store_->search(needle))
            if (!snippets.contains(hit.conversationId)) snippets.insert(hit.conversationId, hit.snippet);
        for (const Conversation& c : all) {
            if (c.title.contains(needle, Qt::CaseInsensitive) || snippets.contains(c.id))
                rows.append({c, snippets.value(c.id)});
        }
    }
    beginResetModel();
    rows_ = rows;
    endResetModel();
    emit countChanged();
}

qint64 ConversationListModel::idAt(int row) const {
    return row >= 0 && row < rows_.size() ? rows_[row].conversation.id : 0;
}

int ConversationListModel::rowOf(qint64 id) const {
    for (qsizetype i = 0; i < rows_.size(); ++i)
        if (rows_[i].conversation.id == id) return int(i);
    return -1;
}

int ConversationListModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(rows_.size());
}

QVariant ConversationListModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rows_.size()) return {};
    const Row& r = rows_[index.row()];
    switch (role) {
        case IdRole:
            return r.conversation.id;
        case TitleRole:
            return r.conversation.title;
        case UpdatedRole:
            return QDateTime::fromMSecsSinceEpoch(r.conversation.updatedAtMs);
        case SnippetRole:
            return r.snippet;
        default:
            return {};
    }
}

QHash<int, QByteArray> ConversationListModel::roleNames() const {
    return {
        {IdRole, "conversationId"}, {TitleRole, "title"}, {UpdatedRole, "updated"}, {SnippetRole, "snippet"}};
}

}  // namespace niwa::gui
