// ChatStore: SQLite through QtSql. Every write is one transaction; reads take no locks that
// a writer waits on (WAL).
#include "gui/core/chat_store.h"

#include <QAtomicInt>
#include <QDateTime>
#include <QSqlError>
#include <QSqlQuery>
#include <QVariant>

namespace niwa::gui {

namespace {

qint64 nowMs() {
    return QDateTime::currentMSecsSinceEpoch();
}

QString nextConnectionName() {
    static QAtomicInt counter;
    return QStringLiteral("niwa-chat-store-%1").arg(counter.fetchAndAddRelaxed(1));
}

// Schema steps, applied in order; step N leaves the file at version N. Never edit a step
// that has shipped: add the next one.
const QStringList kStep1 = {
    QStringLiteral("CREATE TABLE schema_version (version INTEGER NOT NULL)"),
    QStringLiteral("INSERT INTO schema_version VALUES (0)"),
    QStringLiteral("CREATE TABLE conversations (id INTEGER PRIMARY KEY, title TEXT NOT NULL DEFAULT '', "
                   "created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL)"),
    QStringLiteral("CREATE TABLE messages (id INTEGER PRIMARY KEY, conversation_id INTEGER NOT NULL "
                   "REFERENCES conversations(id) ON DELETE CASCADE, role TEXT NOT NULL, "
                   "content TEXT NOT NULL DEFAULT '', created_at INTEGER NOT NULL)"),
};
const QStringList kStep2 = {
    QStringLiteral("ALTER TABLE conversations ADD COLUMN system_prompt TEXT NOT NULL DEFAULT ''"),
    QStringLiteral("ALTER TABLE conversations ADD COLUMN reasoning_effort TEXT NOT NULL DEFAULT ''"),
    QStringLiteral("ALTER TABLE conversations ADD COLUMN model TEXT NOT NULL DEFAULT ''"),
    QStringLiteral("ALTER TABLE messages ADD COLUMN reasoning TEXT NOT NULL DEFAULT ''"),
    QStringLiteral("ALTER TABLE messages ADD COLUMN tool_calls TEXT NOT NULL DEFAULT ''"),
    QStringLiteral("ALTER TABLE messages ADD COLUMN tool_call_id TEXT NOT NULL DEFAULT ''"),
    QStringLiteral("ALTER TABLE messages ADD COLUMN model TEXT NOT NULL DEFAULT ''"),
    QStringLiteral("ALTER TABLE messages ADD COLUMN prompt_tokens INTEGER NOT NULL DEFAULT 0"),
    QStringLiteral("ALTER TABLE messages ADD COLUMN completion_tokens INTEGER NOT NULL DEFAULT 0"),
    QStringLiteral("ALTER TABLE messages ADD COLUMN tokens_per_s REAL NOT NULL DEFAULT 0"),
    QStringLiteral("ALTER TABLE messages ADD COLUMN finish_reason TEXT NOT NULL DEFAULT ''"),
    QStringLiteral("ALTER TABLE messages ADD COLUMN complete INTEGER NOT NULL DEFAULT 1"),
    QStringLiteral("ALTER TABLE messages ADD COLUMN updated_at INTEGER NOT NULL DEFAULT 0"),
    QStringLiteral("UPDATE messages SET updated_at = created_at"),
    QStringLiteral("CREATE INDEX messages_by_conversation ON messages(conversation_id, id)"),
    QStringLiteral("CREATE TABLE attachments (id INTEGER PRIMARY KEY, message_id INTEGER NOT NULL "
                   "REFERENCES messages(id) ON DELETE CASCADE, path TEXT NOT NULL DEFAULT '', "
                   "mime TEXT NOT NULL DEFAULT '', data BLOB)"),
    QStringLiteral("CREATE INDEX attachments_by_message ON attachments(message_id)"),
};
// Trigram tokens find words inside Japanese text, which has no spaces between words.
const QStringList kStep3Fts = {
    QStringLiteral("CREATE VIRTUAL TABLE messages_fts USING fts5(content, reasoning, content='messages', "
                   "content_rowid='id', tokenize='trigram')"),
    QStringLiteral("CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN "
                   "INSERT INTO messages_fts(rowid, content, reasoning) VALUES (new.id, new.content, "
                   "new.reasoning); END"),
    QStringLiteral("CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN "
                   "INSERT INTO messages_fts(messages_fts, rowid, content, reasoning) "
                   "VALUES ('delete', old.id, old.content, old.reasoning); END"),
    QStringLiteral("CREATE TRIGGER messages_fts_update AFTER UPDATE OF content, reasoning ON messages BEGIN "
                   "INSERT INTO messages_fts(messages_fts, rowid, content, reasoning) "
                   "VALUES ('delete', old.id, old.content, old.reasoning); "
                   "INSERT INTO messages_fts(rowid, content, reasoning) VALUES (new.id, new.content, "
                   "new.reasoning); END"),
    QStringLiteral("INSERT INTO messages_fts(messages_fts) VALUES ('rebuild')"),
};

const char* kMessageColumns =
    "id, conversation_id, role, content, reasoning, tool_calls, tool_call_id, model, prompt_tokens, "
    "completion_tokens, tokens_per_s, finish_reason, complete, created_at, updated_at";

ChatMessage readMessage(const QSqlQuery& q) {
    ChatMessage m;
    m.id = q.value(0).toLongLong();
    m.conversationId = q.value(1).toLongLong();
    m.role = q.value(2).toString();
    m.content = q.value(3).toString();
    m.reasoning = q.value(4).toString();
    m.toolCallsJson = q.value(5).toString();
    m.toolCallId = q.value(6).toString();
    m.model = q.value(7).toString();
    m.promptTokens = q.value(8).toInt();
    m.completionTokens = q.value(9).toInt();
    m.tokensPerSecond = q.value(10).toDouble();
    m.finishReason = q.value(11).toString();
    m.complete = q.value(12).toBool();
    m.createdAtMs = q.value(13).toLongLong();
    m.updatedAtMs = q.value(14).toLongLong();
    return m;
}

Conversation readConversation(const QSqlQuery& q) {
    Conversation c;
    c.id = q.value(0).toLongLong();
    c.title = q.value(1).toString();
    c.systemPrompt = q.value(2).toString();
    c.reasoningEffort = q.value(3).toString();
    c.model = q.value(4).toString();
    c.createdAtMs = q.value(5).toLongLong();
    c.updatedAtMs = q.value(6).toLongLong();
    return c;
}

// Qt binds a null QString as SQL NULL, which NOT NULL columns refuse.
QString text(const QString& s) {
    return s.isNull() ? QStringLiteral("") : s;
}

}  // namespace

ChatStore::ChatStore(QObject* parent) : QObject(parent), connection_(nextConnectionName()) {}

ChatStore::~ChatStore() {
    close();
}

bool ChatStore::fail(const QString& what, const QString& error) {
    lastError_ = QStringLiteral("chat store %1: %2").arg(what, error);
    qWarning("%s", qPrintable(lastError_));
    return false;
}

bool ChatStore::open(const QString& path) {
    close();
    db_ = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), connection_);
    db_.setDatabaseName(path);
    db_.setConnectOptions(QStringLiteral("QSQLITE_BUSY_TIMEOUT=5000"));
    if (!db_.open()) return fail(QStringLiteral("cannot open %1").arg(path), db_.lastError().text());
    // NORMAL with WAL: a commit survives the app being killed; only power loss can cost the
    // last few, which is the trade every desktop app makes.
    if (!exec(QStringLiteral("PRAGMA journal_mode=WAL")) ||
        !exec(QStringLiteral("PRAGMA synchronous=NORMAL")) || !exec(QStringLiteral("PRAGMA foreign_keys=ON")))
        return false;
    return migrate();
}

void ChatStore::close() {
    if (!db_.isValid()) return;
    db_.close();
    db_ = QSqlDatabase();
    QSqlDatabase::removeDatabase(connection_);
}

bool ChatStore::isOpen() const {
    return db_.isValid() && db_.isOpen();
}

bool ChatStore::exec(const QString& sql) {
    QSqlQuery q(db_);
    if (!q.exec(sql))
        return fail(QStringLiteral("query failed (%1)").arg(sql.left(80)), q.lastError().text());
    return true;
}

int ChatStore::schemaVersion() {
    QSqlQuery q(db_);
    if (!q.exec(QStringLiteral("SELECT version FROM schema_version")) || !q.next()) return 0;
    return q.value(0).toInt();
}

bool ChatStore::migrate() {
    const int from = db_.tables().contains(QStringLiteral("schema_version")) ? schemaVersion() : 0;
    if (from > kSchemaVersion)
        return fail(QStringLiteral("open"),
                    QStringLiteral("the file has schema version %1, newer than this app's %2; "
                                   "update Niwa")
                        .arg(from)
                        .arg(kSchemaVersion));
    for (int v = from + 1; v <= kSchemaVersion; ++v)
        if (!migrateTo(v)) return false;
    fts_ = db_.tables().contains(QStringLiteral("messages_fts"));
    return true;
}

bool ChatStore::migrateTo(int version) {
    QStringList steps = version == 1 ? kStep1 : version == 2 ? kStep2 : QStringList();
    if (version == 3) {
        // FTS5 is compiled into Debian's SQLite and Qt's bundled one, but not every build:
        // without it, search falls back to LIKE.
        QSqlQuery probe(db_);
        if (probe.exec(
                QStringLiteral("CREATE VIRTUAL TABLE temp.fts_probe USING fts5(x, tokenize='trigram')"))) {
            exec(QStringLiteral("DROP TABLE temp.fts_probe"));
            steps = kStep3Fts;
        }
    }
    if (!db_.transaction()) return fail(QStringLiteral("migration"), db_.lastError().text());
    for (const QString& sql : steps) {
        if (!exec(sql)) {
            db_.rollback();
            return fail(QStringLiteral("migration to version %1").arg(version), lastError_);
        }
    }
    QSqlQuery q(db_);
    q.prepare(QStringLiteral("UPDATE schema_version SET version = ?"));
    q.addBindValue(version);
    if (!q.exec() || !db_.commit()) {
        db_.rollback();
        return fail(QStringLiteral("migration to version %1").arg(version), q.lastError().text());
    }
    return true;
}

qint64 ChatStore::createConversation(const QString& title, const QString& systemPrompt,
                                     const QString& reasoningEffort) {
    const qint64 now = nowMs();
    QSqlQuery q(db_);
    q.prepare(QStringLiteral(
        "INSERT INTO conversations (title, system_prompt, reasoning_effort, created_at, updated_at) "
        "VALUES (?, ?, ?, ?, ?)"));
    q.addBindValue(text(title));
    q.addBindValue(text(systemPrompt));
    q.addBindValue(text(reasoningEffort));
    q.addBindValue(now);
    q.addBindValue(now);
    if (!q.exec()) {
        fail(QStringLiteral("create conversation"), q.lastError().text());
        return 0;
    }
    emit conversationsChanged();
    return q.lastInsertId().toLongLong();
}

bool ChatStore::updateConversation(const Conversation& c) {
    QSqlQuery q(db_);
    q.prepare(QStringLiteral(
        "UPDATE conversations SET title = ?, system_prompt = ?, reasoning_effort = ?, model = ?, "
        "updated_at = ? WHERE id = ?"));
    q.addBindValue(text(c.title));
    q.addBindValue(text(c.systemPrompt));
    q.addBindValue(text(c.reasoningEffort));
    q.addBindValue(text(c.model));
    q.addBindValue(nowMs());
    q.addBindValue(c.id);
    if (!q.exec()) return fail(QStringLiteral("update conversation"), q.lastError().text());
    emit conversationsChanged();
    return q.numRowsAffected() == 1;
}

bool ChatStore::deleteConversation(qint64 id) {
    QSqlQuery q(db_);
    q.prepare(QStringLiteral("DELETE FROM conversations WHERE id = ?"));
    q.addBindValue(id);
    if (!q.exec()) return fail(QStringLiteral("delete conversation"), q.lastError().text());
    emit conversationsChanged();
    return q.numRowsAffected() == 1;
}

std::optional<Conversation> ChatStore::conversation(qint64 id) {
    QSqlQuery q(db_);
    q.prepare(
        QStringLiteral("SELECT id, title, system_prompt, reasoning_effort, model, created_at, updated_at "
                       "FROM conversations WHERE id = ?"));
    q.addBindValue(id);
    if (!q.exec() || !q.next()) return std::nullopt;
    return readConversation(q);
}

QList<Conversation> ChatStore::conversations() {
    QList<Conversation> out;
    QSqlQuery q(db_);
    if (!q.exec(
            QStringLiteral("SELECT id, title, system_prompt, reasoning_effort, model, created_at, updated_at "
                           "FROM conversations ORDER BY updated_at DESC, id DESC")))
        return out;
    while (q.next()) out << readConversation(q);
    return out;
}

bool ChatStore::touchConversation(qint64 conversationId, qint64 now) {
    QSqlQuery q(db_);
    q.prepare(QStringLiteral("UPDATE conversations SET updated_at = ? WHERE id = ?"));
    q.addBindValue(now);
    q.addBindValue(conversationId);
    return q.exec() || fail(QStringLiteral("update conversation"), q.lastError().text());
}

qint64 ChatStore::addMessage(const ChatMessage& m) {
    const qint64 now = nowMs();
    if (!db_.transaction()) {
        fail(QStringLiteral("add message"), db_.lastError().text());
        return 0;
    }
    QSqlQuery q(db_);
    q.prepare(QStringLiteral(
        "INSERT INTO messages (conversation_id, role, content, reasoning, tool_calls, tool_call_id, "
        "model, prompt_tokens, completion_tokens, tokens_per_s, finish_reason, complete, created_at, "
        "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
    for (const QVariant& v :
         {QVariant(m.conversationId), QVariant(text(m.role)), QVariant(text(m.content)),
          QVariant(text(m.reasoning)), QVariant(text(m.toolCallsJson)), QVariant(text(m.toolCallId)),
          QVariant(text(m.model)), QVariant(m.promptTokens), QVariant(m.completionTokens),
          QVariant(m.tokensPerSecond), QVariant(text(m.finishReason)), QVariant(m.complete ? 1 : 0),
          QVariant(now), QVariant(now)})
        q.addBindValue(v);
    bool ok = q.exec();
    QString error = q.lastError().text();
    const qint64 id = q.lastInsertId().toLongLong();
    for (const ChatImage& image : m.images) {
        if (!ok) break;
        QSqlQuery a(db_);
        a.prepare(
            QStringLiteral("INSERT INTO attachments (message_id, path, mime, data) VALUES (?, ?, ?, ?)"));
        a.addBindValue(id);
        a.addBindValue(text(image.path));
        a.addBindValue(text(image.mime));
        a.addBindValue(image.data);
        ok = a.exec();
        if (!ok) error = a.lastError().text();
    }
    ok = ok && touchConversation(m.conversationId, now);
    if (!ok || !db_.commit()) {
        db_.rollback();
        fail(QStringLiteral("add message"), error);
        return 0;
    }
    emit messagesChanged(m.conversationId);
    return id;
}

qint64 ChatStore::beginReply(qint64 conversationId, const QString& model) {
    ChatMessage m;
    m.conversationId = conversationId;
    m.role = QStringLiteral("assistant");
    m.model = model;
    m.complete = false;
    return addMessage(m);
}

bool ChatStore::appendToReply(qint64 messageId, const QString& content, const QString& reasoning) {
    if (content.isEmpty() && reasoning.isEmpty()) return true;
    QSqlQuery q(db_);
    q.prepare(QStringLiteral(
        "UPDATE messages SET content = content || ?, reasoning = reasoning || ?, updated_at = ? "
        "WHERE id = ?"));
    q.addBindValue(text(content));
    q.addBindValue(text(reasoning));
    q.addBindValue(nowMs());
    q.addBindValue(messageId);
    // One statement is one transaction in SQLite: committed when exec() returns.
    if (!q.exec()) return fail(QStringLiteral("append to reply"), q.lastError().text());
    return q.numRowsAffected() == 1;
}

bool ChatStore::finishReply(qint64 messageId, const QString& toolCallsJson, const QString& finishReason,
                            int promptTokens, int completionTokens, double tokensPerSecond) {
    QSqlQuery q(db_);
    q.prepare(
        QStringLiteral("UPDATE messages SET tool_calls = ?, finish_reason = ?, prompt_tokens = ?, "
                       "completion_tokens = ?, tokens_per_s = ?, complete = 1, updated_at = ? WHERE id = ?"));
    q.addBindValue(text(toolCallsJson));
    q.addBindValue(text(finishReason));
    q.addBindValue(promptTokens);
    q.addBindValue(completionTokens);
    q.addBindValue(tokensPerSecond);
    q.addBindValue(nowMs());
    q.addBindValue(messageId);
    if (!q.exec()) return fail(QStringLiteral("finish reply"), q.lastError().text());
    if (const auto m = message(messageId)) emit messagesChanged(m->conversationId);
    return q.numRowsAffected() == 1;
}

bool ChatStore::setMessageContent(qint64 messageId, const QString& content) {
    QSqlQuery q(db_);
    q.prepare(QStringLiteral("UPDATE messages SET content = ?, updated_at = ? WHERE id = ?"));
    q.addBindValue(text(content));
    q.addBindValue(nowMs());
    q.addBindValue(messageId);
    if (!q.exec()) return fail(QStringLiteral("edit message"), q.lastError().text());
    if (const auto m = message(messageId)) emit messagesChanged(m->conversationId);
    return q.numRowsAffected() == 1;
}

bool ChatStore::deleteFrom(qint64 messageId) {
    const auto m = message(messageId);
    if (!m) return false;
    QSqlQuery q(db_);
    q.prepare(QStringLiteral("DELETE FROM messages WHERE conversation_id = ? AND id >= ?"));
    q.addBindValue(m->conversationId);
    q.addBindValue(messageId);
    if (!q.exec()) return fail(QStringLiteral("delete messages"), q.lastError().text());
    emit messagesChanged(m->conversationId);
    return true;
}

QList<ChatImage> ChatStore::images(qint64 messageId) {
    QList<ChatImage> out;
    QSqlQuery q(db_);
    q.prepare(QStringLiteral("SELECT path, mime, data FROM attachments WHERE message_id = ? ORDER BY id"));
    q.addBindValue(messageId);
    if (!q.exec()) return out;
    while (q.next()) out << ChatImage{q.value(0).toString(), q.value(1).toString(), q.value(2).toByteArray()};
    return out;
}

std::optional<ChatMessage> ChatStore::message(qint64 id) {
    QSqlQuery q(db_);
    q.prepare(QStringLiteral("SELECT %1 FROM messages WHERE id = ?").arg(QLatin1String(kMessageColumns)));
    q.addBindValue(id);
    if (!q.exec() || !q.next()) return std::nullopt;
    ChatMessage m = readMessage(q);
    m.images = images(m.id);
    return m;
}

QList<ChatMessage> ChatStore::messages(qint64 conversationId) {
    QList<ChatMessage> out;
    QSqlQuery q(db_);
    q.prepare(QStringLiteral("SELECT %1 FROM messages WHERE conversation_id = ? ORDER BY id")
                  .arg(QLatin1String(kMessageColumns)));
    q.addBindValue(conversationId);
    if (!q.exec()) return out;
    while (q.next()) out << readMessage(q);
    for (ChatMessage& m : out) m.images = images(m.id);
    return out;
}

QList<ChatStore::SearchHit> ChatStore::search(const QString& needle, int limit) {
    QList<SearchHit> out;
    const QString trimmed = needle.trimmed();
    if (trimmed.isEmpty()) return out;
    QSqlQuery q(db_);
    // Trigrams need three characters; shorter needles scan with LIKE.
    if (fts_ && trimmed.size() >= 3) {
        q.prepare(
            QStringLiteral("SELECT m.id, m.conversation_id, snippet(messages_fts, -1, '[', ']', '…', 12) "
                           "FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid "
                           "WHERE messages_fts MATCH ? ORDER BY m.id DESC LIMIT ?"));
        q.addBindValue(QLatin1Char('"') + QString(trimmed).replace(QLatin1Char('"'), QStringLiteral("\"\"")) +
                       QLatin1Char('"'));
    } else {
        q.prepare(
            QStringLiteral("SELECT id, conversation_id, substr(content, 1, 80) FROM messages "
                           "WHERE content LIKE ? ESCAPE '\\' OR reasoning LIKE ? ESCAPE '\\' "
                           "ORDER BY id DESC LIMIT ?"));
        QString pattern = trimmed;
        pattern.replace(QLatin1Char('\\'), QStringLiteral("\\\\"))
            .replace(QLatin1Char('%'), QStringLiteral("\\%"))
            .replace(QLatin1Char('_'), QStringLiteral("\\_"));
        pattern = QLatin1Char('%') + pattern + QLatin1Char('%');
        q.addBindValue(pattern);
        q.addBindValue(pattern);
    }
    q.addBindValue(limit);
    if (!q.exec()) {
        fail(QStringLiteral("search"), q.lastError().text());
        return out;
    }
    while (q.next())
        out << SearchHit{q.value(0).toLongLong(), q.value(1).toLongLong(), q.value(2).toString()};
    return out;
}

}  // namespace niwa::gui
