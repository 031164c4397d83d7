// EngineClient: one QNetworkAccessManager for every call to the engine.
#include "gui/core/engine_client.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>

#include "gui/core/chat_reply.h"

namespace niwa::gui {

EngineClient::EngineClient(QObject* parent) : QObject(parent), network_(new QNetworkAccessManager(this)) {
    reconnectTimer_.setSingleShot(true);
    connect(&reconnectTimer_, &QTimer::timeout, this, &EngineClient::connectStats);
    stallTimer_.setSingleShot(true);
    stallTimer_.setInterval(5000);
    connect(&stallTimer_, &QTimer::timeout, this, [this] {
        if (statsReply_) statsReply_->abort();  // ends in onStatsEnded, which reconnects
    });
}

EngineClient::~EngineClient() {
    statsWanted_ = false;
    if (statsReply_) statsReply_->disconnect(this);
    // Replies still open abort in their destructors, which needs the manager alive; children
    // would otherwise go in creation order, the manager first.
    qDeleteAll(findChildren<ChatReply*>(Qt::FindDirectChildrenOnly));
}

QNetworkRequest EngineClient::makeRequest(const QString& path) const {
    QUrl url = baseUrl_;
    const qsizetype query = path.indexOf(QLatin1Char('?'));
    url.setPath(url.path().chopped(url.path().endsWith(QLatin1Char('/')) ? 1 : 0) + path.left(query));
    if (query >= 0) url.setQuery(path.mid(query + 1));
    QNetworkRequest request(url);
    if (!apiKey_.isEmpty()) request.setRawHeader("Authorization", "Bearer " + apiKey_.toUtf8());
    return request;
}

ChatReply* EngineClient::chat(QJsonObject request) {
    request[QStringLiteral("stream")] = true;
    request[QStringLiteral("stream_options")] = QJsonObject{{QStringLiteral("include_usage"), true}};
    QNetworkRequest r = makeRequest(QStringLiteral("/v1/chat/completions"));
    r.setHeader(QNetworkRequest::ContentTypeHeader, QStringLiteral("application/json"));
    r.setRawHeader("Accept", "text/event-stream");
    return new ChatReply(network_->post(r, QJsonDocument(request).toJson(QJsonDocument::Compact)), this);
}

void EngineClient::fetchModels() {
    QNetworkReply* reply = network_->get(makeRequest(QStringLiteral("/v1/models")));
    connect(reply, &QNetworkReply::finished, this, [this, reply] {
        reply->deleteLater();
        const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
        if (status != 200) {
            emit requestFailed(
                QStringLiteral("/v1/models"),
                status ? QStringLiteral("HTTP %1: %2").arg(status).arg(QString::fromUtf8(reply->readAll()))
                       : reply->errorString());
            return;
        }
        QStringList ids;
        const QJsonArray data =
            QJsonDocument::fromJson(reply->readAll()).object().value(QStringLiteral("data")).toArray();
        for (const QJsonValue& m : data) ids << m.toObject().value(QStringLiteral("id")).toString();
        emit modelsFetched(ids);
    });
}

void EngineClient::checkHealth() {
    QNetworkRequest r = makeRequest(QStringLiteral("/health"));
    r.setTransferTimeout(5000);
    QNetworkReply* reply = network_->get(r);
    connect(reply, &QNetworkReply::finished, this, [this, reply] {
        reply->deleteLater();
        const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
        emit healthChecked(status, QJsonDocument::fromJson(reply->readAll()).object());
    });
}

void EngineClient::setReconnectDelays(int minMs, int maxMs) {
    minDelayMs_ = minMs;
    maxDelayMs_ = qMax(minMs, maxMs);
    nextDelayMs_ = minMs;
}

void EngineClient::startStats() {
    if (statsWanted_) return;
    statsWanted_ = true;
    nextDelayMs_ = minDelayMs_;
    connectStats();
}

void EngineClient::stopStats() {
    statsWanted_ = false;
    reconnectTimer_.stop();
    stallTimer_.stop();
    if (statsReply_) {
        statsReply_->disconnect(this);
        statsReply_->abort();
        statsReply_->deleteLater();
    }
    setStatsConnected(false);
}

void EngineClient::connectStats() {
    if (!statsWanted_ || statsReply_) return;
    statsParser_ = SseParser();
    QNetworkRequest r = makeRequest(QStringLiteral("/v1/engine/stats?stream=1"));
    r.setRawHeader("Accept", "text/event-stream");
    statsReply_ = network_->get(r);
    connect(statsReply_, &QNetworkReply::readyRead, this, &EngineClient::onStatsData);
    connect(statsReply_, &QNetworkReply::finished, this, &EngineClient::onStatsEnded);
    stallTimer_.start();
}

void EngineClient::onStatsData() {
    if (!statsReply_) return;
    if (statsReply_->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt() != 200) return;
    for (const SseEvent& e : statsParser_.feed(statsReply_->readAll())) {
        const QJsonDocument doc = QJsonDocument::fromJson(e.data);
        if (!doc.isObject()) continue;
        nextDelayMs_ = minDelayMs_;  // a live stream resets the back-off
        stallTimer_.start();
        setStatsConnected(true);
        emit statsReceived(doc.object());
    }
}

void EngineClient::onStatsEnded() {
    QNetworkReply* reply = statsReply_;
    statsReply_ = nullptr;
    if (reply) reply->deleteLater();
    stallTimer_.stop();
    setStatsConnected(false);
    if (!statsWanted_) return;
    reconnectTimer_.start(nextDelayMs_);
    nextDelayMs_ = qMin(nextDelayMs_ * 2, maxDelayMs_);
}

void EngineClient::setStatsConnected(bool connected) {
    if (statsConnected_ == connected) return;
    statsConnected_ = connected;
    emit statsConnectedChanged(connected);
}

}  // namespace niwa::gui
