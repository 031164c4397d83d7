// niwa: the desktop app. Parses the command line, hands over to a running instance if there is
// one, then shows the window over an AppController and puts the icon in the tray.
#include <QApplication>
#include <QIcon>
#include <QQmlApplicationEngine>
#include <QQuickWindow>
#include <cstdio>
#include <memory>

#include "gui/app/app_controller.h"
#include "gui/app/app_window.h"
#include "gui/app/command_line.h"
#include "gui/app/engine_form.h"
#include "gui/app/screenshot_tour.h"
#include "gui/app/single_instance.h"
#include "gui/app/tray_icon.h"
#include "gui/core/settings.h"
#include "gui/core/setup_checks.h"

using namespace niwa::gui;

namespace {

void applyCommandLine(const CommandLine& c, Settings* settings) {
    if (!c.model.isEmpty()) settings->setModelPath(c.model);
    if (!c.mmproj.isEmpty()) settings->setMmprojPath(c.mmproj);
    if (!c.backend.isEmpty()) settings->setBackend(c.backend);
    if (c.port) settings->setPort(c.port);
    settings->sync();
}

}  // namespace

int main(int argc, char** argv) {
    QApplication qapp(argc, argv);
    QCoreApplication::setOrganizationName(QStringLiteral("Niwa"));
    QCoreApplication::setApplicationName(QStringLiteral("Niwa"));
    QCoreApplication::setApplicationVersion(QStringLiteral(NIWA_VERSION));
    QGuiApplication::setDesktopFileName(QStringLiteral("niwa"));
    QGuiApplication::setWindowIcon(QIcon(QStringLiteral(":/icons/niwa.svg")));

    const CommandLine cli = parseCommandLine(QCoreApplication::arguments());
    if (!cli.error.isEmpty()) {
        std::fprintf(stderr, "niwa: %s\n%s", qPrintable(cli.error), qPrintable(cli.helpText));
        return 2;
    }
    if (cli.help) {
        std::printf("%s", qPrintable(cli.helpText));
        return 0;
    }

    SingleInstance instance;
    if (cli.screenshotDir.isEmpty()) {
        if (instance.notifyRunning()) {
            std::fprintf(stderr, "niwa: already running; showed its window\n");
            return 0;
        }
        instance.listen();
    }

    installTranslations(uiLanguage());
    AppController app(cli.profile);
    applyCommandLine(cli, app.settings());
    app.form()->revert();

    app.setTrayAvailable(TrayIcon::available());
    TrayIcon trayIcon(&app);
    if (TrayIcon::available()) {
        trayIcon.show();
        QApplication::setQuitOnLastWindowClosed(false);
    }

    QQmlApplicationEngine engine;
    QQuickWindow* window = loadMainWindow(engine, &app);
    if (!window) return 1;
    QObject::connect(&instance, &SingleInstance::raiseRequested, &app, [&app] {
        std::fprintf(stderr, "niwa: raised by a second launch\n");
        emit app.raiseRequested();
    });

    if (cli.start) app.startEngine();
    if (app.needsSetup() || !cli.screenshotDir.isEmpty()) app.setup()->runAll();

    std::unique_ptr<ScreenshotTour> tour;
    if (!cli.screenshotDir.isEmpty()) {
        tour = std::make_unique<ScreenshotTour>(window, &app, &trayIcon, cli.screenshotDir);
        tour->start();
    }
    return QApplication::exec();
}
