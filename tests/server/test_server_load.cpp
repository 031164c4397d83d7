// Load: 64 concurrent streaming clients, rounds after rounds, every stream well-formed and the
// server's memory stable; and `niwa-engine loadtest` against the same server.
#include <QTest>

#include "server/server_process.h"
#include "support/engine_process.h"

using namespace niwa::test;

class TestServerLoad : public QObject {
    Q_OBJECT

    ServerProcess server;

private slots:
    void initTestCase() {
        const QString model = synthetic_model("tiny");
        QVERIFY(!model.isEmpty());
        QVERIFY(server.start(model, {"--max-context", "512", "--max-seqs", "8", "--max-waiting", "256"}));
    }

    void concurrentStreamsAndStableMemory() {
        // A first round warms up the allocator, thread pools and caches.
        QVERIFY(run_node("server_load.mjs", server, {"NIWA_CLIENTS=64", "NIWA_ROUNDS=1"}));
        const long before = server.rss_kb();
        QVERIFY(before > 0);
        QVERIFY(run_node("server_load.mjs", server, {"NIWA_CLIENTS=64", "NIWA_ROUNDS=2"}));
        const long after = server.rss_kb();
        qInfo("server RSS %ld kB before, %ld kB after two more rounds", before, after);
        QVERIFY2(after <= before + before / 10 + 8 * 1024,
                 qPrintable(QString("RSS grew from %1 kB to %2 kB").arg(before).arg(after)));
        const HttpReply stats = http_get(server.port(), "/v1/engine/stats");
        QCOMPARE(stats.json()["requests"]["running"].get<int>(), 0);
        QCOMPARE(stats.json()["requests"]["waiting"].get<int>(), 0);
    }

    void loadtestCommand() {
        const EngineRun r = run_engine({"loadtest", "--url", server.url(), "--clients", "4", "--requests",
                                        "2", "--max-tokens", "4", "--priority-probe", "--json"},
                                       240000);
        QVERIFY2(r.exit_code == 0, r.err.constData());
        const auto j = nlohmann::json::parse(r.out.toStdString(), nullptr, false);
        QVERIFY2(j.is_object(), r.out.constData());
        QCOMPARE(j["ok"].get<int>(), 8);
        QCOMPARE(j["failed"].get<int>(), 0);
        for (const char* k : {"ttft_s", "itl_s"}) {
            const auto& p = j[k];
            QVERIFY(p["p50"].get<double>() <= p["p90"].get<double>());
            QVERIFY(p["p90"].get<double>() <= p["p99"].get<double>());
        }
        QVERIFY(j["ttft_s"]["p50"].get<double>() > 0);
        QVERIFY(j["tokens_per_s"].get<double>() > 0);
        QVERIFY(j["priority_probe"]["ok"].get<bool>());
    }

    void cleanupTestCase() { QCOMPARE(server.stop(), 0); }
};

QTEST_GUILESS_MAIN(TestServerLoad)
#include "test_server_load.moc"
