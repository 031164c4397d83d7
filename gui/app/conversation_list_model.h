// The chat page's conversation list: every conversation, newest first, or only those whose
// title or messages match the search text (with the matching snippet).
#pragma once

#include <QAbstractListModel>

#include "gui/core/conversation.h"

namespace niwa::gui {

class ChatStore;

class ConversationListModel : public QAbstractListModel {
    Q_OBJECT
    Q_PROPERTY(QString search READ search WRITE setSearch NOTIFY searchChanged)
    Q_PROPERTY(int count READ count NOTIFY countChanged)

public:
    enum Role { IdRole = Qt::UserRole + 1, TitleRole, UpdatedRole, SnippetRole };

    explicit ConversationListModel(ChatStore* store, QObject* parent = nullptr);

    QString search() const { return search_; }
    void setSearch(const QString& text);
    int count() const { return int(rows_.size()); }
    Q_INVOKABLE qint64 idAt(int row) const;
    Q_INVOKABLE int rowOf(qint64 id) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    void reload();

signals:
    void searchChanged();
    void countChanged();

private:
    struct Row {
        Conversation conversation;
        QString snippet;
    };

    ChatStore* store_;
    QString search_;
    QList<Row> rows_;
};

}  // namespace niwa::gui
