// Starts and stops one niwa-engine and says what it is doing. The state machine, the log
// tail and the /health polling live here; LocalLauncher and WslLauncher only know how to run
// and end the process on their platform.
#pragma once

#include <QObject>
#include <QPointer>
#include <QStringList>
#include <QTimer>

#include "gui/core/engine_settings.h"

class QNetworkAccessManager;
class QNetworkReply;

namespace niwa::gui {

class EngineLauncher : public QObject {
    Q_OBJECT
    Q_PROPERTY(State state READ state NOTIFY stateChanged)
    Q_PROPERTY(QString reason READ reason NOTIFY stateChanged)
    Q_PROPERTY(double progress READ progress NOTIFY progressChanged)

public:
    enum class State { Stopped, Starting, Ready, Stopping, Failed };
    Q_ENUM(State)

    explicit EngineLauncher(QObject* parent = nullptr);
    ~EngineLauncher() override;

    // Ignored (with a log line) unless Stopped or Failed: one engine per launcher.
    void start(const EngineSettings& settings);
    void stop();
    // Stops the running engine (if any) and starts it again with the new settings.
    void restart(const EngineSettings& settings);

    State state() const { return state_; }
    QString reason() const { return reason_; }
    double progress() const { return progress_; }
    // The engine's last exit code; -1 before it first exits, or when it crashed.
    int exitCode() const { return exitCode_; }
    QStringList recentLog() const { return recent_; }
    EngineSettings settings() const { return settings_; }

    // How long stop() waits after the polite request before it kills.
    void setStopTimeout(int ms) { stopTimeoutMs_ = ms; }
    int stopTimeout() const { return stopTimeoutMs_; }
    void setHealthInterval(int ms) { healthTimer_.setInterval(ms); }

signals:
    void stateChanged(niwa::gui::EngineLauncher::State state, const QString& reason);
    void progressChanged(double progress);
    void logLine(const QString& line);

protected:
    // Runs the engine for settings(); reports through the helpers below.
    virtual void launch() = 0;
    // Asks the engine to end, kills it after stopTimeout(); calls engineEnded() when it has.
    virtual void terminate() = 0;

    // Output of the engine, any chunking: split into lines, logged, watched for readiness.
    void appendOutput(const QString& text);
    void emitLogLine(const QString& line);
    // The engine process is gone: Stopped if we asked it to go, Failed otherwise.
    void engineEnded(int exitCode, bool crashed);
    // It could not be run at all (program missing, distro missing...).
    void launchFailed(const QString& reason);
    void setState(State state, const QString& reason = {});
    void beginHealthPolling();

private:
    void pollHealth();
    void onHealthReply(QNetworkReply* reply);
    void finishStop();

    State state_ = State::Stopped;
    QString reason_;
    double progress_ = 0;
    int exitCode_ = -1;
    EngineSettings settings_;
    QString partialLine_;
    QStringList recent_;
    int stopTimeoutMs_ = 10000;
    bool restartPending_ = false;
    EngineSettings restartSettings_;

    QNetworkAccessManager* network_;
    QTimer healthTimer_;
    QPointer<QNetworkReply> healthReply_;
};

}  // namespace niwa::gui
