// The server's life: /health while loading (503 with progress, other routes 503) then 200; a
// model that fails to load (503 "error", non-zero exit); JSON logs; flags that are checked.
#include <QFile>
#include <QTest>

#include "server/server_process.h"
#include "support/engine_process.h"
#include "support/temp_dir.h"

using namespace niwa::test;

namespace {

// Polls GET /health until it answers (bounded); the reply.
HttpReply first_health(int port) {
    HttpReply r;
    for (int i = 0; i < 300 && r.status == 0; ++i) {
        r = http_get(port, "/health");
        if (r.status == 0) QTest::qWait(100);
    }
    return r;
}

}  // namespace

class TestServerLifecycle : public QObject {
    Q_OBJECT

    TempDir dir;
    QString model;

private slots:
    void initTestCase() {
        model = synthetic_model("tiny");
        QVERIFY(!model.isEmpty());
    }

    void healthWhileLoadingThenReady() {
        // The hook holds loading until the file exists, so "loading" is seen without a race.
        const QString go = dir.file("go");
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("NIWA_TEST_HOLD_LOAD", go);
        ServerProcess server;
        QVERIFY(server.start(model, {}, false, env));
        const HttpReply loading = first_health(server.port());
        QCOMPARE(loading.status, 503);
        const auto j = loading.json();
        QCOMPARE(j["status"].get<std::string>(), std::string("loading"));
        const double progress = j["progress"].get<double>();
        QVERIFY(progress >= 0 && progress <= 1);

        const HttpReply other = http_post(server.port(), "/v1/chat/completions", "{\"messages\":[]}");
        QCOMPARE(other.status, 503);
        QVERIFY2(other.json()["error"]["message"].get<std::string>().find("loading") != std::string::npos,
                 other.body.c_str());
        QVERIFY(!other.retry_after.empty());
        QCOMPARE(http_get(server.port(), "/metrics").status, 503);

        QFile go_file(go);
        QVERIFY(go_file.open(QIODevice::WriteOnly));
        go_file.close();
        QVERIFY(server.wait_ready());
        const HttpReply ok = http_get(server.port(), "/health");
        QCOMPARE(ok.status, 200);
        QCOMPARE(ok.json()["status"].get<std::string>(), std::string("ok"));
        QCOMPARE(http_get(server.port(), "/v1/models").status, 200);
        QCOMPARE(server.stop(), 0);
    }

    void failedLoad() {
        QFile bad(dir.file("broken.gguf"));
        QVERIFY(bad.open(QIODevice::WriteOnly));
        bad.write("this is not a GGUF file at all");
        bad.close();
        ServerProcess server;
        QVERIFY(server.start(bad.fileName(), {}, false));
        HttpReply r = first_health(server.port());
        for (int i = 0; i < 100 && r.status == 503 && r.json().value("status", "") == "loading"; ++i) {
            QTest::qWait(50);
            r = http_get(server.port(), "/health");
        }
        QCOMPARE(r.status, 503);
        QCOMPARE(r.json()["status"].get<std::string>(), std::string("error"));
        QVERIFY(!r.json()["error"].get<std::string>().empty());
        const int code = server.wait_exit(60000);
        QVERIFY2(code > 0, server.log().constData());
        QVERIFY2(server.log().contains("the model failed to load"), server.log().constData());
    }

    void jsonLogs() {
        ServerProcess server;
        QVERIFY(server.start(model, {"--log-format", "json"}));
        QCOMPARE(server.stop(), 0);
        int lines = 0;
        for (const QByteArray& line : server.log().split('\n')) {
            if (line.isEmpty() || line == "Application startup complete.") continue;
            const auto j = nlohmann::json::parse(line.toStdString(), nullptr, false);
            QVERIFY2(j.is_object() && j.contains("msg") && j.contains("level"), line.constData());
            ++lines;
        }
        QVERIFY(lines > 0);
    }

    void helpAndCheckedFlags() {
        const EngineRun help = run_engine({"serve", "--help"});
        QCOMPARE(help.exit_code, 0);
        for (const char* flag :
             {"--mmproj", "--mem-fraction", "--vram-limit", "--kv-format", "--api-keys", "not used yet"})
            QVERIFY2(help.out.contains(flag), flag);
        const QString port = QString::number(free_loopback_port());
        const EngineRun kv = run_engine({"serve", "--model", model, "--port", port, "--kv-format", "q9"});
        QCOMPARE(kv.exit_code, 2);
        QVERIFY2(kv.err.contains("--kv-format must be one of"), kv.err.constData());
        const EngineRun frac =
            run_engine({"serve", "--model", model, "--port", port, "--mem-fraction", "1.5"});
        QCOMPARE(frac.exit_code, 2);
        QVERIFY2(frac.err.contains("--mem-fraction must be in (0, 1]"), frac.err.constData());
        const EngineRun vram = run_engine({"serve", "--model", model, "--port", port, "--vram-limit", "0"});
        QCOMPARE(vram.exit_code, 2);
        QVERIFY2(vram.err.contains("--vram-limit must be a size in GiB"), vram.err.constData());
        const EngineRun prec = run_engine({"serve", "--model", model, "--port", port, "--precision", "fp8"});
        QCOMPARE(prec.exit_code, 2);
        QVERIFY2(prec.err.contains("--precision must be mixed or fp32"), prec.err.constData());
        const EngineRun fmt = run_engine({"serve", "--model", model, "--port", port, "--log-format", "yaml"});
        QCOMPARE(fmt.exit_code, 2);
    }

    void notYetFlagsWarn() {
        ServerProcess server;
        QVERIFY(server.start(model, {"--kv-format", "k3v2", "--vram-limit", "12"}));
        QCOMPARE(server.stop(), 0);
        QVERIFY2(server.log().contains("--kv-format k3v2 is accepted but not used yet"),
                 server.log().constData());
        QVERIFY2(server.log().contains("--vram-limit applies to GPU backends"),
                 server.log().constData());
    }
};

QTEST_GUILESS_MAIN(TestServerLifecycle)
#include "test_server_lifecycle.moc"
