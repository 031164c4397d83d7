// --screenshot DIR: shows each page in turn and saves what the window shows, for the docs
// and for reviewing the UI (tests/gui/take_screenshots.sh). With NIWA_SCREENSHOT_PROMPT set
// and the engine starting, it first waits for the engine and chats that prompt for real.
// Files: DIR/<page><NIWA_SCREENSHOT_SUFFIX>.png.
#pragma once

#include <QObject>
#include <QPointer>
#include <QStringList>

class QQuickWindow;

namespace niwa::gui {

class AppController;
class TrayIcon;

class ScreenshotTour : public QObject {
    Q_OBJECT

public:
    ScreenshotTour(QQuickWindow* window, AppController* app, TrayIcon* tray, const QString& dir,
                   QObject* parent = nullptr);
    void start();

private:
    void next();
    void shoot(const QString& page);
    void waitThen(int ms, void (ScreenshotTour::*step)());
    // Sample conversations (NIWA_SCREENSHOT_SEED): a chat page with history, Markdown and code.
    void seedHistory();
    void afterEngine();
    void afterReply();

    QPointer<QQuickWindow> window_;
    AppController* app_;
    TrayIcon* tray_;
    QString dir_;
    QString suffix_;
    QStringList pages_;
};

}  // namespace niwa::gui
