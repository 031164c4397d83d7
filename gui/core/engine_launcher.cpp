// EngineLauncher: the state machine shared by the local and the WSL2 launcher.
#include "gui/core/engine_launcher.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <utility>

namespace niwa::gui {

namespace {
constexpr int kRecentLines = 50;
constexpr int kReasonLines = 5;  // how much of the log a failure message quotes
const QString kStartupComplete = QStringLiteral("Application startup complete.");
}  // namespace

EngineLauncher::EngineLauncher(QObject* parent) : QObject(parent), network_(new QNetworkAccessManager(this)) {
    healthTimer_.setInterval(250);
    connect(&healthTimer_, &QTimer::timeout, this, &EngineLauncher::pollHealth);
}

EngineLauncher::~EngineLauncher() = default;

void EngineLauncher::start(const EngineSettings& settings) {
    if (state_ != State::Stopped && state_ != State::Failed) {
        emitLogLine(QStringLiteral("niwa: the engine is already running; stop it first"));
        return;
    }
    settings_ = settings;
    exitCode_ = -1;
    partialLine_.clear();
    recent_.clear();
    progress_ = 0;
    emit progressChanged(progress_);
    setState(State::Starting);
    launch();
}

void EngineLauncher::stop() {
    if (state_ != State::Starting && state_ != State::Ready) return;
    setState(State::Stopping);
    terminate();
}

void EngineLauncher::restart(const EngineSettings& settings) {
    if (state_ == State::Stopped || state_ == State::Failed) {
        start(settings);
        return;
    }
    restartPending_ = true;
    restartSettings_ = settings;
    stop();
}

void EngineLauncher::appendOutput(const QString& text) {
    partialLine_ += text;
    qsizetype nl;
    while ((nl = partialLine_.indexOf(QLatin1Char('\n'))) >= 0) {
        QString line = partialLine_.left(nl);
        partialLine_.remove(0, nl + 1);
        if (line.endsWith(QLatin1Char('\r'))) line.chop(1);
        emitLogLine(line);
    }
}

void EngineLauncher::emitLogLine(const QString& line) {
    recent_.append(line);
    if (recent_.size() > kRecentLines) recent_.removeFirst();
    emit logLine(line);
    // The engine says so before /health is first polled when it loads fast.
    if (state_ == State::Starting && line.contains(kStartupComplete)) {
        progress_ = 1;
        emit progressChanged(progress_);
        setState(State::Ready);
    }
}

void EngineLauncher::engineEnded(int exitCode, bool crashed) {
    if (!partialLine_.isEmpty()) emitLogLine(std::exchange(partialLine_, {}));
    exitCode_ = crashed ? -1 : exitCode;
    if (state_ == State::Stopping) {
        finishStop();
        return;
    }
    if (state_ == State::Stopped || state_ == State::Failed) return;
    QString reason = crashed ? QStringLiteral("niwa-engine crashed")
                             : QStringLiteral("niwa-engine exited with code %1").arg(exitCode);
    const QStringList tail = recent_.mid(qMax<qsizetype>(0, recent_.size() - kReasonLines));
    if (!tail.isEmpty()) reason += QStringLiteral(": ") + tail.join(QLatin1Char('\n'));
    setState(State::Failed, reason);
}

void EngineLauncher::launchFailed(const QString& reason) {
    exitCode_ = -1;
    if (state_ == State::Stopping) {
        finishStop();
        return;
    }
    setState(State::Failed, reason);
}

void EngineLauncher::finishStop() {
    setState(State::Stopped);
    if (!restartPending_) return;
    restartPending_ = false;
    start(restartSettings_);
}

void EngineLauncher::setState(State state, const QString& reason) {
    if (state != State::Starting) healthTimer_.stop();
    if (state_ == state && reason_ == reason) return;
    state_ = state;
    reason_ = reason;
    emit stateChanged(state, reason);
}

void EngineLauncher::beginHealthPolling() {
    if (state_ != State::Starting) return;
    healthTimer_.start();
    pollHealth();
}

void EngineLauncher::pollHealth() {
    if (healthReply_ || state_ != State::Starting) return;
    QNetworkRequest request(QUrl(settings_.localBaseUrl() + QStringLiteral("/health")));
    request.setTransferTimeout(2000);
    healthReply_ = network_->get(request);
    QNetworkReply* reply = healthReply_;
    connect(reply, &QNetworkReply::finished, this, [this, reply] { onHealthReply(reply); });
}

void EngineLauncher::onHealthReply(QNetworkReply* reply) {
    reply->deleteLater();
    if (state_ != State::Starting) return;
    const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    if (status == 200) {
        progress_ = 1;
        emit progressChanged(progress_);
        setState(State::Ready);
        return;
    }
    // 503 while loading: {"status":"loading","progress":0.4}. Anything else: not up yet.
    const QJsonObject body = QJsonDocument::fromJson(reply->readAll()).object();
    if (status == 503 && body.contains(QStringLiteral("progress"))) {
        const double p = qBound(0.0, body.value(QStringLiteral("progress")).toDouble(), 1.0);
        if (p != progress_) {
            progress_ = p;
            emit progressChanged(progress_);
        }
    }
}

}  // namespace niwa::gui
