// WslLauncher: the engine as `wsl.exe -d DISTRO --cd DIR --exec sh -c 'echo $$ > PIDFILE;
// exec niwa-engine serve …'`, stopped by pid through wsl.exe.
#include "gui/core/wsl_launcher.h"

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QFileInfo>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QProcessEnvironment>
#include <QRegularExpression>
#include <QThread>

namespace niwa::gui {

namespace {

QString shellQuote(QString s) {
    s.replace(QLatin1Char('\''), QStringLiteral("'\\''"));
    return QLatin1Char('\'') + s + QLatin1Char('\'');
}

QProcessEnvironment wslEnvironment() {
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("WSL_UTF8"), QStringLiteral("1"));  // honoured by wsl.exe 0.64+
    return env;
}

// Shell test: is PID (a shell expression) a live process? A zombie counts as gone: it holds
// nothing, and it is what a killed engine is until its parent reaps it.
QString aliveTest(const QString& pid) {
    return QStringLiteral(
               "s=$(sed 's/.*) //' /proc/%1/stat 2>/dev/null | cut -c1); [ -n \"$s\" ] && [ \"$s\" != Z ]")
        .arg(pid);
}

constexpr int kProbeTimeoutMs = 30000;  // wsl.exe can take seconds to boot the VM
constexpr int kAdoptedPollMs = 300;

}  // namespace

WslLauncher::WslLauncher(QObject* parent)
    : EngineLauncher(parent), probeNetwork_(new QNetworkAccessManager(this)) {
    process_.setProcessChannelMode(QProcess::MergedChannels);
    process_.setProcessEnvironment(wslEnvironment());
    killTimer_.setSingleShot(true);
    connect(&killTimer_, &QTimer::timeout, this, &WslLauncher::forceKill);
    adoptedWatch_.setInterval(kAdoptedPollMs);
    adoptedWatch_.setSingleShot(true);
    connect(&adoptedWatch_, &QTimer::timeout, this, &WslLauncher::watchAdoptedExit);
    connect(&process_, &QProcess::readyRead, this,
            [this] { appendOutput(decoder_.decode(process_.readAll())); });
    connect(&process_, &QProcess::started, this, [this] {
#ifdef Q_OS_WIN
        if (!job_.valid() || !job_.assign(static_cast<unsigned long>(process_.processId())))
            emitLogLine(QStringLiteral("niwa: wsl.exe may outlive the app: %1")
                            .arg(QString::fromStdString(job_.error())));
#endif
        beginHealthPolling();
    });
    connect(&process_, &QProcess::finished, this, [this](int code, QProcess::ExitStatus status) {
        killTimer_.stop();
        appendOutput(decoder_.decode(process_.readAll()));
        pid_ = 0;
        engineEnded(code, status == QProcess::CrashExit);
    });
    connect(&process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError error) {
        if (error != QProcess::FailedToStart) return;
        launchFailed(QStringLiteral("could not start %1: %2").arg(wslProgram_, process_.errorString()));
    });
    if (QCoreApplication::instance())
        connect(QCoreApplication::instance(), &QCoreApplication::aboutToQuit, this, &WslLauncher::stopNow);
}

WslLauncher::~WslLauncher() {
    process_.disconnect(this);
    stopNow();
}

QString WslLauncher::pidFile() const {
    if (!pidFile_.isEmpty()) return pidFile_;
    return QStringLiteral("/tmp/niwa-engine-%1.pid").arg(settings().port);
}

QStringList WslLauncher::inDistro(const QStringList& command) const {
    QStringList args;
    if (!settings().distro.isEmpty()) args << QStringLiteral("-d") << settings().distro;
    return args + QStringList{QStringLiteral("--exec")} + command;
}

void WslLauncher::runWsl(const QStringList& args, Done done) {
    auto* p = new QProcess(this);
    p->setProcessChannelMode(QProcess::MergedChannels);
    p->setProcessEnvironment(wslEnvironment());
    connect(p, &QProcess::finished, this, [p, done](int code, QProcess::ExitStatus status) {
        WslOutputDecoder decoder;
        done(status == QProcess::CrashExit ? -1 : code, decoder.decode(p->readAll()));
        p->deleteLater();
    });
    connect(p, &QProcess::errorOccurred, this, [p, done](QProcess::ProcessError error) {
        if (error != QProcess::FailedToStart) return;
        done(-1, p->errorString());
        p->deleteLater();
    });
    p->start(wslProgram_, args);
}

bool WslLauncher::runWslBlocking(const QStringList& args, int timeoutMs, QString* output) {
    QProcess p;
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.setProcessEnvironment(wslEnvironment());
    p.start(wslProgram_, args);
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished(1000);
        return false;
    }
    if (output) *output = WslOutputDecoder().decode(p.readAll());
    return p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0;
}

void WslLauncher::launch() {
    pid_ = 0;
    adopted_ = false;
    killed_ = false;
    // One round trip (wsl.exe is slow to answer): the recorded pid if that process is alive,
    // then its command line, so a pid reused by another program is never touched.
    const QString probe = QStringLiteral(
                              "pid=$(cat %1 2>/dev/null) || exit 0; %2 || exit 0; "
                              "echo \"$pid\"; tr '\\0' ' ' < /proc/\"$pid\"/cmdline")
                              .arg(shellQuote(pidFile()), aliveTest(QStringLiteral("\"$pid\"")));
    runWsl(inDistro({QStringLiteral("sh"), QStringLiteral("-c"), probe}),
           [this](int code, const QString& out) { onLeftoverProbed(code, out); });
}

void WslLauncher::onLeftoverProbed(int exitCode, const QString& output) {
    if (state() != State::Starting) return;
    if (exitCode != 0) {
        launchFailed(QStringLiteral("could not run %1 in WSL distro '%2' (exit code %3): %4")
                         .arg(wslProgram_, settings().distro)
                         .arg(exitCode)
                         .arg(output.trimmed()));
        return;
    }
    const QStringList lines = output.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    const qint64 pid = lines.isEmpty() ? 0 : lines.first().trimmed().toLongLong();
    const QString cmdline = lines.size() > 1 ? lines[1] : QString();
    const QString engineName = QFileInfo(settings().enginePath).fileName();
    if (pid > 0 && cmdline.contains(engineName) && cmdline.contains(QStringLiteral("serve"))) {
        probeHealthThenAdopt(pid);
        return;
    }
    spawn();
}

void WslLauncher::probeHealthThenAdopt(qint64 pid) {
    QNetworkRequest request(QUrl(settings().localBaseUrl() + QStringLiteral("/health")));
    request.setTransferTimeout(3000);
    QNetworkReply* reply = probeNetwork_->get(request);
    connect(reply, &QNetworkReply::finished, this, [this, reply, pid] {
        reply->deleteLater();
        if (state() != State::Starting) return;
        const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
        if (status == 200 || status == 503) {
            pid_ = pid;
            adopted_ = true;
            emitLogLine(QStringLiteral("niwa: adopting the engine left running (pid %1)").arg(pid));
            beginHealthPolling();
            return;
        }
        // Alive but deaf (hung, or a port we no longer use): it only holds GPU memory.
        emitLogLine(
            QStringLiteral("niwa: killing an engine left running that does not answer (pid %1)").arg(pid));
        runWsl(inDistro({QStringLiteral("kill"), QStringLiteral("-KILL"), QString::number(pid)}),
               [this](int, const QString&) {
                   if (state() == State::Starting) spawn();
               });
    });
}

void WslLauncher::spawn() {
    QStringList command{shellQuote(settings().enginePath)};
    for (const QString& a : settings().serveArguments()) command << shellQuote(a);
    const QString script =
        QStringLiteral("echo $$ > %1; exec %2").arg(shellQuote(pidFile()), command.join(QLatin1Char(' ')));
    QStringList args;
    if (!settings().distro.isEmpty()) args << QStringLiteral("-d") << settings().distro;
    if (!settings().workingDirectory.isEmpty()) args << QStringLiteral("--cd") << settings().workingDirectory;
    args << QStringLiteral("--exec") << QStringLiteral("sh") << QStringLiteral("-c") << script;
    emitLogLine(QStringLiteral("$ %1 %2").arg(wslProgram_, args.join(QLatin1Char(' '))));
    decoder_ = WslOutputDecoder();
    process_.start(wslProgram_, args);
}

void WslLauncher::terminate() {
    killTimer_.start(stopTimeout());
    if (pid_ > 0) {
        signalEngine(QStringLiteral("-TERM"));
        return;
    }
    if (process_.state() == QProcess::NotRunning) {
        // Stopped while still probing for a leftover engine: nothing runs yet.
        killTimer_.stop();
        engineEnded(-1, false);
        return;
    }
    // The pid file is written by the shell before exec; read it when first needed.
    runWsl(inDistro({QStringLiteral("cat"), pidFile()}), [this](int code, const QString& out) {
        if (state() != State::Stopping) return;
        pid_ = code == 0 ? out.trimmed().toLongLong() : 0;
        if (pid_ > 0) {
            signalEngine(QStringLiteral("-TERM"));
        } else {
            process_.kill();  // it never got as far as the shell
        }
    });
}

void WslLauncher::signalEngine(const QString& signal) {
    const qint64 pid = pid_;
    runWsl(inDistro({QStringLiteral("kill"), signal, QString::number(pid)}), [this](int, const QString&) {
        if (adopted_ && state() == State::Stopping) adoptedWatch_.start();
    });
}

void WslLauncher::watchAdoptedExit() {
    if (state() != State::Stopping || !adopted_) return;
    runWsl(inDistro({QStringLiteral("sh"), QStringLiteral("-c"), aliveTest(QString::number(pid_))}),
           [this](int code, const QString&) {
               if (state() != State::Stopping) return;
               if (code == 0) {
                   adoptedWatch_.start();
                   return;
               }
               killTimer_.stop();
               pid_ = 0;
               adopted_ = false;
               engineEnded(-1, false);
           });
}

void WslLauncher::forceKill() {
    if (killed_) {
        process_.kill();  // even kill -KILL did not end wsl.exe: stop waiting for it
        return;
    }
    killed_ = true;
    emitLogLine(QStringLiteral("niwa: the engine did not stop in %1 ms; killing it").arg(stopTimeout()));
    if (pid_ > 0) signalEngine(QStringLiteral("-KILL"));
    killTimer_.start(stopTimeout());
}

void WslLauncher::stopNow() {
    const bool running = process_.state() != QProcess::NotRunning || (adopted_ && pid_ > 0);
    if (!running) return;
    if (state() == State::Starting || state() == State::Ready) setState(State::Stopping);
    adoptedWatch_.stop();
    killTimer_.stop();
    QString out;
    if (pid_ <= 0 && runWslBlocking(inDistro({QStringLiteral("cat"), pidFile()}), kProbeTimeoutMs, &out))
        pid_ = out.trimmed().toLongLong();
    if (pid_ > 0) {
        const QString pid = QString::number(pid_);
        runWslBlocking(inDistro({QStringLiteral("kill"), QStringLiteral("-TERM"), pid}), kProbeTimeoutMs);
        if (process_.state() != QProcess::NotRunning) {
            if (!process_.waitForFinished(stopTimeout()))
                runWslBlocking(inDistro({QStringLiteral("kill"), QStringLiteral("-KILL"), pid}),
                               kProbeTimeoutMs);
        } else {
            // Adopted: no process of ours to wait for; wait on the pid itself.
            QDeadlineTimer deadline(stopTimeout());
            while (!deadline.hasExpired() &&
                   runWslBlocking(inDistro({QStringLiteral("sh"), QStringLiteral("-c"), aliveTest(pid)}),
                                  kProbeTimeoutMs))
                QThread::msleep(kAdoptedPollMs);
            if (deadline.hasExpired())
                runWslBlocking(inDistro({QStringLiteral("kill"), QStringLiteral("-KILL"), pid}),
                               kProbeTimeoutMs);
        }
    }
    if (process_.state() != QProcess::NotRunning) {
        process_.kill();
        process_.waitForFinished(5000);
    }
    if (adopted_) {
        pid_ = 0;
        adopted_ = false;
        engineEnded(-1, false);
    }
}

void WslLauncher::listDistros() {
    runWsl({QStringLiteral("-l"), QStringLiteral("-v")}, [this](int code, const QString& out) {
        if (code != 0) {
            emit distrosListed(
                {}, {},
                QStringLiteral("wsl.exe -l -v failed (exit code %1): %2").arg(code).arg(out.trimmed()));
            return;
        }
        QStringList names;
        QString defaultDistro;
        // "  NAME   STATE   VERSION" then "* Ubuntu-24.04   Running   2": '*' marks the default.
        for (QString line : out.split(QLatin1Char('\n'), Qt::SkipEmptyParts)) {
            line = line.trimmed();
            const bool isDefault = line.startsWith(QLatin1Char('*'));
            if (isDefault) line = line.mid(1).trimmed();
            const QString name = line.section(QRegularExpression(QStringLiteral("\\s+")), 0, 0);
            if (name.isEmpty() || name == QStringLiteral("NAME")) continue;
            names << name;
            if (isDefault) defaultDistro = name;
        }
        emit distrosListed(names, defaultDistro, {});
    });
}

}  // namespace niwa::gui
