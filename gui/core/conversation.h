// One conversation as the chat store keeps it (plain data).
#pragma once

#include <QString>

namespace niwa::gui {

struct Conversation {
    qint64 id = 0;
    QString title;
    QString systemPrompt;
    QString reasoningEffort;  // low, medium, xhigh; "off" disables thinking; empty: the engine's default
    QString model;
    qint64 createdAtMs = 0;
    qint64 updatedAtMs = 0;
};

}  // namespace niwa::gui
