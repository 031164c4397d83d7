// Runs niwa-engine as a child process of the app (Linux, or any machine where the engine runs
// natively). Quitting the app stops an engine this launcher started.
#pragma once

#include <QProcess>
#include <QStringDecoder>
#include <QTimer>

#include "gui/core/engine_launcher.h"

namespace niwa::gui {

class LocalLauncher : public EngineLauncher {
    Q_OBJECT

public:
    explicit LocalLauncher(QObject* parent = nullptr);
    // Stops the engine (politely, then by force) before the app goes.
    ~LocalLauncher() override;

    qint64 processId() const { return process_.processId(); }

protected:
    void launch() override;
    void terminate() override;

private:
    void stopNow();

    QProcess process_;
    QStringDecoder decoder_{QStringDecoder::Utf8};
    QTimer killTimer_;
};

}  // namespace niwa::gui
