// SseParser: lines end in \n, \r\n or \r; a blank line dispatches the event.
#include "gui/core/sse_parser.h"

#include <utility>

namespace niwa::gui {

QList<SseEvent> SseParser::feed(const QByteArray& chunk) {
    QList<SseEvent> out;
    for (const char c : chunk) {
        // \r\n split across chunks: the \n after a \r ends nothing new.
        if (c == '\n' && lastWasCr_) {
            lastWasCr_ = false;
            continue;
        }
        lastWasCr_ = c == '\r';
        if (c == '\n' || c == '\r') {
            takeLine(std::exchange(buffer_, {}), out);
        } else {
            buffer_.append(c);
        }
    }
    return out;
}

void SseParser::takeLine(QByteArray line, QList<SseEvent>& out) {
    if (line.isEmpty()) {
        if (hasData_) {
            if (current_.event.isEmpty()) current_.event = QStringLiteral("message");
            out.append(std::exchange(current_, {}));
        }
        current_ = {};
        hasData_ = false;
        return;
    }
    if (line.startsWith(':')) return;  // a comment (keep-alive)
    const qsizetype colon = line.indexOf(':');
    const QByteArray field = colon < 0 ? line : line.left(colon);
    QByteArray value = colon < 0 ? QByteArray() : line.mid(colon + 1);
    if (value.startsWith(' ')) value.remove(0, 1);
    if (field == "data") {
        if (hasData_) current_.data.append('\n');
        current_.data.append(value);
        hasData_ = true;
    } else if (field == "event") {
        current_.event = QString::fromUtf8(value);
    } else if (field == "id") {
        current_.id = QString::fromUtf8(value);
    }
}

}  // namespace niwa::gui
