// Server-sent events (the WHATWG event-stream format) from bytes in any chunking: what the
// engine's streamed chat replies and its stats stream are made of.
#pragma once

#include <QByteArray>
#include <QList>
#include <QString>

namespace niwa::gui {

struct SseEvent {
    QString event;    // "message" unless the server named it
    QByteArray data;  // the data: lines joined by '\n'
    QString id;
};

class SseParser {
public:
    // Returns the events completed by this chunk.
    QList<SseEvent> feed(const QByteArray& chunk);

private:
    void takeLine(QByteArray line, QList<SseEvent>& out);

    QByteArray buffer_;
    SseEvent current_;
    bool hasData_ = false;
    bool lastWasCr_ = false;
};

}  // namespace niwa::gui
