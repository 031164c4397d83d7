// The engine's --api-keys file (docs/API.md): one key per line, `key name [default_priority]
// [max_concurrent]`. The app makes a strong random key when the user turns LAN serving on and
// writes the file the engine reads; the key is shown once and never logged.
#pragma once

#include <QList>
#include <QString>

namespace niwa::gui {

struct ApiKeyEntry {
    QString key;
    QString name;
    int defaultPriority = 0;
    int maxConcurrent = 0;  // 0: no limit
};

// "sk-niwa-" and 40 characters of [A-Za-z0-9] from the system's secure random source
// (about 238 bits).
QString generateApiKey();

// The file's text for entries, with a header comment.
QString apiKeysFileText(const QList<ApiKeyEntry>& entries);

// Writes the file atomically (a crash leaves the old one or the new one), readable by its owner
// only where the platform allows. False with *error set on failure.
bool writeApiKeysFile(const QString& path, const QList<ApiKeyEntry>& entries, QString* error);

}  // namespace niwa::gui
