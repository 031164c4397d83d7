// StatsModel: the latest stats object, its GPUs as rows, and the five-minute history.
#include "gui/core/stats_model.h"

#include <QDateTime>
#include <QJsonArray>

#include "gui/core/engine_client.h"

namespace niwa::gui {

StatsModel::StatsModel(QObject* parent) : QAbstractListModel(parent) {}

void StatsModel::attach(EngineClient* client) {
    connect(client, &EngineClient::statsReceived, this, qOverload<const QJsonObject&>(&StatsModel::update));
    connect(client, &EngineClient::statsConnectedChanged, this, &StatsModel::setConnected);
}

void StatsModel::update(const QJsonObject& stats) {
    update(stats, QDateTime::currentMSecsSinceEpoch());
}

void StatsModel::update(const QJsonObject& stats, qint64 atMs) {
    stats_ = stats;
    QList<QJsonObject> gpus;
    for (const QJsonValue& g : stats.value(QStringLiteral("gpus")).toArray()) gpus << g.toObject();
    // Same GPU count (the usual case): update rows in place so views keep their state.
    if (gpus.size() == gpus_.size()) {
        gpus_ = gpus;
        if (!gpus_.isEmpty()) emit dataChanged(index(0), index(int(gpus_.size()) - 1));
    } else {
        beginResetModel();
        gpus_ = gpus;
        endResetModel();
    }

    Sample s;
    s.atMs = atMs;
    s.promptTps = promptTokensPerSecond();
    s.generationTps = generationTokensPerSecond();
    s.kvUsage = kvUsage();
    s.running = running();
    s.waiting = waiting();
    for (const QJsonObject& g : gpus_)
        s.vramUsedBytes += qint64(g.value(QStringLiteral("vram_used_bytes")).toDouble());
    // One sample a second: a second event within the same second replaces the first.
    if (!history_.isEmpty() && atMs - history_.last().atMs < 1000 && atMs >= history_.last().atMs)
        history_.last() = s;
    else
        history_.append(s);
    while (!history_.isEmpty() && history_.first().atMs <= atMs - kHistoryMs) history_.removeFirst();
    emit statsChanged();
}

void StatsModel::setConnected(bool connected) {
    if (connected_ == connected) return;
    connected_ = connected;
    emit connectedChanged(connected);
}

double StatsModel::kvUsage() const {
    const qint64 total = kvBlocksTotal();
    return total > 0 ? double(kvBlocksUsed()) / double(total) : 0.0;
}

double StatsModel::promptTokensPerSecond() const {
    return section(QStringLiteral("throughput")).value(QStringLiteral("prompt_tokens_per_s")).toDouble();
}

double StatsModel::generationTokensPerSecond() const {
    return section(QStringLiteral("throughput")).value(QStringLiteral("generation_tokens_per_s")).toDouble();
}

int StatsModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(gpus_.size());
}

QVariant StatsModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= gpus_.size()) return {};
    const QJsonObject& g = gpus_[index.row()];
    const auto bytes = [&g](const char* key) { return qint64(g.value(QLatin1String(key)).toDouble()); };
    switch (role) {
        case IndexRole:
            return g.value(QStringLiteral("index")).toInt();
        case Qt::DisplayRole:
        case NameRole:
            return g.value(QStringLiteral("name")).toString();
        case VramTotalRole:
            return bytes("vram_total_bytes");
        case VramUsedRole:
            return bytes("vram_used_bytes");
        case VramEngineRole:
            return bytes("vram_engine_bytes");
        case VramUsageRole: {
            const qint64 total = bytes("vram_total_bytes");
            return total > 0 ? double(bytes("vram_used_bytes")) / double(total) : 0.0;
        }
        default:
            return {};
    }
}

QHash<int, QByteArray> StatsModel::roleNames() const {
    return {{IndexRole, "gpuIndex"},
            {NameRole, "name"},
            {VramTotalRole, "vramTotalBytes"},
            {VramUsedRole, "vramUsedBytes"},
            {VramEngineRole, "vramEngineBytes"},
            {VramUsageRole, "vramUsage"}};
}

QVariantList StatsModel::series(const QString& name) const {
    QVariantList points;
    if (history_.isEmpty()) return points;
    const qint64 newest = history_.last().atMs;
    for (const Sample& s : history_) {
        double v = 0;
        if (name == QLatin1String("promptTps"))
            v = s.promptTps;
        else if (name == QLatin1String("generationTps"))
            v = s.generationTps;
        else if (name == QLatin1String("kvUsage"))
            v = s.kvUsage;
        else if (name == QLatin1String("running"))
            v = s.running;
        else if (name == QLatin1String("waiting"))
            v = s.waiting;
        else if (name == QLatin1String("vramUsedBytes"))
            v = double(s.vramUsedBytes);
        else
            return {};
        points.append(
            QVariantMap{{QStringLiteral("t"), double(s.atMs - newest) / 1000.0}, {QStringLiteral("v"), v}});
    }
    return points;
}

}  // namespace niwa::gui
