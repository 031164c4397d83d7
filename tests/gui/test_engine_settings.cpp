// EngineSettings: the serve command line follows DESIGN.md's flag names.
#include <QTest>

#include "gui/core/engine_settings.h"

using niwa::gui::EngineSettings;

class TestEngineSettings : public QObject {
    Q_OBJECT

private slots:
    void minimalCommandLine() {
        EngineSettings s;
        s.modelPath = QStringLiteral("/models/bonsai.gguf");
        QCOMPARE(s.serveArguments(), (QStringList{"serve", "--model", "/models/bonsai.gguf", "--host",
                                                  "127.0.0.1", "--port", "8080"}));
        QCOMPARE(s.localBaseUrl(), QStringLiteral("http://127.0.0.1:8080"));
    }

    void everyFlag() {
        EngineSettings s;
        s.modelPath = QStringLiteral("m.gguf");
        s.mmprojPath = QStringLiteral("v.gguf");
        s.backend = QStringLiteral("cuda");
        s.lan = true;
        s.port = 9000;
        s.tensorParallel = 2;
        s.memFraction = 0.85;
        s.vramLimitGiB = 12;
        s.maxSeqs = 24;
        s.maxContext = 65536;
        s.kvFormat = QStringLiteral("k3v2");
        s.apiKeysFile = QStringLiteral("/etc/niwa/keys");
        s.extraArguments = {QStringLiteral("--log-format"), QStringLiteral("json")};
        QCOMPARE(s.serveArguments(), (QStringList{"serve",
                                                  "--model",
                                                  "m.gguf",
                                                  "--mmproj",
                                                  "v.gguf",
                                                  "--host",
                                                  "0.0.0.0",
                                                  "--port",
                                                  "9000",
                                                  "--backend",
                                                  "cuda",
                                                  "--tp",
                                                  "2",
                                                  "--mem-fraction",
                                                  "0.85",
                                                  "--vram-limit",
                                                  "12",
                                                  "--max-seqs",
                                                  "24",
                                                  "--max-context",
                                                  "65536",
                                                  "--kv-format",
                                                  "k3v2",
                                                  "--api-keys",
                                                  "/etc/niwa/keys",
                                                  "--log-format",
                                                  "json"}));
        // LAN or not, the app itself talks to the engine over loopback.
        QCOMPARE(s.localBaseUrl(), QStringLiteral("http://127.0.0.1:9000"));
    }
};

QTEST_GUILESS_MAIN(TestEngineSettings)
#include "test_engine_settings.moc"
