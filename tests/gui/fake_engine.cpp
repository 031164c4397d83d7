// FakeEngine: a small HTTP/1.1 server on QTcpServer; one request per connection at a time.
#include "fake_engine.h"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QPointer>
#include <QTcpSocket>
#include <QTimer>
#include <QUrlQuery>

namespace niwa::test {

namespace {

QByteArray reasonPhrase(int status) {
    switch (status) {
        case 200:
            return "OK";
        case 401:
            return "Unauthorized";
        case 404:
            return "Not Found";
        case 500:
            return "Internal Server Error";
        case 503:
            return "Service Unavailable";
        default:
            return "Error";
    }
}

QJsonObject errorBody(const QString& message, const QString& type) {
    return {{QStringLiteral("error"),
             QJsonObject{{QStringLiteral("message"), message}, {QStringLiteral("type"), type}}}};
}

}  // namespace

FakeEngine::FakeEngine(QObject* parent) : QObject(parent) {
    connect(&server_, &QTcpServer::newConnection, this, &FakeEngine::onNewConnection);
}

FakeEngine::~FakeEngine() {
    // The sockets die with server_, after buffers_: they must not call back into us.
    const auto sockets = buffers_.keys();
    for (QTcpSocket* s : sockets) s->disconnect(this);
}

bool FakeEngine::listen(quint16 port) {
    return server_.listen(QHostAddress::LocalHost, port);
}

void FakeEngine::shutdown() {
    server_.close();
    const auto sockets = buffers_.keys();
    for (QTcpSocket* s : sockets) s->abort();
}

QJsonObject FakeEngine::sampleStats() {
    const auto gpu = [](int index, double used) {
        return QJsonObject{{QStringLiteral("index"), index},
                           {QStringLiteral("name"), QStringLiteral("NVIDIA GeForce RTX 5070")},
                           {QStringLiteral("vram_total_bytes"), 12884901888.0},
                           {QStringLiteral("vram_used_bytes"), used},
                           {QStringLiteral("vram_engine_bytes"), used - 536870912.0}};
    };
    return {{QStringLiteral("model"), QStringLiteral("bonsai-27b")},
            {QStringLiteral("backend"), QStringLiteral("cuda")},
            {QStringLiteral("tp"), 2},
            {QStringLiteral("uptime_s"), 42},
            {QStringLiteral("gpus"), QJsonArray{gpu(0, 11000000000.0), gpu(1, 10500000000.0)}},
            {QStringLiteral("kv"), QJsonObject{{QStringLiteral("format"), QStringLiteral("k3v2")},
                                               {QStringLiteral("block_tokens"), 256},
                                               {QStringLiteral("blocks_total"), 400},
                                               {QStringLiteral("blocks_used"), 100},
                                               {QStringLiteral("tokens_capacity"), 102400},
                                               {QStringLiteral("tokens_used"), 25000}}},
            {QStringLiteral("state"),
             QJsonObject{{QStringLiteral("slots_total"), 24}, {QStringLiteral("slots_used"), 3}}},
            {QStringLiteral("requests"), QJsonObject{{QStringLiteral("running"), 3},
                                                     {QStringLiteral("waiting"), 1},
                                                     {QStringLiteral("preempted_total"), 7}}},
            {QStringLiteral("throughput"), QJsonObject{{QStringLiteral("prompt_tokens_per_s"), 1500.5},
                                                       {QStringLiteral("generation_tokens_per_s"), 62.25},
                                                       {QStringLiteral("window_s"), 5}}}};
}

void FakeEngine::onNewConnection() {
    while (QTcpSocket* s = server_.nextPendingConnection()) {
        buffers_.insert(s, {});
        connect(s, &QTcpSocket::readyRead, this, [this, s] { onReadyRead(s); });
        connect(s, &QTcpSocket::disconnected, this, [this, s] {
            buffers_.remove(s);
            s->deleteLater();
        });
    }
}

void FakeEngine::onReadyRead(QTcpSocket* socket) {
    QByteArray& buf = buffers_[socket];
    buf += socket->readAll();
    for (;;) {
        const qsizetype end = buf.indexOf("\r\n\r\n");
        if (end < 0) return;
        Request r;
        const QList<QByteArray> lines = buf.left(end).split('\n');
        const QList<QByteArray> first = lines.value(0).trimmed().split(' ');
        r.method = first.value(0);
        r.target = first.value(1);
        for (qsizetype i = 1; i < lines.size(); ++i) {
            const qsizetype colon = lines[i].indexOf(':');
            if (colon > 0)
                r.headers.insert(lines[i].left(colon).trimmed().toLower(), lines[i].mid(colon + 1).trimmed());
        }
        const qsizetype length = r.headers.value("content-length", "0").toLongLong();
        if (buf.size() < end + 4 + length) return;
        r.body = buf.mid(end + 4, length);
        buf.remove(0, end + 4 + length);
        dispatch(socket, r);
    }
}

void FakeEngine::dispatch(QTcpSocket* socket, const Request& r) {
    const QUrl url(QString::fromLatin1(r.target));
    const QString path = url.path();
    if (path == QLatin1String("/health")) {
        ++healthRequests_;
        if (!loading_.isEmpty()) {
            sendJson(socket, 503,
                     {{QStringLiteral("status"), QStringLiteral("loading")},
                      {QStringLiteral("progress"), loading_.takeFirst()}});
            return;
        }
        sendJson(socket, 200, {{QStringLiteral("status"), QStringLiteral("ok")}});
        return;
    }
    if (!apiKey_.isEmpty() && r.headers.value("authorization") != "Bearer " + apiKey_.toUtf8()) {
        sendJson(socket, 401,
                 errorBody(QStringLiteral("invalid API key"), QStringLiteral("authentication_error")));
        return;
    }
    if (path == QLatin1String("/v1/models") && r.method == "GET") {
        sendJson(socket, 200,
                 {{QStringLiteral("object"), QStringLiteral("list")},
                  {QStringLiteral("data"),
                   QJsonArray{QJsonObject{{QStringLiteral("id"), QStringLiteral("bonsai-27b")},
                                          {QStringLiteral("object"), QStringLiteral("model")},
                                          {QStringLiteral("created"), 1767225600},
                                          {QStringLiteral("owned_by"), QStringLiteral("niwa")}}}}});
        return;
    }
    if (path == QLatin1String("/v1/engine/stats") && r.method == "GET") {
        if (QUrlQuery(url).queryItemValue(QStringLiteral("stream")) == QLatin1String("1")) {
            streamStats(socket);
        } else {
            sendJson(socket, 200, stats_);
        }
        return;
    }
    if (path == QLatin1String("/v1/chat/completions") && r.method == "POST") {
        const QJsonObject request = QJsonDocument::fromJson(r.body).object();
        chatRequests_.append(request);
        authorizations_.append(r.headers.value("authorization"));
        emit chatRequestReceived();
        if (script_.errorStatus) {
            sendJson(socket, script_.errorStatus,
                     errorBody(script_.errorMessage, QStringLiteral("invalid_request_error")));
            return;
        }
        streamChat(socket, request);
        return;
    }
    sendJson(socket, 404, errorBody(QStringLiteral("no route ") + path, QStringLiteral("not_found_error")));
}

void FakeEngine::sendJson(QTcpSocket* socket, int status, const QJsonObject& body) {
    const QByteArray json = QJsonDocument(body).toJson(QJsonDocument::Compact);
    socket->write("HTTP/1.1 " + QByteArray::number(status) + ' ' + reasonPhrase(status) +
                  "\r\nContent-Type: application/json\r\nContent-Length: " + QByteArray::number(json.size()) +
                  "\r\n\r\n" + json);
}

void FakeEngine::beginStream(QTcpSocket* socket) {
    socket->write(
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
        "Transfer-Encoding: chunked\r\n\r\n");
}

void FakeEngine::sendEvent(QTcpSocket* socket, const QByteArray& data) {
    const QByteArray event = "data: " + data + "\n\n";
    socket->write(QByteArray::number(event.size(), 16) + "\r\n" + event + "\r\n");
}

void FakeEngine::streamChat(QTcpSocket* socket, const QJsonObject& request) {
    beginStream(socket);
    const bool includeUsage = request.value(QStringLiteral("stream_options"))
                                  .toObject()
                                  .value(QStringLiteral("include_usage"))
                                  .toBool();
    const QString model = request.value(QStringLiteral("model")).toString(QStringLiteral("bonsai-27b"));
    const auto chunk = [model](const QJsonArray& choices) {
        return QJsonDocument(QJsonObject{{QStringLiteral("id"), QStringLiteral("chatcmpl-fake")},
                                         {QStringLiteral("object"), QStringLiteral("chat.completion.chunk")},
                                         {QStringLiteral("created"), QDateTime::currentSecsSinceEpoch()},
                                         {QStringLiteral("model"), model},
                                         {QStringLiteral("choices"), choices}})
            .toJson(QJsonDocument::Compact);
    };
    const auto choice = [](const QJsonObject& delta, const QJsonValue& finish) {
        return QJsonArray{QJsonObject{{QStringLiteral("index"), 0},
                                      {QStringLiteral("delta"), delta},
                                      {QStringLiteral("finish_reason"), finish}}};
    };
    QList<QByteArray> events{
        chunk(choice({{QStringLiteral("role"), QStringLiteral("assistant")}}, QJsonValue::Null))};
    for (const QJsonObject& d : script_.deltas) events << chunk(choice(d, QJsonValue::Null));
    events << chunk(choice({}, script_.finishReason));
    if (includeUsage) {
        QJsonObject last = QJsonDocument::fromJson(chunk(QJsonArray{})).object();
        last[QStringLiteral("usage")] = script_.usage;
        events << QJsonDocument(last).toJson(QJsonDocument::Compact);
    }
    events << "[DONE]";
    // +1: the role chunk comes first.
    const int hold = script_.holdAfter < 0 ? -1 : script_.holdAfter + 1;

    QPointer<QTcpSocket> s(socket);
    auto* timer = new QTimer(socket);
    auto sent = std::make_shared<int>(0);
    connect(socket, &QTcpSocket::disconnected, this, [this, sent, n = int(events.size())] {
        if (*sent < n) emit streamDropped();
    });
    connect(timer, &QTimer::timeout, this, [this, s, timer, events, hold, sent] {
        if (!s) return;
        if (*sent == hold) return;  // holding: a reply that never ends until the client goes
        sendEvent(s, events[*sent]);
        if (++*sent == events.size()) {
            timer->stop();
            s->write("0\r\n\r\n");
        }
    });
    timer->start(chunkIntervalMs_);
}

void FakeEngine::streamStats(QTcpSocket* socket) {
    ++statsStreams_;
    beginStream(socket);
    sendEvent(socket, QJsonDocument(stats_).toJson(QJsonDocument::Compact));
    auto* timer = new QTimer(socket);
    QPointer<QTcpSocket> s(socket);
    connect(timer, &QTimer::timeout, this, [this, s] {
        if (s) sendEvent(s, QJsonDocument(stats_).toJson(QJsonDocument::Compact));
    });
    timer->start(statsIntervalMs_);
}

}  // namespace niwa::test
