// Settings: defaults, validation on write and on read, persistence, keys kept out of logs.
#include <QSettings>
#include <QSignalSpy>
#include <QTest>

#include "gui/core/settings.h"
#include "support/temp_dir.h"

using niwa::gui::Settings;

namespace {

QStringList captured;
void capture(QtMsgType, const QMessageLogContext&, const QString& message) {
    captured << message;
}

}  // namespace

class TestSettings : public QObject {
    Q_OBJECT

private slots:
    void defaults() {
        niwa::test::TempDir dir;
        Settings s(dir.file("niwa.ini"));
        QCOMPARE(s.port(), 8080);
        QCOMPARE(s.memFraction(), 0.9);
        QCOMPARE(s.vramLimitGiB(), 0.0);
        QCOMPARE(s.maxSeqs(), 16);
        QCOMPARE(s.contextLength(), 32768);
        QCOMPARE(s.kvFormat(), QStringLiteral("k3v2"));
        QCOMPARE(s.enginePath(), QStringLiteral("niwa-engine"));
        QVERIFY(!s.lan());
        QVERIFY(s.apiKeys().isEmpty());
    }

    void refusesBadValuesAndKeepsTheOldOnes() {
        niwa::test::TempDir dir;
        Settings s(dir.file("niwa.ini"));
        QVERIFY(s.setPort(9001));
        QVERIFY(!s.setPort(0));
        QVERIFY(!s.setPort(70000));
        QCOMPARE(s.port(), 9001);
        QVERIFY(!s.setMemFraction(1.5));
        QVERIFY(!s.setMaxSeqs(0));
        QVERIFY(!s.setContextLength(10));
        QVERIFY(!s.setKvFormat(QStringLiteral("K3 V2; rm")));
        QVERIFY(!s.setDistro(QStringLiteral("Ubuntu 24.04")));
        QVERIFY(!s.setVramLimitGiB(-1));
        QVERIFY(!s.setModelPath(QStringLiteral("  ")));
        QCOMPARE(s.memFraction(), 0.9);
        QCOMPARE(s.kvFormat(), QStringLiteral("k3v2"));
    }

    void persistsAndFeedsTheEngineSettings() {
        niwa::test::TempDir dir;
        {
            Settings s(dir.file("niwa.ini"));
            QSignalSpy changed(&s, &Settings::changed);
            QVERIFY(s.setDistro(QStringLiteral("Ubuntu-24.04")));
            QVERIFY(s.setModelPath(QStringLiteral("/home/u/bonsai.gguf")));
            QVERIFY(s.setPort(8123));
            QVERIFY(s.setMemFraction(0.8));
            QVERIFY(s.setVramLimitGiB(12));
            QVERIFY(s.setMaxSeqs(8));
            QVERIFY(s.setContextLength(16384));
            s.setLan(true);
            QCOMPARE(changed.count(), 8);
            QVERIFY(s.setPort(8123));  // unchanged: no signal
            QCOMPARE(changed.count(), 8);
            s.sync();
        }
        Settings s(dir.file("niwa.ini"));
        const niwa::gui::EngineSettings e = s.engineSettings();
        QCOMPARE(e.distro, QStringLiteral("Ubuntu-24.04"));
        QCOMPARE(e.modelPath, QStringLiteral("/home/u/bonsai.gguf"));
        QCOMPARE(e.port, 8123);
        QCOMPARE(e.memFraction, 0.8);
        QCOMPARE(e.vramLimitGiB, 12.0);
        QCOMPARE(e.maxSeqs, 8);
        QCOMPARE(e.maxContext, 16384);
        QVERIFY(e.lan);
    }

    void handEditedNonsenseReadsAsDefault() {
        niwa::test::TempDir dir;
        {
            QSettings raw(dir.file("niwa.ini"), QSettings::IniFormat);
            raw.setValue("engine/port", "eighty");
            raw.setValue("engine/mem_fraction", 7);
            raw.setValue("engine/max_seqs", -3);
        }
        Settings s(dir.file("niwa.ini"));
        QCOMPARE(s.port(), 8080);
        QCOMPARE(s.memFraction(), 0.9);
        QCOMPARE(s.maxSeqs(), 16);
    }

    void apiKeysAreStoredButNeverLogged() {
        niwa::test::TempDir dir;
        Settings s(dir.file("niwa.ini"));
        const QString good = QStringLiteral("sk-niwa-0123456789abcdef");
        const QString bad = QStringLiteral("short secret");
        captured.clear();
        const QtMessageHandler previous = qInstallMessageHandler(capture);
        const bool refused = !s.setApiKeys({good, bad});
        const bool stored = s.setApiKeys({good});
        qInstallMessageHandler(previous);
        QVERIFY(refused);
        QVERIFY(stored);
        QCOMPARE(s.apiKeys(), QStringList{good});
        QCOMPARE(s.apiKeyCount(), 1);
        QVERIFY(!captured.isEmpty());  // the refusal was explained...
        for (const QString& m : captured) {
            QVERIFY2(!m.contains(bad) && !m.contains(good), qPrintable(m));  // ...without the key
            QVERIFY(m.contains(QStringLiteral("API key 2")));
        }
    }
};

QTEST_GUILESS_MAIN(TestSettings)
#include "test_settings.moc"
