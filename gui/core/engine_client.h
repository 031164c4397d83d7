// The app's HTTP client of niwa-engine (DESIGN.md's routes): streamed chat completions,
// /v1/models, /health, and the /v1/engine/stats?stream=1 feed, which reconnects by itself
// (with back-off) when the engine restarts.
#pragma once

#include <QJsonObject>
#include <QObject>
#include <QPointer>
#include <QStringList>
#include <QTimer>
#include <QUrl>

#include "gui/core/sse_parser.h"

class QNetworkAccessManager;
class QNetworkReply;
class QNetworkRequest;

namespace niwa::gui {

class ChatReply;

class EngineClient : public QObject {
    Q_OBJECT
    Q_PROPERTY(bool statsConnected READ statsConnected NOTIFY statsConnectedChanged)

public:
    explicit EngineClient(QObject* parent = nullptr);
    ~EngineClient() override;

    void setBaseUrl(const QUrl& url) { baseUrl_ = url; }
    QUrl baseUrl() const { return baseUrl_; }
    // Sent as "Authorization: Bearer KEY" when not empty.
    void setApiKey(const QString& key) { apiKey_ = key; }

    // POSTs an OpenAI chat request with streaming forced on (and usage asked for). The reply
    // is a child of the client; delete it when done with it.
    ChatReply* chat(QJsonObject request);

    void fetchModels();
    void checkHealth();

    void startStats();
    void stopStats();
    bool statsConnected() const { return statsConnected_; }
    // The wait before reconnecting starts at min and doubles up to max.
    void setReconnectDelays(int minMs, int maxMs);
    // No event for this long means a dead connection (the engine sends one a second).
    void setStatsStallTimeout(int ms) { stallTimer_.setInterval(ms); }

signals:
    void modelsFetched(const QStringList& ids);
    // httpStatus 0: the engine could not be reached.
    void healthChecked(int httpStatus, const QJsonObject& body);
    void requestFailed(const QString& what, const QString& error);
    void statsReceived(const QJsonObject& stats);
    void statsConnectedChanged(bool connected);

private:
    QNetworkRequest makeRequest(const QString& path) const;
    void connectStats();
    void onStatsData();
    void onStatsEnded();
    void setStatsConnected(bool connected);

    QNetworkAccessManager* network_;
    QUrl baseUrl_{QStringLiteral("http://127.0.0.1:8080")};
    QString apiKey_;

    bool statsWanted_ = false;
    bool statsConnected_ = false;
    QPointer<QNetworkReply> statsReply_;
    SseParser statsParser_;
    QTimer reconnectTimer_;
    QTimer stallTimer_;
    int minDelayMs_ = 250;
    int maxDelayMs_ = 8000;
    int nextDelayMs_ = 250;
};

}  // namespace niwa::gui
