// WslLauncher driving fake_wsl (wsl.exe's argument grammar and encodings, running the
// command here) and fake_niwa_engine: start, stop by pid, old UTF-16 output, adopting or
// cleaning up an engine left running, and listing distros.
#include <QFile>
#include <QProcess>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTest>

#include "gui/core/engine_client.h"
#include "gui/core/wsl_launcher.h"
#include "gui/launcher_wait.h"
#include "support/temp_dir.h"

using niwa::gui::EngineLauncher;
using niwa::gui::EngineSettings;
using niwa::gui::WslLauncher;
using State = EngineLauncher::State;

namespace {

constexpr int kWait = niwa::test::kLauncherWait;
using niwa::test::reach;

// Alive and not a zombie (nothing may reap an orphan in a container).
bool alive(qint64 pid) {
    QFile stat(QStringLiteral("/proc/%1/stat").arg(pid));
    if (!stat.open(QIODevice::ReadOnly)) return false;
    const QByteArray s = stat.readAll();
    return s.mid(s.lastIndexOf(')') + 2, 1) != "Z";
}

qint64 readPid(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll().trimmed().toLongLong() : 0;
}

}  // namespace

class TestWslLauncher : public QObject {
    Q_OBJECT

    niwa::test::TempDir dir_;

    EngineSettings settings(const QStringList& knobs) {
        EngineSettings s;
        s.distro = QStringLiteral("Ubuntu-24.04");
        s.workingDirectory = dir_.path();
        s.enginePath = QStringLiteral(FAKE_ENGINE_PATH);
        s.modelPath = QStringLiteral("/models/fake.gguf");
        s.port = niwa::test::free_port();
        s.extraArguments = knobs;
        return s;
    }

    void configure(WslLauncher& l) {
        l.setWslProgram(QStringLiteral(FAKE_WSL_PATH));
        l.setPidFile(dir_.file("engine.pid"));
        l.setHealthInterval(50);
    }

private slots:
    void init() {
#ifndef Q_OS_LINUX
        QSKIP("fake_wsl runs the command on this machine: Linux only");
#endif
        QFile::remove(dir_.file("engine.pid"));
        QFile::remove(dir_.file("m"));
        qunsetenv("FAKE_WSL_OLD");
    }

    void startsInTheDistroAndStopsByPid() {
        WslLauncher l;
        configure(l);
        QSignalSpy lines(&l, &EngineLauncher::logLine);
        l.start(settings({"--fake-marker", dir_.file("m")}));
        QVERIFY(reach(l, State::Ready));
        QVERIFY(!l.adopted());
        const qint64 pid = readPid(dir_.file("engine.pid"));
        QVERIFY(pid > 0 && alive(pid));
        QString log;
        for (const auto& line : lines) log += line[0].toString() + QLatin1Char('\n');
        QVERIFY2(log.contains(QStringLiteral("-d Ubuntu-24.04 --cd %1 --exec sh -c").arg(dir_.path())),
                 qPrintable(log));
        QVERIFY2(log.contains(QStringLiteral("モデルを読み込み中")), qPrintable(log));

        l.stop();
        QVERIFY(reach(l, State::Stopped));
        QCOMPARE(l.enginePid(), 0);
        QVERIFY(QFile::exists(dir_.file("m")));  // SIGTERM through `wsl.exe --exec kill -TERM PID`
        QVERIFY(!alive(pid));
    }

    void decodesUtf16FromAnOldWslExe() {
        qputenv("FAKE_WSL_OLD", "1");
        WslLauncher l;
        configure(l);
        QSignalSpy lines(&l, &EngineLauncher::logLine);
        l.start(settings({}));
        QVERIFY(reach(l, State::Ready));
        bool sawJapanese = false;
        for (const auto& line : lines)
            sawJapanese |=
                line[0].toString() == QStringLiteral("loading model /models/fake.gguf — モデルを読み込み中");
        QVERIFY(sawJapanese);
        l.stop();
        QVERIFY(reach(l, State::Stopped));
        QCOMPARE(l.exitCode(), 0);
    }

    void anUnknownDistroFails() {
        WslLauncher l;
        configure(l);
        EngineSettings s = settings({});
        s.distro = QStringLiteral("Arch");
        l.start(s);
        QSignalSpy spy(&l, &EngineLauncher::stateChanged);
        while (l.state() == State::Starting) QVERIFY(spy.wait(kWait));
        QCOMPARE(l.state(), State::Failed);
        // fake_wsl answered in UTF-16LE, as wsl.exe does; the reason reads as text.
        QVERIFY2(l.reason().contains(QStringLiteral("There is no distribution with the supplied name.")),
                 qPrintable(l.reason()));
    }

    void adoptsAnEngineLeftRunning() {
        const EngineSettings s = settings({"--fake-marker", dir_.file("m")});
        // An app that crashed left this engine: started through wsl, not our child.
        const QString script = QStringLiteral("echo $$ > '%1'; exec '%2' %3")
                                   .arg(dir_.file("engine.pid"), s.enginePath, s.serveArguments().join(' '));
        qint64 leftover = 0;
        QVERIFY(QProcess::startDetached(QStringLiteral(FAKE_WSL_PATH),
                                        {"-d", "Ubuntu-24.04", "--exec", "sh", "-c", script}, {}, &leftover));
        niwa::gui::EngineClient client;
        client.setBaseUrl(QUrl(s.localBaseUrl()));
        QSignalSpy health(&client, &niwa::gui::EngineClient::healthChecked);
        for (int tries = 0; tries < 200; ++tries) {
            client.checkHealth();
            QVERIFY(health.wait(kWait));
            if (health.last()[0].toInt() == 200) break;
            QTest::qWait(50);
        }
        QCOMPARE(health.last()[0].toInt(), 200);

        WslLauncher l;
        configure(l);
        l.start(s);
        QVERIFY(reach(l, State::Ready));
        QVERIFY(l.adopted());
        QCOMPARE(l.enginePid(), leftover);
        l.stop();
        QVERIFY(reach(l, State::Stopped));
        QVERIFY(QFile::exists(dir_.file("m")));
        QVERIFY(!alive(leftover));
    }

    void killsAnEngineLeftRunningThatDoesNotAnswer() {
        const EngineSettings deaf = settings({"--fake-deaf"});
        const QString script =
            QStringLiteral("echo $$ > '%1'; exec '%2' %3")
                .arg(dir_.file("engine.pid"), deaf.enginePath, deaf.serveArguments().join(' '));
        qint64 leftover = 0;
        QVERIFY(QProcess::startDetached(QStringLiteral(FAKE_WSL_PATH), {"--exec", "sh", "-c", script}, {},
                                        &leftover));
        QTRY_COMPARE_WITH_TIMEOUT(readPid(dir_.file("engine.pid")), leftover, kWait);

        WslLauncher l;
        configure(l);
        EngineSettings s = settings({});
        s.port = deaf.port;
        l.start(s);
        QVERIFY(reach(l, State::Ready));
        QVERIFY(!l.adopted());
        QVERIFY(!alive(leftover));
        const qint64 fresh = readPid(dir_.file("engine.pid"));
        QVERIFY(fresh != leftover && alive(fresh));
        l.stop();
        QVERIFY(reach(l, State::Stopped));
    }

    void quittingStopsTheEngine() {
        auto* l = new WslLauncher;
        configure(*l);
        l->start(settings({"--fake-marker", dir_.file("m")}));
        QVERIFY(reach(*l, State::Ready));
        const qint64 pid = readPid(dir_.file("engine.pid"));
        delete l;
        QVERIFY(QFile::exists(dir_.file("m")));
        QVERIFY(!alive(pid));
    }

    void listsDistrosFromUtf16() {
        WslLauncher l;
        configure(l);
        QSignalSpy listed(&l, &WslLauncher::distrosListed);
        qputenv("FAKE_WSL_OLD", "1");  // the list comes in UTF-16LE despite WSL_UTF8=1
        l.listDistros();
        QVERIFY(listed.wait(kWait));
        QCOMPARE(listed[0][0].toStringList(), (QStringList{"Ubuntu-24.04", "Debian"}));
        QCOMPARE(listed[0][1].toString(), QStringLiteral("Ubuntu-24.04"));
        QCOMPARE(listed[0][2].toString(), QString());
    }
};

QTEST_GUILESS_MAIN(TestWslLauncher)
#include "test_wsl_launcher.moc"
