// ChatStore on a real SQLite file: round trips, truncation, search, the v1 → current
// migration with real data, and a writer SIGKILLed mid-reply.
#include <QProcess>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTest>

#include "gui/core/chat_store.h"
#include "support/temp_dir.h"

using niwa::gui::ChatMessage;
using niwa::gui::ChatStore;

namespace {

ChatMessage userMessage(qint64 conversation, const QString& text) {
    ChatMessage m;
    m.conversationId = conversation;
    m.role = QStringLiteral("user");
    m.content = text;
    return m;
}

}  // namespace

class TestChatStore : public QObject {
    Q_OBJECT

private slots:
    void createsTheCurrentSchemaInWalMode() {
        niwa::test::TempDir dir;
        ChatStore store;
        QVERIFY2(store.open(dir.file("chats.db")), qPrintable(store.lastError()));
        QCOMPARE(store.schemaVersion(), ChatStore::kSchemaVersion);
        QVERIFY(store.hasFullTextSearch());  // Debian's SQLite has FTS5
        store.close();
        // WAL is a property of the file: visible to any other connection.
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("probe"));
        db.setDatabaseName(dir.file("chats.db"));
        QVERIFY(db.open());
        {
            QSqlQuery q(db);
            QVERIFY(q.exec(QStringLiteral("PRAGMA journal_mode")) && q.next());
            QCOMPARE(q.value(0).toString(), QStringLiteral("wal"));
        }
        db.close();
        db = QSqlDatabase();
        QSqlDatabase::removeDatabase(QStringLiteral("probe"));
    }

    void roundTripsConversationsAndMessages() {
        niwa::test::TempDir dir;
        ChatStore store;
        QVERIFY(store.open(dir.file("chats.db")));
        const qint64 c = store.createConversation(QStringLiteral("Trip"), QStringLiteral("You are terse."),
                                                  QStringLiteral("low"));
        QVERIFY(c > 0);
        ChatMessage u = userMessage(c, QStringLiteral("この写真は？"));
        u.images = {{QStringLiteral("/tmp/cat.png"), QStringLiteral("image/png"),
                     QByteArray("\x89PNG\r\n\x1a\n\0\1", 10)}};
        const qint64 uid = store.addMessage(u);
        QVERIFY(uid > 0);
        const qint64 rid = store.beginReply(c, QStringLiteral("bonsai-27b"));
        QVERIFY(store.appendToReply(rid, QStringLiteral("A "), QStringLiteral("looking")));
        QVERIFY(store.appendToReply(rid, QStringLiteral("cat."), QString()));
        QVERIFY(!store.message(rid)->complete);
        QVERIFY(store.finishReply(rid, QStringLiteral("[{\"id\":\"call_1\"}]"), QStringLiteral("stop"), 30, 2,
                                  41.5));

        QCOMPARE(store.conversation(c)->systemPrompt, QStringLiteral("You are terse."));
        QCOMPARE(store.conversation(c)->reasoningEffort, QStringLiteral("low"));
        const QList<ChatMessage> ms = store.messages(c);
        QCOMPARE(ms.size(), 2);
        QCOMPARE(ms[0].content, QStringLiteral("この写真は？"));
        QCOMPARE(ms[0].images.size(), 1);
        QCOMPARE(ms[0].images[0].data, QByteArray("\x89PNG\r\n\x1a\n\0\1", 10));
        QCOMPARE(ms[0].images[0].mime, QStringLiteral("image/png"));
        QCOMPARE(ms[1].role, QStringLiteral("assistant"));
        QCOMPARE(ms[1].content, QStringLiteral("A cat."));
        QCOMPARE(ms[1].reasoning, QStringLiteral("looking"));
        QCOMPARE(ms[1].toolCallsJson, QStringLiteral("[{\"id\":\"call_1\"}]"));
        QCOMPARE(ms[1].model, QStringLiteral("bonsai-27b"));
        QCOMPARE(ms[1].promptTokens, 30);
        QCOMPARE(ms[1].completionTokens, 2);
        QCOMPARE(ms[1].tokensPerSecond, 41.5);
        QVERIFY(ms[1].complete);
        QVERIFY(ms[1].createdAtMs > 0 && ms[1].updatedAtMs >= ms[1].createdAtMs);

        // Truncation (edit-and-resend, regenerate) and cascading deletes.
        QVERIFY(store.deleteFrom(rid));
        QCOMPARE(store.messages(c).size(), 1);
        QVERIFY(store.deleteConversation(c));
        QVERIFY(store.messages(c).isEmpty());
        QVERIFY(!store.conversation(c));
    }

    void listsConversationsNewestFirst() {
        niwa::test::TempDir dir;
        ChatStore store;
        QVERIFY(store.open(dir.file("chats.db")));
        const qint64 a = store.createConversation(QStringLiteral("a"));
        const qint64 b = store.createConversation(QStringLiteral("b"));
        QCOMPARE(store.conversations().first().id, b);
        QTest::qWait(5);  // timestamps are milliseconds
        store.addMessage(userMessage(a, QStringLiteral("bump")));
        QCOMPARE(store.conversations().first().id, a);
    }

    void searchesMessagesIncludingJapanese() {
        niwa::test::TempDir dir;
        ChatStore store;
        QVERIFY(store.open(dir.file("chats.db")));
        const qint64 c = store.createConversation(QStringLiteral("s"));
        const qint64 m1 =
            store.addMessage(userMessage(c, QStringLiteral("明日の会議の議事録を作成してください")));
        const qint64 m2 = store.addMessage(userMessage(c, QStringLiteral("The quarterly REPORT is due")));
        const qint64 r = store.beginReply(c, {});
        store.appendToReply(r, QStringLiteral("Sure"), QStringLiteral("the user wants a report summary"));

        QList<ChatStore::SearchHit> hits = store.search(QStringLiteral("議事録"));
        QCOMPARE(hits.size(), 1);
        QCOMPARE(hits[0].messageId, m1);
        QVERIFY(hits[0].snippet.contains(QStringLiteral("[議事録]")));
        hits = store.search(QStringLiteral("report"));  // case-insensitive, content and reasoning
        QCOMPARE(hits.size(), 2);
        QCOMPARE(hits[0].messageId, r);  // newest first
        QCOMPARE(hits[1].messageId, m2);
        QCOMPARE(store.search(QStringLiteral("会議")).value(0).messageId, m1);  // two characters: LIKE
        QVERIFY(store.search(QStringLiteral("\"; DROP TABLE messages; --")).isEmpty());
        QCOMPARE(store.messages(c).size(), 3);
        // Edits reach the index.
        store.setMessageContent(m2, QStringLiteral("nothing here"));
        QCOMPARE(store.search(QStringLiteral("report")).size(), 1);
    }

    void migratesVersion1WithItsData() {
        niwa::test::TempDir dir;
        const QString path = dir.file("v1.db");
        {
            // The schema as version 1 shipped it, with data in it.
            QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("v1"));
            db.setDatabaseName(path);
            QVERIFY(db.open());
            QSqlQuery q(db);
            for (const char* sql :
                 {"CREATE TABLE schema_version (version INTEGER NOT NULL)",
                  "INSERT INTO schema_version VALUES (1)",
                  "CREATE TABLE conversations (id INTEGER PRIMARY KEY, title TEXT NOT NULL DEFAULT '', "
                  "created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL)",
                  "CREATE TABLE messages (id INTEGER PRIMARY KEY, conversation_id INTEGER NOT NULL "
                  "REFERENCES conversations(id) ON DELETE CASCADE, role TEXT NOT NULL, "
                  "content TEXT NOT NULL DEFAULT '', created_at INTEGER NOT NULL)",
                  "INSERT INTO conversations VALUES (1, 'old chat', 1700000000000, 1700000005000)",
                  "INSERT INTO messages VALUES (1, 1, 'user', '古いメッセージ: hello', 1700000000000)",
                  "INSERT INTO messages VALUES (2, 1, 'assistant', 'hi there', 1700000005000)"})
                QVERIFY2(q.exec(QString::fromUtf8(sql)), sql);
            db.close();
        }
        QSqlDatabase::removeDatabase(QStringLiteral("v1"));

        ChatStore store;
        QVERIFY2(store.open(path), qPrintable(store.lastError()));
        QCOMPARE(store.schemaVersion(), ChatStore::kSchemaVersion);
        const auto c = store.conversation(1);
        QVERIFY(c);
        QCOMPARE(c->title, QStringLiteral("old chat"));
        QCOMPARE(c->systemPrompt, QString());
        const QList<ChatMessage> ms = store.messages(1);
        QCOMPARE(ms.size(), 2);
        QCOMPARE(ms[0].content, QStringLiteral("古いメッセージ: hello"));
        QCOMPARE(ms[1].content, QStringLiteral("hi there"));
        QVERIFY(ms[1].complete);                       // old replies were whole
        QCOMPARE(ms[1].updatedAtMs, 1700000005000LL);  // from created_at
        QCOMPARE(store.search(QStringLiteral("メッセージ")).value(0).messageId,
                 1);  // indexed by the migration
        // And it is usable as a current store.
        const qint64 r = store.beginReply(1, QStringLiteral("bonsai-27b"));
        QVERIFY(store.appendToReply(r, QStringLiteral("new"), QString()));
        store.close();
        ChatStore again;
        QVERIFY(again.open(path));  // a second open migrates nothing and keeps everything
        QCOMPARE(again.messages(1).size(), 3);
    }

    void refusesAFileFromANewerApp() {
        niwa::test::TempDir dir;
        {
            ChatStore store;
            QVERIFY(store.open(dir.file("chats.db")));
        }
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("bump"));
        db.setDatabaseName(dir.file("chats.db"));
        QVERIFY(db.open());
        QSqlQuery(db).exec(QStringLiteral("UPDATE schema_version SET version = 99"));
        db.close();
        db = QSqlDatabase();
        QSqlDatabase::removeDatabase(QStringLiteral("bump"));
        ChatStore store;
        QVERIFY(!store.open(dir.file("chats.db")));
        QVERIFY2(store.lastError().contains(QStringLiteral("99")), qPrintable(store.lastError()));
    }

    void keepsEverythingWrittenBeforeAKill() {
        niwa::test::TempDir dir;
        const QString path = dir.file("chats.db");
        QProcess writer;
        writer.start(QStringLiteral(CHAT_STORE_WRITER_PATH), {path});
        QVERIFY(writer.waitForStarted(10000));
        int confirmed = -1;
        QByteArray pending;
        while (confirmed < 20) {
            QVERIFY(writer.waitForReadyRead(10000));
            pending += writer.readAllStandardOutput();
            qsizetype nl;
            while ((nl = pending.indexOf('\n')) >= 0) {
                const QByteArray line = pending.left(nl);
                pending.remove(0, nl + 1);
                if (line.startsWith("written ")) confirmed = line.mid(8).toInt();
            }
        }
        writer.kill();  // SIGKILL: no destructor, no close, no checkpoint
        QVERIFY(writer.waitForFinished(10000));
        QCOMPARE(writer.exitStatus(), QProcess::CrashExit);

        ChatStore store;
        QVERIFY2(store.open(path), qPrintable(store.lastError()));
        const QList<ChatMessage> ms = store.messages(1);
        QCOMPARE(ms.size(), 2);
        const ChatMessage& reply = ms[1];
        QVERIFY(!reply.complete);  // the half reply is marked as such
        // Every piece confirmed before the kill is there, whole, in order (a few more may be).
        QString expected;
        for (int n = 0; n <= confirmed; ++n) expected += QStringLiteral("piece%1 ").arg(n);
        QVERIFY2(reply.content.startsWith(expected), qPrintable(reply.content.left(200)));
        QVERIFY(reply.content.endsWith(QLatin1Char(' ')));
        QVERIFY(reply.reasoning.startsWith(QStringLiteral("r0 r1 r2 ")));
        QCOMPARE(reply.content.count(QStringLiteral("piece")), reply.reasoning.count(QLatin1Char('r')));
    }
};

QTEST_GUILESS_MAIN(TestChatStore)
#include "test_chat_store.moc"
