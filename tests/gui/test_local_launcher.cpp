// LocalLauncher running fake_niwa_engine (the engine's log lines, /health and exit
// behaviour) and the real niwa-engine for a real failure.
#include <QFile>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTest>

#include "gui/core/local_launcher.h"
#include "gui/launcher_wait.h"
#include "support/engine_process.h"
#include "support/temp_dir.h"

using niwa::gui::EngineLauncher;
using niwa::gui::EngineSettings;
using niwa::gui::LocalLauncher;
using State = EngineLauncher::State;

namespace {

constexpr int kWait = niwa::test::kLauncherWait;
using niwa::test::reach;

EngineSettings fakeEngine(const QStringList& knobs) {
    EngineSettings s;
    s.enginePath = QStringLiteral(FAKE_ENGINE_PATH);
    s.modelPath = QStringLiteral("/models/fake.gguf");
    s.port = niwa::test::free_port();
    s.extraArguments = knobs;
    return s;
}

}  // namespace

class TestLocalLauncher : public QObject {
    Q_OBJECT

private slots:
    void readyWhenHealthSaysSoWithProgress() {
        niwa::test::TempDir dir;
        LocalLauncher l;
        l.setHealthInterval(20);
        QSignalSpy progress(&l, &EngineLauncher::progressChanged);
        QSignalSpy lines(&l, &EngineLauncher::logLine);
        QSignalSpy states(&l, &EngineLauncher::stateChanged);
        l.start(
            fakeEngine({"--fake-load-steps", "3", "--fake-no-startup-line", "--fake-marker", dir.file("m")}));
        QCOMPARE(l.state(), State::Starting);
        QVERIFY(reach(l, State::Ready));
        QList<double> seen;
        for (const auto& p : progress) seen << p[0].toDouble();
        QVERIFY2(seen.contains(0.25) && seen.contains(0.5) && seen.contains(0.75),
                 qPrintable(QString::number(seen.size())));
        QCOMPARE(seen.last(), 1.0);
        bool sawModelLine = false;
        for (const auto& line : lines)
            sawModelLine |=
                line[0].toString() == QStringLiteral("loading model /models/fake.gguf — モデルを読み込み中");
        QVERIFY(sawModelLine);
        QVERIFY(l.recentLog().first().startsWith(QStringLiteral("$ ")));

        l.stop();
        QCOMPARE(l.state(), State::Stopping);
        QVERIFY(reach(l, State::Stopped));
        QVERIFY(QFile::exists(dir.file("m")));  // it got SIGTERM and shut down in order
        QCOMPARE(l.exitCode(), 0);
        QList<State> order;
        for (const auto& s : states) order << s[0].value<State>();
        QCOMPARE(order, (QList<State>{State::Starting, State::Ready, State::Stopping, State::Stopped}));
    }

    void readyFromTheStartupLine() {
        LocalLauncher l;
        l.start(fakeEngine({"--fake-never-healthy"}));
        QVERIFY(reach(l, State::Ready));
        l.stop();
        QVERIFY(reach(l, State::Stopped));
    }

    void failureSaysTheExitCodeAndTheLastLines() {
        LocalLauncher l;
        l.start(fakeEngine({"--fake-no-startup-line", "--fake-never-healthy", "--fake-exit-after-ms", "50",
                            "--fake-exit-code", "3"}));
        QVERIFY(reach(l, State::Failed) || l.state() == State::Failed);
        QCOMPARE(l.exitCode(), 3);
        QVERIFY2(l.reason().startsWith(QStringLiteral("niwa-engine exited with code 3: ")),
                 qPrintable(l.reason()));
        QVERIFY2(l.reason().contains(QStringLiteral("CUDA out of memory")), qPrintable(l.reason()));
    }

    void killsAnEngineThatIgnoresTerm() {
        niwa::test::TempDir dir;
        LocalLauncher l;
        l.setStopTimeout(300);
        l.start(fakeEngine({"--fake-ignore-term", "--fake-marker", dir.file("m")}));
        QVERIFY(reach(l, State::Ready));
        l.stop();
        QVERIFY(reach(l, State::Stopped));
        QVERIFY(!QFile::exists(dir.file("m")));  // it never shut down by itself
        QCOMPARE(l.exitCode(), -1);              // killed
    }

    void theRealEngineFailingIsReported() {
        LocalLauncher l;
        EngineSettings s;
        s.enginePath = niwa::test::engine_path();
        s.modelPath = QStringLiteral("/nonexistent/bonsai.gguf");
        s.port = niwa::test::free_port();
        l.start(s);
        QSignalSpy spy(&l, &EngineLauncher::stateChanged);
        while (l.state() == State::Starting) QVERIFY(spy.wait(kWait));
        QCOMPARE(l.state(), State::Failed);
        QVERIFY(l.exitCode() > 0);
        QVERIFY2(l.reason().startsWith(QStringLiteral("niwa-engine exited with code %1: ").arg(l.exitCode())),
                 qPrintable(l.reason()));
    }

    void aMissingProgramFails() {
        LocalLauncher l;
        EngineSettings s = fakeEngine({});
        s.enginePath = QStringLiteral("/nonexistent/niwa-engine");
        l.start(s);
        QSignalSpy spy(&l, &EngineLauncher::stateChanged);
        if (l.state() == State::Starting) QVERIFY(spy.wait(kWait));
        QCOMPARE(l.state(), State::Failed);
        QVERIFY2(l.reason().startsWith(QStringLiteral("could not start /nonexistent/niwa-engine")),
                 qPrintable(l.reason()));
    }

    void restartStartsAgainWithNewSettings() {
        LocalLauncher l;
        l.start(fakeEngine({}));
        QVERIFY(reach(l, State::Ready));
        const qint64 firstPid = l.processId();
        l.start(fakeEngine({}));  // already running: ignored
        QCOMPARE(l.processId(), firstPid);
        const EngineSettings second = fakeEngine({});
        QSignalSpy states(&l, &EngineLauncher::stateChanged);
        l.restart(second);
        while (states.count() < 4) QVERIFY(states.wait(kWait));
        QList<State> order;
        for (const auto& s : states) order << s[0].value<State>();
        QCOMPARE(order, (QList<State>{State::Stopping, State::Stopped, State::Starting, State::Ready}));
        QCOMPARE(l.settings().port, second.port);
        QVERIFY(l.processId() != firstPid);
    }

    void destroyingTheLauncherStopsItsEngine() {
        niwa::test::TempDir dir;
        auto* l = new LocalLauncher;
        l->start(fakeEngine({"--fake-marker", dir.file("m")}));
        QVERIFY(reach(*l, State::Ready));
        delete l;  // as when the app quits
        QVERIFY(QFile::exists(dir.file("m")));
    }
};

QTEST_GUILESS_MAIN(TestLocalLauncher)
#include "test_local_launcher.moc"
