// What the dashboard shows, from the engine's /v1/engine/stats (DESIGN.md): one row per GPU
// (a list model for its VRAM bars) and the rest as properties, plus a history of the last
// five minutes, one sample a second, for the charts.
#pragma once

#include <QAbstractListModel>
#include <QJsonObject>
#include <QList>
#include <QVariantList>

namespace niwa::gui {

class EngineClient;

class StatsModel : public QAbstractListModel {
    Q_OBJECT
    Q_PROPERTY(bool connected READ connected NOTIFY connectedChanged)
    Q_PROPERTY(QString model READ model NOTIFY statsChanged)
    Q_PROPERTY(QString backend READ backend NOTIFY statsChanged)
    Q_PROPERTY(int tensorParallel READ tensorParallel NOTIFY statsChanged)
    Q_PROPERTY(double uptimeSeconds READ uptimeSeconds NOTIFY statsChanged)
    Q_PROPERTY(QString kvFormat READ kvFormat NOTIFY statsChanged)
    Q_PROPERTY(qint64 kvBlocksTotal READ kvBlocksTotal NOTIFY statsChanged)
    Q_PROPERTY(qint64 kvBlocksUsed READ kvBlocksUsed NOTIFY statsChanged)
    Q_PROPERTY(qint64 kvTokensCapacity READ kvTokensCapacity NOTIFY statsChanged)
    Q_PROPERTY(qint64 kvTokensUsed READ kvTokensUsed NOTIFY statsChanged)
    Q_PROPERTY(double kvUsage READ kvUsage NOTIFY statsChanged)
    Q_PROPERTY(int slotsTotal READ slotsTotal NOTIFY statsChanged)
    Q_PROPERTY(int slotsUsed READ slotsUsed NOTIFY statsChanged)
    Q_PROPERTY(int running READ running NOTIFY statsChanged)
    Q_PROPERTY(int waiting READ waiting NOTIFY statsChanged)
    Q_PROPERTY(qint64 preemptions READ preemptions NOTIFY statsChanged)
    Q_PROPERTY(double promptTokensPerSecond READ promptTokensPerSecond NOTIFY statsChanged)
    Q_PROPERTY(double generationTokensPerSecond READ generationTokensPerSecond NOTIFY statsChanged)
    Q_PROPERTY(int historySize READ historySize NOTIFY statsChanged)

public:
    enum Role {
        IndexRole = Qt::UserRole + 1,
        NameRole,
        VramTotalRole,
        VramUsedRole,
        VramEngineRole,
        VramUsageRole
    };
    Q_ENUM(Role)

    // One history point: the values the charts draw.
    struct Sample {
        qint64 atMs = 0;
        double promptTps = 0;
        double generationTps = 0;
        double kvUsage = 0;
        int running = 0;
        int waiting = 0;
        qint64 vramUsedBytes = 0;  // all GPUs together
    };
    static constexpr qint64 kHistoryMs = 5 * 60 * 1000;

    explicit StatsModel(QObject* parent = nullptr);

    // Follows client's stats stream (connects statsReceived and statsConnectedChanged).
    void attach(EngineClient* client);
    // One stats object; atMs is when it arrived (tests pass their own clock).
    void update(const QJsonObject& stats, qint64 atMs);
    void update(const QJsonObject& stats);
    void setConnected(bool connected);

    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    bool connected() const { return connected_; }
    QString model() const { return str(QStringLiteral("model")); }
    QString backend() const { return str(QStringLiteral("backend")); }
    int tensorParallel() const { return stats_.value(QStringLiteral("tp")).toInt(); }
    double uptimeSeconds() const { return stats_.value(QStringLiteral("uptime_s")).toDouble(); }
    QString kvFormat() const {
        return section(QStringLiteral("kv")).value(QStringLiteral("format")).toString();
    }
    qint64 kvBlocksTotal() const { return integer(QStringLiteral("kv"), QStringLiteral("blocks_total")); }
    qint64 kvBlocksUsed() const { return integer(QStringLiteral("kv"), QStringLiteral("blocks_used")); }
    qint64 kvTokensCapacity() const {
        return integer(QStringLiteral("kv"), QStringLiteral("tokens_capacity"));
    }
    qint64 kvTokensUsed() const { return integer(QStringLiteral("kv"), QStringLiteral("tokens_used")); }
    double kvUsage() const;
    int slotsTotal() const { return int(integer(QStringLiteral("state"), QStringLiteral("slots_total"))); }
    int slotsUsed() const { return int(integer(QStringLiteral("state"), QStringLiteral("slots_used"))); }
    int running() const { return int(integer(QStringLiteral("requests"), QStringLiteral("running"))); }
    int waiting() const { return int(integer(QStringLiteral("requests"), QStringLiteral("waiting"))); }
    qint64 preemptions() const {
        return integer(QStringLiteral("requests"), QStringLiteral("preempted_total"));
    }
    double promptTokensPerSecond() const;
    double generationTokensPerSecond() const;

    int historySize() const { return int(history_.size()); }
    const QList<Sample>& history() const { return history_; }
    // For a chart: [{t: seconds before the newest sample (<= 0), v: value}, …], oldest first.
    // series: promptTps, generationTps, kvUsage, running, waiting, vramUsedBytes.
    Q_INVOKABLE QVariantList series(const QString& name) const;

signals:
    void statsChanged();
    void connectedChanged(bool connected);

private:
    QJsonObject section(const QString& name) const { return stats_.value(name).toObject(); }
    QString str(const QString& key) const { return stats_.value(key).toString(); }
    qint64 integer(const QString& sectionName, const QString& key) const {
        return qint64(section(sectionName).value(key).toDouble());
    }

    QJsonObject stats_;
    QList<QJsonObject> gpus_;
    QList<Sample> history_;
    bool connected_ = false;
};

}  // namespace niwa::gui
