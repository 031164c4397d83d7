// LocalLauncher: `niwa-engine serve …` as a QProcess with stdout and stderr merged.
#include "gui/core/local_launcher.h"

#include <QCoreApplication>

namespace niwa::gui {

LocalLauncher::LocalLauncher(QObject* parent) : EngineLauncher(parent) {
    process_.setProcessChannelMode(QProcess::MergedChannels);
    killTimer_.setSingleShot(true);
    connect(&killTimer_, &QTimer::timeout, &process_, &QProcess::kill);
    connect(&process_, &QProcess::readyRead, this,
            [this] { appendOutput(decoder_.decode(process_.readAll())); });
    connect(&process_, &QProcess::started, this, [this] { beginHealthPolling(); });
    connect(&process_, &QProcess::finished, this, [this](int code, QProcess::ExitStatus status) {
        killTimer_.stop();
        appendOutput(decoder_.decode(process_.readAll()));
        engineEnded(code, status == QProcess::CrashExit);
    });
    connect(&process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError error) {
        if (error != QProcess::FailedToStart) return;
        killTimer_.stop();
        launchFailed(
            QStringLiteral("could not start %1: %2").arg(process_.program(), process_.errorString()));
    });
    // The destructor may run after the event loop is gone; stopping here is the orderly path.
    if (QCoreApplication::instance())
        connect(QCoreApplication::instance(), &QCoreApplication::aboutToQuit, this, &LocalLauncher::stopNow);
}

LocalLauncher::~LocalLauncher() {
    // Signals must not reach a half-destroyed launcher while we wait.
    process_.disconnect(this);
    stopNow();
}

void LocalLauncher::launch() {
    decoder_.resetState();
    const QStringList args = settings().serveArguments();
    emitLogLine(QStringLiteral("$ %1 %2").arg(settings().enginePath, args.join(QLatin1Char(' '))));
    process_.start(settings().enginePath, args);
}

void LocalLauncher::terminate() {
    if (process_.state() == QProcess::NotRunning) {
        engineEnded(process_.exitCode(), false);
        return;
    }
    // SIGTERM on Unix: the engine drains and exits; the timer kills one that does not.
    process_.terminate();
    killTimer_.start(stopTimeout());
}

void LocalLauncher::stopNow() {
    if (process_.state() == QProcess::NotRunning) return;
    if (state() == State::Starting || state() == State::Ready) setState(State::Stopping);
    process_.terminate();
    if (!process_.waitForFinished(stopTimeout())) {
        process_.kill();
        process_.waitForFinished(5000);
    }
}

}  // namespace niwa::gui
