// SetupChecks (the first-run wizard's logic) on Linux and through fake_wsl (wsl.exe's texts,
// UTF-16LE and exit codes), with the real niwa-engine and wsl/linux/install.sh, fake
// nvidia-smi from tests/wsl/fakes, and tests/fixtures/http_fixture_server.py for the model.
#include <unistd.h>

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTest>

#include "gui/core/settings.h"
#include "gui/core/setup_checks.h"
#include "support/engine_process.h"
#include "support/temp_dir.h"

using niwa::gui::Settings;
using niwa::gui::SetupChecks;
using Mode = SetupChecks::Mode;

namespace {

constexpr int kWait = 60000;

QVariantMap stepOf(const SetupChecks& c, const QString& id) {
    for (const QVariant& v : c.steps())
        if (v.toMap().value("id").toString() == id) return v.toMap();
    return {};
}
QString stateOf(const SetupChecks& c, const QString& id) {
    return stepOf(c, id).value("state").toString();
}
QString detailOf(const SetupChecks& c, const QString& id) {
    return stepOf(c, id).value("detail").toString();
}
QString fixOf(const SetupChecks& c, const QString& id) {
    return stepOf(c, id).value("fix").toString();
}

QString readAll(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll()) : QString();
}

bool writeFile(const QString& path, const QByteArray& data) {
    QFile f(path);
    return f.open(QIODevice::WriteOnly | QIODevice::Truncate) && f.write(data) == data.size();
}

}  // namespace

class TestSetupChecks : public QObject {
    Q_OBJECT

    niwa::test::TempDir dir_;
    QByteArray path_;  // PATH as the test started
    QString gpuBin_;   // holds only the fake nvidia-smi

    void withGpu(bool on) { qputenv("PATH", on ? gpuBin_.toUtf8() + ":" + path_ : path_); }

    void runAndWait(SetupChecks& c) {
        c.runAll();
        QVERIFY(c.running());
        QTRY_VERIFY_WITH_TIMEOUT(!c.running(), kWait);
    }

    void fixAndWait(SetupChecks& c, const QString& id) {
        c.applyFix(id);
        QVERIFY(c.running());
        QTRY_VERIFY_WITH_TIMEOUT(!c.running(), kWait);
    }

    void useFakeWsl(SetupChecks& c) { c.setWslProgram(QStringLiteral(FAKE_WSL_PATH)); }

private slots:
    void initTestCase() {
#ifndef Q_OS_LINUX
        QSKIP("fake_wsl and the engine run on this machine: Linux only");
#endif
        path_ = qgetenv("PATH");
        gpuBin_ = dir_.file("gpu-bin");
        QVERIFY(QDir().mkpath(gpuBin_));
        QVERIFY(QFile::link(QStringLiteral(NIWA_SOURCE_DIR "/tests/wsl/fakes/nvidia-smi"),
                            gpuBin_ + "/nvidia-smi"));
    }

    void init() {
        for (const char* v :
             {"FAKE_WSL_OLD", "FAKE_WSL_INBOX", "FAKE_WSL_DISTROS", "FAKE_WSL_STATE", "FAKE_WSL_LOG"})
            qunsetenv(v);
        withGpu(true);
    }

    void cleanupTestCase() {
        qputenv("PATH", path_);
    }

    void onLinuxTheWslStepsAreSkipped() {
        niwa::test::TempDir t;
        Settings s(t.file("niwa.ini"));
        s.setEnginePath(niwa::test::engine_path());
        SetupChecks c(s, Mode::Local);
        QCOMPARE(c.progress(), -1.0);
        QCOMPARE(c.steps().size(), 5);
        for (const QVariant& v : c.steps()) QCOMPARE(v.toMap().value("state").toString(), QString("pending"));
        QSignalSpy changed(&c, &SetupChecks::changed);
        runAndWait(c);
        QVERIFY(changed.count() >= 5);
        QCOMPARE(stateOf(c, "wsl"), QString("skipped"));
        QCOMPARE(stateOf(c, "distro"), QString("skipped"));
        QCOMPARE(stateOf(c, "gpu"), QString("ok"));
        QCOMPARE(detailOf(c, "gpu"), QString("NVIDIA GeForce RTX 5070, 12227 MiB"));
        QCOMPARE(stateOf(c, "engine"), QString("ok"));
        QVERIFY2(detailOf(c, "engine").startsWith("niwa-engine "), qPrintable(detailOf(c, "engine")));
        QCOMPARE(stateOf(c, "model"), QString("failed"));
        QVERIFY(!fixOf(c, "model").isEmpty());
        QVERIFY(!c.allOk());
        for (const QVariant& v : c.steps()) QVERIFY(!v.toMap().value("title").toString().isEmpty());

        QVERIFY(writeFile(t.file("m.gguf"), "GGUF"));
        s.setModelPath(t.file("m.gguf"));
        runAndWait(c);
        QCOMPARE(stateOf(c, "model"), QString("ok"));
        QVERIFY(c.allOk());
    }

    void missingGpuIsReportedAndTheRestStillChecked() {
        const QStringList realPath = QString::fromUtf8(path_).split(QLatin1Char(':'));
        if (!QStandardPaths::findExecutable("nvidia-smi", realPath).isEmpty())
            QSKIP("this machine has a real nvidia-smi");
        withGpu(false);
        niwa::test::TempDir t;
        Settings s(t.file("niwa.ini"));
        s.setEnginePath(niwa::test::engine_path());
        SetupChecks c(s, Mode::Wsl);
        useFakeWsl(c);
        runAndWait(c);
        QCOMPARE(stateOf(c, "gpu"), QString("failed"));
        QVERIFY(detailOf(c, "gpu").contains("No NVIDIA GPU"));
        QVERIFY(fixOf(c, "gpu").contains("NVIDIA driver for Windows"));
        QCOMPARE(stateOf(c, "engine"), QString("ok"));
        // The GPU's fix is the user's: applying it only checks again.
        withGpu(true);
        fixAndWait(c, "gpu");
        QCOMPARE(stateOf(c, "gpu"), QString("ok"));
    }

    void throughWslEverythingOk_data() {
        QTest::addColumn<bool>("oldWsl");
        QTest::newRow("utf-8") << false;
        QTest::newRow("old wsl.exe, UTF-16LE") << true;
    }

    void throughWslEverythingOk() {
        QFETCH(bool, oldWsl);
        if (oldWsl) qputenv("FAKE_WSL_OLD", "1");
        niwa::test::TempDir t;
        Settings s(t.file("niwa.ini"));
        s.setEnginePath(niwa::test::engine_path());
        QVERIFY(writeFile(t.file("m.gguf"), "GGUF"));
        s.setModelPath(t.file("m.gguf"));
        SetupChecks c(s, Mode::Wsl);
        useFakeWsl(c);
        runAndWait(c);
        QCOMPARE(detailOf(c, "wsl"), QString("WSL 2.3.26.0"));
        QCOMPARE(detailOf(c, "distro"), QString("Ubuntu-24.04 (WSL 2)"));
        QCOMPARE(detailOf(c, "gpu"), QString("NVIDIA GeForce RTX 5070, 12227 MiB"));
        QVERIFY2(c.allOk(), qPrintable(detailOf(c, "engine")));
    }

    void inboxWslIsUpdated() {
        qputenv("FAKE_WSL_INBOX", "1");
        qputenv("FAKE_WSL_LOG", dir_.file("inbox.log").toUtf8());
        niwa::test::TempDir t;
        Settings s(t.file("niwa.ini"));
        SetupChecks c(s, Mode::Wsl);
        useFakeWsl(c);
        runAndWait(c);
        QCOMPARE(stateOf(c, "wsl"), QString("failed"));
        QVERIFY(detailOf(c, "wsl").contains("Invalid command line option: --version"));
        QVERIFY(fixOf(c, "wsl").contains("wsl --update"));
        for (const char* later : {"distro", "gpu", "engine", "model"})
            QCOMPARE(stateOf(c, later), QString("skipped"));
        fixAndWait(c, "wsl");
        QVERIFY(readAll(dir_.file("inbox.log")).contains("--update\n"));
    }

    void wslNotInstalled() {
        niwa::test::TempDir t;
        Settings s(t.file("niwa.ini"));
        SetupChecks c(s, Mode::Wsl);
        c.setWslProgram(t.file("no-wsl.exe"));
        runAndWait(c);
        QCOMPARE(stateOf(c, "wsl"), QString("failed"));
        QVERIFY(detailOf(c, "wsl").contains("not installed"));
        QVERIFY(fixOf(c, "wsl").contains("restart Windows"));
    }

    // wsl --install needs a restart: the step stays failed, says so, and offers nothing more.
    void installingWslAsksForARestart() {
        qputenv("FAKE_WSL_INBOX", "1");
        qputenv("FAKE_WSL_LOG", dir_.file("install.log").toUtf8());
        niwa::test::TempDir t;
        Settings s(t.file("niwa.ini"));
        SetupChecks c(s, Mode::Wsl);
        c.setWslProgram(t.file("no-wsl.exe"));
        runAndWait(c);
        c.setWslProgram(QStringLiteral(FAKE_WSL_PATH));  // as if the inbox wsl.exe had been found
        fixAndWait(c, "wsl");
        QVERIFY(readAll(dir_.file("install.log")).contains("--install --no-distribution\n"));
        QCOMPARE(stateOf(c, "wsl"), QString("failed"));
        QVERIFY(detailOf(c, "wsl").contains("Restart Windows"));
        QVERIFY(fixOf(c, "wsl").isEmpty());
    }

    void noDistroIsInstalled() {
        const QString state = dir_.file("distros-none");
        QVERIFY(writeFile(state, ""));
        qputenv("FAKE_WSL_STATE", state.toUtf8());
        niwa::test::TempDir t;
        Settings s(t.file("niwa.ini"));
        s.setEnginePath(niwa::test::engine_path());
        SetupChecks c(s, Mode::Wsl);
        useFakeWsl(c);
        runAndWait(c);
        QCOMPARE(stateOf(c, "wsl"), QString("ok"));
        QCOMPARE(stateOf(c, "distro"), QString("failed"));
        QVERIFY(fixOf(c, "distro").contains("Ubuntu-24.04"));
        QCOMPARE(stateOf(c, "gpu"), QString("skipped"));
        fixAndWait(c, "distro");
        QCOMPARE(s.distro(), QString("Ubuntu-24.04"));
        QCOMPARE(stateOf(c, "distro"), QString("ok"));
        QCOMPARE(stateOf(c, "engine"), QString("ok"));
    }

    // Docker Desktop's distro as the default is passed over for a real one.
    void dockerDesktopIsNotChosen() {
        qputenv("FAKE_WSL_DISTROS", "docker-desktop,Ubuntu-22.04");
        niwa::test::TempDir t;
        Settings s(t.file("niwa.ini"));
        SetupChecks c(s, Mode::Wsl);
        useFakeWsl(c);
        runAndWait(c);
        QCOMPARE(detailOf(c, "distro"), QString("Ubuntu-22.04 (WSL 2)"));
    }

    void wsl1DistroIsConverted() {
        const QString state = dir_.file("distros-v1");
        QVERIFY(writeFile(state, "Debian:2\nUbuntu-24.04:1\n"));
        qputenv("FAKE_WSL_STATE", state.toUtf8());
        niwa::test::TempDir t;
        Settings s(t.file("niwa.ini"));
        s.setDistro("Ubuntu-24.04");
        SetupChecks c(s, Mode::Wsl);
        useFakeWsl(c);
        runAndWait(c);
        QCOMPARE(stateOf(c, "distro"), QString("failed"));
        QVERIFY(detailOf(c, "distro").contains("WSL 1"));
        fixAndWait(c, "distro");
        QCOMPARE(stateOf(c, "distro"), QString("ok"));
        QVERIFY(readAll(state).contains("Ubuntu-24.04:2"));
    }

    // install.sh runs twice through wsl.exe: the libraries as root, then the engine as the user.
    void engineIsInstalledByInstallSh() {
        qputenv("FAKE_WSL_LOG", dir_.file("engine.log").toUtf8());
        niwa::test::TempDir t;
        Settings s(t.file("niwa.ini"));
        s.setEnginePath(t.file("nowhere/niwa-engine"));
        SetupChecks c(s, Mode::Wsl);
        useFakeWsl(c);
        c.setInstallScript(QStringLiteral(NIWA_SOURCE_DIR "/wsl/linux/install.sh"));
        c.setInstallArguments({"--engine", niwa::test::engine_path(), "--prefix", t.file("prefix"),
                               "--models", t.file("models"), "--log", t.file("install.log")});
        runAndWait(c);
        QCOMPARE(stateOf(c, "engine"), QString("failed"));
        QVERIFY(detailOf(c, "engine").contains("nowhere/niwa-engine"));
        QVERIFY(!fixOf(c, "engine").isEmpty());
        fixAndWait(c, "engine");
        QCOMPARE(s.enginePath(), t.file("prefix/bin/niwa-engine"));
        QCOMPARE(stateOf(c, "engine"), QString("ok"));
        QVERIFY(QFileInfo(t.file("models")).isDir());
        const QString calls = readAll(dir_.file("engine.log"));
        QVERIFY2(calls.contains("-u root --exec bash " NIWA_SOURCE_DIR "/wsl/linux/install.sh"),
                 qPrintable(calls));
        QVERIFY(calls.contains("--deps-only"));
        QVERIFY(calls.contains("--skip-deps"));
    }

    void engineInstallFailureIsShown() {
        niwa::test::TempDir t;
        Settings s(t.file("niwa.ini"));
        s.setEnginePath(t.file("nowhere/niwa-engine"));
        SetupChecks c(s, Mode::Local);
        c.setInstallScript(QStringLiteral(NIWA_SOURCE_DIR "/wsl/linux/install.sh"));
        c.setInstallArguments({"--engine", t.file("missing"), "--log", t.file("install.log")});
        runAndWait(c);
        fixAndWait(c, "engine");
        QCOMPARE(stateOf(c, "engine"), QString("failed"));
        QVERIFY2(detailOf(c, "engine").contains("does not exist"), qPrintable(detailOf(c, "engine")));
        QVERIFY(!fixOf(c, "engine").isEmpty());
    }
};

// The model download: `niwa-engine pull` against the fixture server, progress lines → progress.
class TestSetupChecksDownload : public QObject {
    Q_OBJECT

    QProcess server_;
    niwa::test::TempDir root_;
    int port_ = 0;

    QString url(const QString& path) const { return QString("http://127.0.0.1:%1/%2").arg(port_).arg(path); }

private slots:
    void initTestCase() {
        server_.setProgram("/usr/bin/python3");
        server_.setArguments({QStringLiteral(NIWA_SOURCE_DIR "/tests/fixtures/http_fixture_server.py"),
                              "--root", root_.path(), "--log", root_.file("requests.log")});
        server_.start();
        QVERIFY(server_.waitForStarted(10000));
        for (int i = 0; i < 100 && !server_.canReadLine(); ++i) server_.waitForReadyRead(100);
        const QByteArray line = server_.readLine().trimmed();
        QVERIFY2(line.startsWith("PORT "), line.constData());
        port_ = line.mid(5).toInt();
        QByteArray data(640 * 1024, Qt::Uninitialized);
        for (qsizetype i = 0; i < data.size(); ++i) data[i] = char((i * 7919) >> 3);
        QVERIFY(writeFile(root_.file("model.gguf"), data));
    }

    void cleanupTestCase() {
        server_.kill();
        server_.waitForFinished();
    }

    void downloadReportsProgressAndSetsTheModel() {
        niwa::test::TempDir t;
        Settings s(t.file("niwa.ini"));
        s.setEnginePath(niwa::test::engine_path());
        SetupChecks c(s, Mode::Local);
        c.setPullArguments(
            {url("slow/model.gguf"), "--out", t.file("models/model.gguf"), "--progress-ms", "50"});
        c.runAll();
        QTRY_VERIFY_WITH_TIMEOUT(!c.running(), kWait);
        QCOMPARE(stateOf(c, "model"), QString("failed"));
        QList<double> seen;
        connect(&c, &SetupChecks::changed, this, [&] { seen << c.progress(); });
        c.applyFix("model");
        QVERIFY(c.running());
        QTRY_VERIFY_WITH_TIMEOUT(!c.running(), kWait);
        QCOMPARE(stateOf(c, "model"), QString("ok"));
        QCOMPARE(s.modelPath(), t.file("models/model.gguf"));
        QCOMPARE(QFileInfo(s.modelPath()).size(), qint64(640 * 1024));
        QCOMPARE(c.progress(), -1.0);
        int between = 0;
        for (double p : seen) between += p > 0 && p < 1;
        QVERIFY2(between >= 2, qPrintable(QString("progress values in (0,1): %1").arg(between)));
        for (qsizetype i = 1; i < seen.size(); ++i)
            if (seen[i] >= 0 && seen[i - 1] >= 0) QVERIFY(seen[i] >= seen[i - 1]);
    }

    void failedDownloadSaysWhyAndCanBeResumed() {
        niwa::test::TempDir t;
        Settings s(t.file("niwa.ini"));
        s.setEnginePath(niwa::test::engine_path());
        SetupChecks c(s, Mode::Local);
        c.setPullArguments({url("status/404/model.gguf"), "--out", t.file("model.gguf")});
        c.runAll();
        QTRY_VERIFY_WITH_TIMEOUT(!c.running(), kWait);
        c.applyFix("model");
        QTRY_VERIFY_WITH_TIMEOUT(!c.running(), kWait);
        QCOMPARE(stateOf(c, "model"), QString("failed"));
        QVERIFY2(detailOf(c, "model").contains("404"), qPrintable(detailOf(c, "model")));
        QVERIFY(detailOf(c, "model").contains("resume"));
        QVERIFY(!fixOf(c, "model").isEmpty());
        QCOMPARE(c.progress(), -1.0);
        QVERIFY(s.modelPath().isEmpty());
    }

    // A pull left running by an earlier app (wsl.exe gone, the download not) is interrupted
    // before the new one starts, so they never write the same .part file.
    void leftoverPullIsInterruptedFirst() {
        const QString pidFile = QString("/tmp/niwa-pull-%1.pid").arg(::getuid());
        QProcess leftover;
        leftover.start("/bin/bash", {"-c", "exec -a niwa-engine-pull-leftover sleep 60"});
        QVERIFY(leftover.waitForStarted());
        QVERIFY(writeFile(pidFile, QByteArray::number(leftover.processId())));
        niwa::test::TempDir t;
        Settings s(t.file("niwa.ini"));
        s.setEnginePath(niwa::test::engine_path());
        SetupChecks c(s, Mode::Wsl);
        c.setWslProgram(QStringLiteral(FAKE_WSL_PATH));
        c.setPullArguments({url("ok/model.gguf"), "--out", t.file("model.gguf")});
        c.runAll();
        QTRY_VERIFY_WITH_TIMEOUT(!c.running(), kWait);
        c.applyFix("model");
        QVERIFY(leftover.waitForFinished(10000));
        QCOMPARE(leftover.exitStatus(), QProcess::CrashExit);  // ended by SIGINT
        QTRY_VERIFY_WITH_TIMEOUT(!c.running(), kWait);
        QCOMPARE(stateOf(c, "model"), QString("ok"));
        QFile::remove(pidFile);
    }

    // Closing the wizard mid-download interrupts the pull; its .part stays for a resume.
    void closingMidDownloadKeepsThePart() {
        QByteArray big(6 * 1024 * 1024, 'x');
        QVERIFY(writeFile(root_.file("big.gguf"), big));
        niwa::test::TempDir t;
        Settings s(t.file("niwa.ini"));
        s.setEnginePath(niwa::test::engine_path());
        qint64 pid = 0;
        {
            SetupChecks c(s, Mode::Local);
            c.setPullArguments({url("slow/big.gguf"), "--out", t.file("big.gguf"), "--progress-ms", "50"});
            c.runAll();
            QTRY_VERIFY_WITH_TIMEOUT(!c.running(), kWait);
            c.applyFix("model");
            QTRY_VERIFY_WITH_TIMEOUT(c.progress() > 0, kWait);
            pid = readAll(QString("/tmp/niwa-pull-%1.pid").arg(::getuid())).trimmed().toLongLong();
            QVERIFY(pid > 0);
        }
        QVERIFY(!QFile::exists(QString("/proc/%1").arg(pid)));
        QVERIFY(QFileInfo(t.file("big.gguf.part")).size() > 0);
        QVERIFY(!QFile::exists(t.file("big.gguf")));
    }

    void modelFixNeedsTheEngine() {
        niwa::test::TempDir t;
        Settings s(t.file("niwa.ini"));
        s.setEnginePath(t.file("none"));
        SetupChecks c(s, Mode::Local);
        c.runAll();
        QTRY_VERIFY_WITH_TIMEOUT(!c.running(), kWait);
        c.applyFix("model");
        QVERIFY(!c.running());
        QVERIFY(detailOf(c, "model").contains("Install the engine first"));
    }
};

int main(int argc, char** argv) {
    QCoreApplication app(argc, argv);
    TestSetupChecks checks;
    TestSetupChecksDownload download;
    return QTest::qExec(&checks, argc, argv) | QTest::qExec(&download, argc, argv);
}

#include "test_setup_checks.moc"
