// Runs niwa-engine inside a WSL2 distro through wsl.exe (the app on Windows). wsl.exe does not
// pass a kill on to the Linux process, so the engine records its pid in a file inside the
// distro and is stopped with `kill` run through wsl.exe. An engine left running by a crashed
// app is adopted when it still answers, and cleaned up when it does not.
#pragma once

#include <QProcess>
#include <QStringList>
#include <QTimer>
#include <functional>

#include "gui/core/engine_launcher.h"
#include "gui/core/wsl_output_decoder.h"

#ifdef Q_OS_WIN
#include "wsl/windows/job_object.h"
#endif

class QNetworkAccessManager;

namespace niwa::gui {

class WslLauncher : public EngineLauncher {
    Q_OBJECT

public:
    explicit WslLauncher(QObject* parent = nullptr);
    // Stops the engine (kill -TERM, then -KILL) before the app goes.
    ~WslLauncher() override;

    // wsl.exe by default; tests point it at a stand-in with the same argument grammar.
    void setWslProgram(const QString& program) { wslProgram_ = program; }
    QString wslProgram() const { return wslProgram_; }
    // Inside the distro. Default: /tmp/niwa-engine-PORT.pid.
    void setPidFile(const QString& path) { pidFile_ = path; }
    QString pidFile() const;

    // The engine's pid inside the distro, once known; 0 before.
    qint64 enginePid() const { return pid_; }
    // Whether the running engine was found running at start rather than started by us.
    bool adopted() const { return adopted_; }

    // Asks `wsl.exe -l -v` for the installed distros; answers with distrosListed.
    void listDistros();

signals:
    void distrosListed(const QStringList& names, const QString& defaultDistro, const QString& error);

protected:
    void launch() override;
    void terminate() override;

private:
    using Done = std::function<void(int exitCode, const QString& output)>;
    void runWsl(const QStringList& args, Done done);
    bool runWslBlocking(const QStringList& args, int timeoutMs, QString* output = nullptr);
    QStringList inDistro(const QStringList& command) const;
    void onLeftoverProbed(int exitCode, const QString& output);
    void probeHealthThenAdopt(qint64 pid);
    void spawn();
    void signalEngine(const QString& signal);
    void watchAdoptedExit();
    void forceKill();
    void stopNow();

    QString wslProgram_ = QStringLiteral("wsl.exe");
    QString pidFile_;
    QProcess process_;
#ifdef Q_OS_WIN
    // wsl.exe goes in it once started, so it dies with the app even when the app crashes.
    niwa::win::KillOnCloseJob job_;
#endif
    WslOutputDecoder decoder_;
    QNetworkAccessManager* probeNetwork_;
    QTimer killTimer_;
    QTimer adoptedWatch_;
    qint64 pid_ = 0;
    bool adopted_ = false;
    bool killed_ = false;
};

}  // namespace niwa::gui
