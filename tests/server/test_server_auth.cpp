// API keys: 401s, per-key concurrency limits, keys kept out of the logs, a bad keys file, and
// the refusal to listen beyond loopback without keys.
#include <QFile>
#include <QTest>

#include "server/server_process.h"
#include "support/engine_process.h"
#include "support/temp_dir.h"

using namespace niwa::test;

class TestServerAuth : public QObject {
    Q_OBJECT

    TempDir dir;
    ServerProcess server;
    QString model;

    QString write(const QString& name, const QByteArray& text) {
        QFile f(dir.file(name));
        if (!f.open(QIODevice::WriteOnly)) return {};
        f.write(text);
        return f.fileName();
    }

private slots:
    void initTestCase() {
        model = synthetic_model("tiny");
        QVERIFY(!model.isEmpty());
        const QString keys = write("keys.txt",
                                   "# office keys\n"
                                   "sk-test-alice-4f2a alice\n"
                                   "sk-test-solo-9c1d  solo 0 1   # one request at a time\n");
        QVERIFY(server.start(model, {"--max-context", "4096", "--api-keys", keys}));
    }

    void keys() {
        QVERIFY(run_node("server_auth.mjs", server,
                         {"NIWA_KEY=sk-test-alice-4f2a", "NIWA_SOLO_KEY=sk-test-solo-9c1d"}));
    }

    void otherRoutesNeedTheKeyToo() {
        QCOMPARE(http_get(server.port(), "/v1/models").status, 401);
        QCOMPARE(http_get(server.port(), "/v1/engine/stats").status, 401);
        QCOMPARE(http_get(server.port(), "/v1/models", "sk-test-alice-4f2a").status, 200);
        QCOMPARE(http_get(server.port(), "/health").status, 200);
    }

    void keysNeverLogged() {
        QCOMPARE(server.stop(), 0);
        const QByteArray log = server.log();
        QVERIFY2(!log.contains("sk-test-"), log.constData());
        QVERIFY2(log.contains("solo"), "the key's name is what the log should show");
    }

    void badKeysFile() {
        const QString keys = write("bad.txt", "sk-1 alice\nsk-2 bob high\n");
        const EngineRun r = run_engine(
            {"serve", "--model", model, "--port", QString::number(free_loopback_port()), "--api-keys", keys});
        QVERIFY(r.exit_code != 0);
        QVERIFY2(r.err.contains("bad.txt:2") && r.err.contains("default_priority 'high'"), r.err.constData());
        QVERIFY2(!r.err.contains("sk-2"), r.err.constData());
    }

    void refusesPublicAddressWithoutKeys() {
        // Refused before anything binds: no address other than loopback is ever opened.
        const EngineRun r = run_engine({"serve", "--model", model, "--host", "0.0.0.0", "--port",
                                        QString::number(free_loopback_port())});
        QVERIFY(r.exit_code != 0);
        QVERIFY2(r.err.contains("refusing to listen on 0.0.0.0 without API keys") &&
                     r.err.contains("--allow-unauthenticated"),
                 r.err.constData());
    }
};

QTEST_GUILESS_MAIN(TestServerAuth)
#include "test_server_auth.moc"
