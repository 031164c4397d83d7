// The app's command line (DESIGN.md: niwa [--model FILE] [--mmproj FILE] [--backend cpu|cuda]
// [--port P] [--start]).
#include <QTest>

#include "gui/app/command_line.h"

using niwa::gui::parseCommandLine;

class TestAppCommandLine : public QObject {
    Q_OBJECT

private slots:
    void everyOption() {
        const auto c =
            parseCommandLine({"niwa", "--model", "/m/a.gguf", "--mmproj", "/m/p.gguf", "--backend", "cuda",
                              "--port", "8123", "--start", "--profile", "/tmp/p", "--screenshot", "/tmp/s"});
        QVERIFY2(c.error.isEmpty(), qPrintable(c.error));
        QCOMPARE(c.model, QStringLiteral("/m/a.gguf"));
        QCOMPARE(c.mmproj, QStringLiteral("/m/p.gguf"));
        QCOMPARE(c.backend, QStringLiteral("cuda"));
        QCOMPARE(c.port, 8123);
        QVERIFY(c.start);
        QCOMPARE(c.profile, QStringLiteral("/tmp/p"));
        QCOMPARE(c.screenshotDir, QStringLiteral("/tmp/s"));
    }

    void nothingGiven() {
        const auto c = parseCommandLine({"niwa"});
        QVERIFY(c.error.isEmpty());
        QVERIFY(!c.start);
        QCOMPARE(c.port, 0);
        QVERIFY(c.model.isEmpty());
    }

    void badValuesAreUsageErrors() {
        QVERIFY(
            parseCommandLine({"niwa", "--backend", "metal"}).error.contains(QStringLiteral("cpu or cuda")));
        QVERIFY(parseCommandLine({"niwa", "--port", "0"}).error.contains(QStringLiteral("--port")));
        QVERIFY(parseCommandLine({"niwa", "--port", "http"}).error.contains(QStringLiteral("--port")));
        QVERIFY(!parseCommandLine({"niwa", "--frobnicate"}).error.isEmpty());
        QVERIFY(!parseCommandLine({"niwa", "stray"}).error.isEmpty());
        QVERIFY(!parseCommandLine({"niwa", "--model"}).error.isEmpty());
    }

    void help() {
        const auto c = parseCommandLine({"niwa", "--help"});
        QVERIFY(c.help);
        QVERIFY(c.helpText.contains(QStringLiteral("--start")));
    }
};

QTEST_GUILESS_MAIN(TestAppCommandLine)
#include "test_app_command_line.moc"
