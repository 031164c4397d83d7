// StatsModel: fields from DESIGN.md's stats JSON, GPU rows, the five-minute history, and
// following a live stream from FakeEngine.
#include <QJsonArray>
#include <QSignalSpy>
#include <QTest>

#include "fake_engine.h"
#include "gui/core/engine_client.h"
#include "gui/core/stats_model.h"

using niwa::gui::StatsModel;
using niwa::test::FakeEngine;

class TestStatsModel : public QObject {
    Q_OBJECT

private slots:
    void readsEveryField() {
        StatsModel m;
        QSignalSpy changed(&m, &StatsModel::statsChanged);
        m.update(FakeEngine::sampleStats(), 1000);
        QCOMPARE(changed.count(), 1);
        QCOMPARE(m.model(), QStringLiteral("bonsai-27b"));
        QCOMPARE(m.backend(), QStringLiteral("cuda"));
        QCOMPARE(m.tensorParallel(), 2);
        QCOMPARE(m.kvFormat(), QStringLiteral("k3v2"));
        QCOMPARE(m.kvBlocksTotal(), 400);
        QCOMPARE(m.kvBlocksUsed(), 100);
        QCOMPARE(m.kvTokensCapacity(), 102400);
        QCOMPARE(m.kvTokensUsed(), 25000);
        QCOMPARE(m.kvUsage(), 0.25);
        QCOMPARE(m.slotsTotal(), 24);
        QCOMPARE(m.slotsUsed(), 3);
        QCOMPARE(m.running(), 3);
        QCOMPARE(m.waiting(), 1);
        QCOMPARE(m.preemptions(), 7);
        QCOMPARE(m.promptTokensPerSecond(), 1500.5);
        QCOMPARE(m.generationTokensPerSecond(), 62.25);
        // Properties are what QML binds to.
        QCOMPARE(m.property("kvUsage").toDouble(), 0.25);
        QCOMPARE(m.property("running").toInt(), 3);
    }

    void oneRowPerGpu() {
        StatsModel m;
        m.update(FakeEngine::sampleStats(), 1000);
        QCOMPARE(m.rowCount(), 2);
        const QModelIndex second = m.index(1);
        QCOMPARE(m.data(second, StatsModel::IndexRole).toInt(), 1);
        QCOMPARE(m.data(second, StatsModel::NameRole).toString(), QStringLiteral("NVIDIA GeForce RTX 5070"));
        QCOMPARE(m.data(second, StatsModel::VramTotalRole).toLongLong(), 12884901888LL);
        QCOMPARE(m.data(second, StatsModel::VramUsedRole).toLongLong(), 10500000000LL);
        QCOMPARE(m.data(second, StatsModel::VramEngineRole).toLongLong(), 10500000000LL - 536870912LL);
        QVERIFY(m.roleNames().values().contains("vramUsedBytes"));

        // Same GPUs: rows change in place. One GPU fewer: the model resets.
        QSignalSpy dataChanged(&m, &StatsModel::dataChanged);
        QSignalSpy reset(&m, &StatsModel::modelReset);
        m.update(FakeEngine::sampleStats(), 2000);
        QCOMPARE(dataChanged.count(), 1);
        QJsonObject one = FakeEngine::sampleStats();
        one["gpus"] = QJsonArray{one["gpus"].toArray().first()};
        m.update(one, 3000);
        QCOMPARE(reset.count(), 1);
        QCOMPARE(m.rowCount(), 1);
    }

    void historyKeepsFiveMinutesAtOneSampleASecond() {
        StatsModel m;
        QJsonObject s = FakeEngine::sampleStats();
        const qint64 t0 = 1'000'000;
        for (int i = 0; i < 400; ++i) {
            QJsonObject tp = s["throughput"].toObject();
            tp["generation_tokens_per_s"] = i;
            s["throughput"] = tp;
            m.update(s, t0 + i * 1000);
        }
        // Samples older than five minutes before the newest are gone.
        QCOMPARE(m.historySize(), 300);
        QCOMPARE(m.history().first().generationTps, 100.0);
        QCOMPARE(m.history().last().generationTps, 399.0);
        QCOMPARE(m.history().last().vramUsedBytes, 21500000000LL);

        // A second event within the same second replaces the last sample.
        QJsonObject tp = s["throughput"].toObject();
        tp["generation_tokens_per_s"] = 1234;
        s["throughput"] = tp;
        m.update(s, t0 + 399 * 1000 + 400);
        QCOMPARE(m.historySize(), 300);
        QCOMPARE(m.history().last().generationTps, 1234.0);

        const QVariantList points = m.series(QStringLiteral("generationTps"));
        QCOMPARE(points.size(), 300);
        QCOMPARE(points.last().toMap().value("t").toDouble(), 0.0);
        QCOMPARE(points.last().toMap().value("v").toDouble(), 1234.0);
        QCOMPARE(points.first().toMap().value("t").toDouble(), -299.4);
        QVERIFY(m.series(QStringLiteral("nonsense")).isEmpty());

        // After a long gap (engine down), old samples fall out at once.
        m.update(s, t0 + 2'000'000);
        QCOMPARE(m.historySize(), 1);
    }

    void followsTheEngineStream() {
        FakeEngine engine;
        QVERIFY(engine.listen());
        engine.setStatsInterval(50);
        niwa::gui::EngineClient client;
        client.setBaseUrl(QUrl(engine.baseUrl()));
        StatsModel m;
        m.attach(&client);
        QSignalSpy changed(&m, &StatsModel::statsChanged);
        client.startStats();
        QVERIFY(changed.wait(10000));
        QVERIFY(m.connected());
        QCOMPARE(m.rowCount(), 2);
        QCOMPARE(m.preemptions(), 7);
        client.stopStats();
        QVERIFY(!m.connected());
    }
};

QTEST_GUILESS_MAIN(TestStatsModel)
#include "test_stats_model.moc"
