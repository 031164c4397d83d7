// The app as a user meets it: the real Main.qml over the real AppController (EngineClient,
// ChatSession, ChatStore), the real niwa-engine serving a tiny synthetic model. The test types a
// message into the chat box, sends it with Ctrl+Enter, and sees the streamed reply in the view
// and in the chat store's SQLite file.
#include <QQmlApplicationEngine>
#include <QQuickItem>
#include <QQuickWindow>
#include <QSignalSpy>
#include <QTest>

#include "gui/app/app_controller.h"
#include "gui/app/app_window.h"
#include "gui/app/message_list_model.h"
#include "gui/core/chat_session.h"
#include "gui/core/chat_store.h"
#include "gui/core/settings.h"
#include "gui/launcher_wait.h"
#include "support/engine_process.h"
#include "support/temp_dir.h"

using namespace niwa::gui;

namespace {

constexpr int kReplyWait = 120000;

QList<QQuickItem*> itemsNamed(QQuickItem* root, const QString& name) {
    QList<QQuickItem*> out;
    for (QQuickItem* child : root->childItems()) {
        if (child->objectName() == name) out << child;
        out << itemsNamed(child, name);
    }
    return out;
}

}  // namespace

class TestAppUi : public QObject {
    Q_OBJECT

private slots:
    void typedMessageStreamsAReplyIntoTheViewAndTheStore() {
        niwa::test::TempDir profile;
        const QString model = niwa::test::synthetic_model(QStringLiteral("tiny"));
        QVERIFY(!model.isEmpty());

        AppController app(profile.path());
        Settings* s = app.settings();
        QVERIFY(s->setEnginePath(niwa::test::engine_path()));
        QVERIFY(s->setModelPath(model));
        QVERIFY(s->setBackend(QStringLiteral("cpu")));
        QVERIFY(s->setPort(niwa::test::free_port()));
        QVERIFY(s->setMaxSeqs(2));
        QVERIFY(s->setContextLength(256));  // bounds the reply: no max_tokens is sent
        app.setupFinished();                // the form re-reads the settings

        QQmlApplicationEngine qml;
        QQuickWindow* window = loadMainWindow(qml, &app);
        QVERIFY(window);
        QVERIFY(QTest::qWaitForWindowExposed(window));
        QCOMPARE(window->property("pageName").toString(), QStringLiteral("chat"));

        app.startEngine();
        QVERIFY(niwa::test::reach(*app.launcher(), EngineLauncher::State::Ready));

        // A conversation with thinking off, so the random model's words land in content.
        const qint64 conversation = app.store()->createConversation({}, {}, QStringLiteral("off"));
        app.openConversation(conversation);
        QCOMPARE(app.conversationId(), conversation);

        auto* input = window->findChild<QQuickItem*>(QStringLiteral("chatInput"));
        QVERIFY(input);
        input->forceActiveFocus();
        QTRY_VERIFY(input->hasActiveFocus());
        for (const char c : QByteArrayLiteral("Hello Niwa")) QTest::keyClick(window, c);
        QCOMPARE(input->property("text").toString(), QStringLiteral("Hello Niwa"));

        QSignalSpy busy(app.session(), &ChatSession::busyChanged);
        QSignalSpy streaming(app.session(), &ChatSession::streamingChanged);
        QTest::keyClick(window, Qt::Key_Return, Qt::ControlModifier);
        QVERIFY2(app.session()->busy(), qPrintable(app.session()->error()));
        QCOMPARE(input->property("text").toString(), QString());  // the box empties on send
        QTRY_VERIFY_WITH_TIMEOUT(!app.session()->busy(), kReplyWait);
        QVERIFY2(app.session()->error().isEmpty(), qPrintable(app.session()->error()));
        QVERIFY(streaming.count() > 2);  // it streamed, not one lump

        // The store, read through a second connection to the same file.
        ChatStore check;
        QVERIFY(check.open(app.chatStorePath()));
        const QList<ChatMessage> stored = check.messages(conversation);
        QCOMPARE(stored.size(), 2);
        QCOMPARE(stored[0].role, QStringLiteral("user"));
        QCOMPARE(stored[0].content, QStringLiteral("Hello Niwa"));
        QCOMPARE(stored[1].role, QStringLiteral("assistant"));
        QVERIFY(stored[1].complete);
        QVERIFY(!stored[1].content.isEmpty());
        QVERIFY(stored[1].completionTokens > 0);
        QCOMPARE(check.conversation(conversation)->title, QStringLiteral("Hello Niwa"));

        // The view: two delegates, the reply's text rendered in the last one.
        auto* list = window->findChild<QQuickItem*>(QStringLiteral("messageList"));
        QVERIFY(list);
        QTRY_COMPARE(list->property("count").toInt(), 2);
        const QModelIndex last = app.messages()->index(1);
        QCOMPARE(app.messages()->data(last, MessageListModel::ContentRole).toString(), stored[1].content);
        QString shown;
        QTRY_VERIFY_WITH_TIMEOUT(
            [&] {
                shown.clear();
                for (QQuickItem* text : itemsNamed(list, QStringLiteral("messageText")))
                    shown += text->property("text").toString() + QLatin1Char('\n');
                return shown.contains(QStringLiteral("Hello Niwa")) && shown.size() > 12;
            }(),
            5000);
        // The reply's words are on screen (Markdown keeps plain words as they are).
        const QStringList words = stored[1].content.split(
            QRegularExpression(QStringLiteral("[^\\p{L}\\p{N}]+")), Qt::SkipEmptyParts);
        QVERIFY(!words.isEmpty());
        QVERIFY2(shown.contains(words.first()),
                 qPrintable(words.first() + QStringLiteral(" not in ") + shown));

        app.stopEngine();
        QVERIFY(niwa::test::reach(*app.launcher(), EngineLauncher::State::Stopped));
    }
};

QTEST_MAIN(TestAppUi)
#include "test_app_ui.moc"
