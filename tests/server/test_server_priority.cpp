// Priority at the HTTP level: with two seats taken by priority-10 streams, a priority-0
// request starts before they finish, whether the priority comes in the body or from the API
// key's default (the scheduler's own tests cover the step-exact rules). Parked caches of
// preempted streams leave no host RAM behind once everything finished.
#include <QFile>
#include <QTest>

#include "server/server_process.h"
#include "support/engine_process.h"
#include "support/temp_dir.h"

using namespace niwa::test;

class TestServerPriority : public QObject {
    Q_OBJECT

    TempDir dir;
    ServerProcess server;

private slots:
    void initTestCase() {
        QFile keys(dir.file("keys.txt"));
        QVERIFY(keys.open(QIODevice::WriteOnly));
        keys.write(
            "# key name default_priority max_concurrent\n"
            "sk-prio-batch-0001 batch 10\n"
            "sk-prio-chat-0002  chat  0\n");
        keys.close();
        const QString model = synthetic_model("tiny");
        QVERIFY(!model.isEmpty());
        QVERIFY(server.start(model, {"--max-context", "1024", "--max-seqs", "2", "--park-memory", "1",
                                     "--api-keys", keys.fileName()}));
    }

    void priorityInTheBody() {
        QVERIFY(run_node("server_priority.mjs", server,
                         {"NIWA_PRIORITY_MODE=field", "NIWA_KEY=sk-prio-batch-0001",
                          "NIWA_BATCH_KEY=sk-prio-batch-0001", "NIWA_CHAT_KEY=sk-prio-batch-0001"}));
    }

    void priorityFromTheKey() {
        QVERIFY(run_node("server_priority.mjs", server,
                         {"NIWA_PRIORITY_MODE=key", "NIWA_KEY=sk-prio-chat-0002",
                          "NIWA_BATCH_KEY=sk-prio-batch-0001", "NIWA_CHAT_KEY=sk-prio-chat-0002"}));
    }

    void preemptionsParkedAndFreed() {
        const HttpReply r = http_get(server.port(), "/v1/engine/stats", "sk-prio-chat-0002");
        QCOMPARE(r.status, 200);
        const nlohmann::json s = r.json();
        QVERIFY(s["requests"]["preempted_total"].get<int>() >= 2);
        // Parked or recomputed, whichever the measured prefill rate made cheaper (the
        // scheduler and engine tests check the choice itself).
        QVERIFY(s["park"]["parked_total"].get<int>() <= s["requests"]["preempted_total"].get<int>());
        QCOMPARE(s["park"]["sequences"].get<int>(), 0);
        QCOMPARE(s["park"]["bytes"].get<int64_t>(), int64_t(0));
        QCOMPARE(s["park"]["budget_bytes"].get<int64_t>(), int64_t(1) << 30);
    }

    void cleanupTestCase() { QCOMPARE(server.stop(), 0); }
};

QTEST_GUILESS_MAIN(TestServerPriority)
#include "test_server_priority.moc"
