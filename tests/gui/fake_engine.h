// A stand-in for niwa-engine's HTTP server, on loopback, speaking exactly what DESIGN.md
// promises: OpenAI chat.completion.chunk SSE ending in `data: [DONE]`, /v1/models, /health
// (503 with load progress, then 200), /v1/engine/stats and its ?stream=1 SSE. Responses are
// HTTP/1.1 with chunked bodies for streams, as cpp-httplib sends them. Tests script it.
#pragma once

#include <QHash>
#include <QJsonObject>
#include <QList>
#include <QObject>
#include <QTcpServer>

class QTcpSocket;

namespace niwa::test {

class FakeEngine : public QObject {
    Q_OBJECT

public:
    // What the next chat completions answer with.
    struct Script {
        QList<QJsonObject> deltas;  // each becomes one chunk's choices[0].delta
        QString finishReason = QStringLiteral("stop");
        QJsonObject usage;    // sent (when asked for) after the last delta
        int holdAfter = -1;   // stop streaming after this many deltas and wait
        int errorStatus = 0;  // answer this HTTP error instead
        QString errorMessage;
    };

    explicit FakeEngine(QObject* parent = nullptr);
    ~FakeEngine() override;

    bool listen(quint16 port = 0);
    quint16 port() const { return server_.serverPort(); }
    QString baseUrl() const { return QStringLiteral("http://127.0.0.1:%1").arg(port()); }
    // Stops listening and drops every connection, as a stopped engine does.
    void shutdown();

    // /health answers 503 {"status":"loading","progress":p} once for each p, then 200.
    void setLoadingSteps(const QList<double>& progress) { loading_ = progress; }
    void setApiKey(const QString& key) { apiKey_ = key; }
    void setScript(const Script& script) { script_ = script; }
    void setChunkInterval(int ms) { chunkIntervalMs_ = ms; }
    void setStats(const QJsonObject& stats) { stats_ = stats; }
    void setStatsInterval(int ms) { statsIntervalMs_ = ms; }
    static QJsonObject sampleStats();

    QList<QJsonObject> chatRequests() const { return chatRequests_; }
    QList<QByteArray> authorizations() const { return authorizations_; }
    int healthRequests() const { return healthRequests_; }
    int statsStreamsOpened() const { return statsStreams_; }

signals:
    void chatRequestReceived();
    void streamDropped();  // a client hung up on a chat stream before it ended

private:
    struct Request {
        QByteArray method;
        QByteArray target;
        QHash<QByteArray, QByteArray> headers;  // lower-case names
        QByteArray body;
    };
    void onNewConnection();
    void onReadyRead(QTcpSocket* socket);
    void dispatch(QTcpSocket* socket, const Request& r);
    void sendJson(QTcpSocket* socket, int status, const QJsonObject& body);
    void beginStream(QTcpSocket* socket);
    void sendEvent(QTcpSocket* socket, const QByteArray& data);
    void streamChat(QTcpSocket* socket, const QJsonObject& request);
    void streamStats(QTcpSocket* socket);

    QTcpServer server_;
    QList<double> loading_;
    QString apiKey_;
    Script script_;
    int chunkIntervalMs_ = 5;
    QJsonObject stats_ = sampleStats();
    int statsIntervalMs_ = 1000;
    QList<QJsonObject> chatRequests_;
    QList<QByteArray> authorizations_;
    int healthRequests_ = 0;
    int statsStreams_ = 0;
    QHash<QTcpSocket*, QByteArray> buffers_;
};

}  // namespace niwa::test
