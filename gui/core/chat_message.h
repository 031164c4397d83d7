// One message of a conversation as the chat store keeps it (plain data).
#pragma once

#include <QByteArray>
#include <QList>
#include <QString>

namespace niwa::gui {

struct ChatImage {
    QString path;     // where the user dropped it from (may be gone later)
    QString mime;     // e.g. image/png
    QByteArray data;  // the image itself, so the conversation survives the file
};

struct ChatMessage {
    qint64 id = 0;
    qint64 conversationId = 0;
    QString role;  // system, user, assistant, tool
    QString content;
    QString reasoning;
    QString toolCallsJson;  // OpenAI's tool_calls array, as JSON text; empty when none
    QString toolCallId;     // role "tool": the call this answers
    QList<ChatImage> images;
    QString model;
    int promptTokens = 0;
    int completionTokens = 0;
    double tokensPerSecond = 0;
    QString finishReason;
    // False while a reply streams in, and for ever if the app died before it ended.
    bool complete = true;
    qint64 createdAtMs = 0;
    qint64 updatedAtMs = 0;
};

}  // namespace niwa::gui
