// LanExposure: on Windows, `status` runs unelevated through QProcess (as the user, whose WSL
// knows the distro), and enable/disable/reapply run elevated on a worker thread (runLanHelper
// waits for the UAC prompt and the helper), passing on the mode and address `status` found.
#include "gui/app/lan_exposure.h"

#include <QCoreApplication>
#include <QFileInfo>

#ifdef Q_OS_WIN
#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QStandardPaths>
#include <QThread>
#include <QTimer>
#include <memory>

#include "wsl/windows/elevation.h"
#endif

namespace niwa::gui {

#ifdef Q_OS_WIN
namespace {

constexpr int kStatusTimeoutMs = 60000;               // wsl.exe can take seconds to boot the VM
constexpr unsigned long kElevatedTimeoutMs = 300000;  // includes the time the UAC prompt waits

QString powershell() {
    return qEnvironmentVariable("SystemRoot", QStringLiteral("C:\\Windows")) +
           QStringLiteral("\\System32\\WindowsPowerShell\\v1.0\\powershell.exe");
}

std::wstring actionName(LanExposure::Action action) {
    switch (action) {
        case LanExposure::Action::Enable:
            return L"enable";
        case LanExposure::Action::Disable:
            return L"disable";
        case LanExposure::Action::Reapply:
            return L"reapply";
    }
    return L"status";
}

}  // namespace
#endif

LanExposure::LanExposure(QObject* parent) : QObject(parent) {}

LanExposure::~LanExposure() = default;

bool LanExposure::needed() {
#ifdef Q_OS_WIN
    return true;
#else
    return false;
#endif
}

QString LanExposure::script() const {
    if (!script_.isEmpty()) return script_;
    // Installed: bin\niwa.exe and wsl\windows\niwa-lan.ps1; a build tree: beside niwa.exe.
    const QString here = QCoreApplication::applicationDirPath();
    const QString installed = here + QStringLiteral("/../wsl/windows/niwa-lan.ps1");
    for (const QString& candidate : {here + QStringLiteral("/niwa-lan.ps1"), installed}) {
        if (QFileInfo::exists(candidate)) return QFileInfo(candidate).absoluteFilePath();
    }
    return QFileInfo(installed).absoluteFilePath();
}

void LanExposure::enable(int port) {
    start(Action::Enable, port);
}

void LanExposure::disable(int port) {
    start(Action::Disable, port);
}

void LanExposure::checkAndReapply(int port) {
    start(Action::Reapply, port);
}

void LanExposure::finish(Action action, Outcome outcome, const QString& message) {
    busy_ = false;
    emit finished(action, outcome, message);
    if (!busy_ && waiting_) {
        const auto [next, port] = *waiting_;
        waiting_.reset();
        start(next, port);
    }
}

#ifndef Q_OS_WIN

void LanExposure::start(Action action, int /*port*/) {
    // Binding 0.0.0.0 is all it takes here.
    finish(action, Outcome::Done, {});
}

#else

void LanExposure::start(Action action, int port) {
    if (busy_) {
        // enable and disable leave the forward pointing right: a reapply never replaces them.
        if (action != Action::Reapply || !waiting_) waiting_ = std::make_pair(action, port);
        return;
    }
    if (!QFileInfo::exists(script())) {
        finish(action, Outcome::Failed,
               tr("%1 is missing; reinstall Niwa.").arg(QDir::toNativeSeparators(script())));
        return;
    }
    busy_ = true;
    runStatus(port, [this, action, port](const Status& status) {
        if (action == Action::Reapply) {
            // Nothing to re-point: not NAT, no forward, or the forward already points right.
            if (!status.answered || !status.ok || status.mode != QLatin1String("nat") ||
                !status.needsReapply) {
                finish(action, Outcome::Done, {});
                return;
            }
        }
        runElevated(action, port, status);
    });
}

QString LanExposure::statusFile() const {
    // %LOCALAPPDATA%\Niwa\lan-status.json, the helper's own default, named explicitly: the
    // elevated helper may run as another user.
    const QString dir =
        QStandardPaths::writableLocation(QStandardPaths::GenericDataLocation) + QStringLiteral("/Niwa");
    QDir().mkpath(dir);
    return QDir::toNativeSeparators(dir + QStringLiteral("/lan-status.json"));
}

LanExposure::Status LanExposure::readStatus(const QString& file) {
    Status s;
    QFile f(file);
    if (!f.open(QIODevice::ReadOnly)) return s;
    const QJsonDocument doc = QJsonDocument::fromJson(f.readAll());
    if (!doc.isObject()) return s;
    const QJsonObject o = doc.object();
    const QJsonObject status = o.value(QLatin1String("status")).toObject();
    s.answered = true;
    s.ok = o.value(QLatin1String("ok")).toBool();
    s.error = o.value(QLatin1String("error")).toString();
    s.mode = status.value(QLatin1String("mode")).toString();
    s.address = status.value(QLatin1String("address")).toString();
    s.needsReapply = status.value(QLatin1String("needsReapply")).toBool();
    return s;
}

void LanExposure::runStatus(int port, std::function<void(const Status&)> then) {
    const QString file = statusFile();
    QFile::remove(file);  // a file left from an earlier run must not answer for this one
    auto* p = new QProcess(this);
    p->setProcessChannelMode(QProcess::MergedChannels);
    auto* timeout = new QTimer(p);
    timeout->setSingleShot(true);
    connect(timeout, &QTimer::timeout, p, [p] { p->kill(); });
    connect(p, &QProcess::finished, this, [p, file, then](int, QProcess::ExitStatus) {
        p->deleteLater();
        then(readStatus(file));
    });
    connect(p, &QProcess::errorOccurred, this, [p, then](QProcess::ProcessError error) {
        if (error != QProcess::FailedToStart) return;
        p->deleteLater();
        then(Status{});
    });
    QStringList args{
        QStringLiteral("-NoProfile"), QStringLiteral("-NonInteractive"), QStringLiteral("-ExecutionPolicy"),
        QStringLiteral("Bypass"),     QStringLiteral("-File"),           QDir::toNativeSeparators(script()),
        QStringLiteral("-Action"),    QStringLiteral("status"),          QStringLiteral("-Port"),
        QString::number(port),        QStringLiteral("-StatusFile"),     file};
    if (!distro_.isEmpty()) args << QStringLiteral("-Distro") << distro_;
    p->start(powershell(), args);
    timeout->start(kStatusTimeoutMs);
}

void LanExposure::runElevated(Action action, int port, const Status& status) {
    niwa::win::LanHelperCall call;
    call.script = QDir::toNativeSeparators(script()).toStdWString();
    call.action = actionName(action);
    call.port = port;
    call.distro = distro_.toStdWString();
    const QString file = statusFile();
    call.statusFile = file.toStdWString();
    if (status.answered && status.ok &&
        (status.mode == QLatin1String("nat") || status.mode == QLatin1String("mirrored"))) {
        call.mode = status.mode.toStdWString();
        if (status.mode == QLatin1String("nat")) call.address = status.address.toStdWString();
    }
    QFile::remove(file);
    auto result = std::make_shared<niwa::win::ElevatedResult>();
    QThread* worker =
        QThread::create([call, result] { *result = niwa::win::runLanHelper(call, kElevatedTimeoutMs); });
    connect(worker, &QThread::finished, worker, &QObject::deleteLater);
    connect(worker, &QThread::finished, this, [this, action, result, file] {
        switch (result->outcome) {
            case niwa::win::ElevatedResult::Outcome::Declined:
                finish(action, Outcome::Declined, tr("The administrator permission was declined."));
                return;
            case niwa::win::ElevatedResult::Outcome::Failed:
            case niwa::win::ElevatedResult::Outcome::TimedOut:
                finish(action, Outcome::Failed, QString::fromStdString(result->error));
                return;
            case niwa::win::ElevatedResult::Outcome::Finished:
                break;
        }
        if (result->exitCode == 0) {
            finish(action, Outcome::Done, {});
            return;
        }
        const Status after = readStatus(file);
        finish(action, Outcome::Failed,
               after.error.isEmpty() ? tr("niwa-lan.ps1 ended with exit code %1").arg(result->exitCode)
                                     : after.error);
    });
    worker->start();
}

#endif

}  // namespace niwa::gui
