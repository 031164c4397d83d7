// ScreenshotTour: a fixed sequence driven by timers and the app's own signals.
#include "gui/app/screenshot_tour.h"

#include <QCoreApplication>
#include <QDir>
#include <QMenu>
#include <QQuickWindow>
#include <QTimer>

#include "gui/app/app_controller.h"
#include "gui/app/app_window.h"
#include "gui/app/tray_icon.h"
#include "gui/core/chat_session.h"
#include "gui/core/chat_store.h"

namespace niwa::gui {

namespace {
constexpr int kSettleMs = 900;
constexpr int kEngineWaitMs = 120000;
}  // namespace

ScreenshotTour::ScreenshotTour(QQuickWindow* window, AppController* app, TrayIcon* tray, const QString& dir,
                               QObject* parent)
    : QObject(parent), window_(window), app_(app), tray_(tray), dir_(dir) {
    suffix_ = QString::fromLocal8Bit(qgetenv("NIWA_SCREENSHOT_SUFFIX"));
    const QString pages = QString::fromLocal8Bit(qgetenv("NIWA_SCREENSHOT_PAGES"));
    pages_ = pages.isEmpty()
                 ? QStringList{QStringLiteral("chat"), QStringLiteral("dashboard"), QStringLiteral("engine"),
                               QStringLiteral("wizard"), QStringLiteral("tray")}
                 : pages.split(QLatin1Char(','));
    QDir().mkpath(dir_);
}

void ScreenshotTour::start() {
    if (app_->engineState() == QLatin1String("starting")) {
        auto* timeout = new QTimer(this);
        timeout->setSingleShot(true);
        connect(timeout, &QTimer::timeout, this, &ScreenshotTour::afterEngine);
        connect(app_, &AppController::engineChanged, this, [this, timeout] {
            if (app_->engineState() != QLatin1String("starting") && timeout->isActive()) {
                timeout->stop();
                afterEngine();
            }
        });
        timeout->start(kEngineWaitMs);
        return;
    }
    waitThen(kSettleMs, &ScreenshotTour::afterEngine);
}

void ScreenshotTour::seedHistory() {
    const bool ja = uiLanguage() == QLatin1String("ja");
    ChatStore* store = app_->store();
    const QStringList older =
        ja ? QStringList{QStringLiteral("議事録の要約"), QStringLiteral("見積書のチェック"),
                         QStringLiteral("Excel の関数について")}
           : QStringList{QStringLiteral("Meeting notes summary"), QStringLiteral("Check the quote"),
                         QStringLiteral("Excel formula help")};
    for (const QString& title : older) store->createConversation(title);
    const qint64 id = store->createConversation(
        ja ? QStringLiteral("CSV の集計スクリプト") : QStringLiteral("CSV totals script"), {},
        QStringLiteral("off"));
    ChatMessage user;
    user.conversationId = id;
    user.role = QStringLiteral("user");
    user.content = ja ? QStringLiteral("sales.csv の部署ごとの売上合計を出す Python を書いて。")
                      : QStringLiteral("Write Python that totals sales.csv by department.");
    store->addMessage(user);
    ChatMessage reply;
    reply.conversationId = id;
    reply.role = QStringLiteral("assistant");
    reply.reasoning = ja ? QStringLiteral("標準ライブラリの csv と collections.Counter で足りる。")
                         : QStringLiteral("The standard library's csv and a Counter are enough.");
    reply.content =
        (ja ? QStringLiteral("**標準ライブラリだけ**で書けます:\n\n")
            : QStringLiteral("You need **only the standard library**:\n\n")) +
        QStringLiteral(
            "```python\nimport csv\nfrom collections import Counter\n\ntotals = Counter()\n"
            "with open(\"sales.csv\", newline=\"\") as f:\n    for row in csv.DictReader(f):\n"
            "        totals[row[\"department\"]] += float(row[\"amount\"])  # yen\n\n"
            "for dept, amount in totals.most_common():\n    print(f\"{dept}: {amount:,.0f}\")\n```\n\n") +
        (ja ? QStringLiteral("- `most_common()` で金額の大きい順に並びます\n- 列名が違う場合は `department` "
                             "と `amount` を変えてください")
            : QStringLiteral("- `most_common()` lists the largest totals first\n- Change `department` and "
                             "`amount` if your columns differ"));
    reply.completionTokens = 142;
    reply.tokensPerSecond = 38.4;
    reply.finishReason = QStringLiteral("stop");
    store->addMessage(reply);
    app_->openConversation(id);
}

void ScreenshotTour::afterEngine() {
    if (qEnvironmentVariableIsSet("NIWA_SCREENSHOT_SEED")) seedHistory();
    const QString prompt = QString::fromLocal8Bit(qgetenv("NIWA_SCREENSHOT_PROMPT"));
    if (prompt.isEmpty() || app_->engineState() != QLatin1String("ready")) {
        waitThen(kSettleMs, &ScreenshotTour::next);
        return;
    }
    if (!app_->conversationId()) app_->newConversation();
    connect(app_->session(), &ChatSession::busyChanged, this, [this](bool busy) {
        if (!busy) waitThen(2500, &ScreenshotTour::afterReply);
    });
    window_->setProperty("pageName", QStringLiteral("chat"));
    app_->send(prompt);
}

void ScreenshotTour::afterReply() {
    disconnect(app_->session(), nullptr, this, nullptr);
    next();
}

void ScreenshotTour::waitThen(int ms, void (ScreenshotTour::*step)()) {
    QTimer::singleShot(ms, this, step);
}

void ScreenshotTour::next() {
    if (pages_.isEmpty()) {
        QCoreApplication::quit();
        return;
    }
    const QString page = pages_.takeFirst();
    if (page == QLatin1String("tray")) {
        tray_->menu()->popup(window_->position() + QPoint(window_->width() - 260, 60));
        QTimer::singleShot(kSettleMs, this, [this] {
            tray_->menu()->grab().save(dir_ + QStringLiteral("/tray-menu") + suffix_ +
                                       QStringLiteral(".png"));
            tray_->menu()->hide();
            next();
        });
        return;
    }
    if (page == QLatin1String("settings") || page == QLatin1String("apikey")) {
        window_->setProperty("pageName", QStringLiteral("chat"));
        QObject* dialog = window_->findChild<QObject*>(QStringLiteral("settingsDialog"));
        if (dialog) QMetaObject::invokeMethod(dialog, page == QLatin1String("settings") ? "open" : "close");
        if (page == QLatin1String("apikey")) {
            app_->setLanServing(true);  // shows the new key once
        }
        QTimer::singleShot(kSettleMs, this, [this, page] {
            shoot(page);
            next();
        });
        return;
    }
    window_->setProperty("pageName", page);
    QTimer::singleShot(kSettleMs, this, [this, page] {
        shoot(page);
        next();
    });
}

void ScreenshotTour::shoot(const QString& page) {
    const QString path = dir_ + QLatin1Char('/') + page + suffix_ + QStringLiteral(".png");
    if (!window_->grabWindow().save(path)) qWarning("niwa: could not save %s", qPrintable(path));
}

}  // namespace niwa::gui
