// The --api-keys file: generation of keys and the atomic write.
#include "gui/core/api_keys_file.h"

#include <QDir>
#include <QFileInfo>
#include <QRandomGenerator>
#include <QSaveFile>

namespace niwa::gui {

QString generateApiKey() {
    static const char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    constexpr int kAlphabetSize = int(sizeof(kAlphabet)) - 1;
    QString key = QStringLiteral("sk-niwa-");
    QRandomGenerator* random = QRandomGenerator::system();
    for (int i = 0; i < 40; ++i) key.append(QLatin1Char(kAlphabet[random->bounded(kAlphabetSize)]));
    return key;
}

QString apiKeysFileText(const QList<ApiKeyEntry>& entries) {
    QString text = QStringLiteral("# Written by Niwa. key name default_priority max_concurrent\n");
    for (const ApiKeyEntry& e : entries) {
        QString name = e.name.simplified();
        name.replace(QLatin1Char(' '), QLatin1Char('_'));
        if (name.isEmpty()) name = QStringLiteral("key");
        text += QStringLiteral("%1 %2 %3 %4\n").arg(e.key, name).arg(e.defaultPriority).arg(e.maxConcurrent);
    }
    return text;
}

bool writeApiKeysFile(const QString& path, const QList<ApiKeyEntry>& entries, QString* error) {
    const QFileInfo info(path);
    if (!QDir().mkpath(info.absolutePath())) {
        *error = QStringLiteral("could not create the folder %1").arg(info.absolutePath());
        return false;
    }
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Text)) {
        *error = QStringLiteral("could not write %1: %2").arg(path, file.errorString());
        return false;
    }
    file.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner);
    file.write(apiKeysFileText(entries).toUtf8());
    if (!file.commit()) {
        *error = QStringLiteral("could not write %1: %2").arg(path, file.errorString());
        return false;
    }
    return true;
}

}  // namespace niwa::gui
