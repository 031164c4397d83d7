// The downloader (engine/runtime/download.h) and `niwa-engine pull`, against
// tests/fixtures/http_fixture_server.py on a free loopback port: resume, restart, retries,
// checksums, progress lines, Ctrl-C and a full disk.
#include <signal.h>
#include <sys/mount.h>
#include <unistd.h>

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRandomGenerator>
#include <QTest>

#include "engine/runtime/download.h"
#include "engine/runtime/model_catalog.h"
#include "support/engine_process.h"
#include "support/temp_dir.h"

using namespace niwa;
using niwa::test::run_engine;

namespace {

QByteArray random_bytes(qsizetype n, quint32 seed) {
    QByteArray b(n, Qt::Uninitialized);
    QRandomGenerator rng(seed);
    for (qsizetype i = 0; i < n; ++i) b[i] = char(rng.generate() & 0xFF);
    return b;
}

QByteArray read_all(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

void write_all(const QString& path, const QByteArray& data) {
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    QCOMPARE(f.write(data), data.size());
}

std::string hex_sha256(const QByteArray& data) {
    return QCryptographicHash::hash(data, QCryptographicHash::Sha256).toHex().toStdString();
}

}  // namespace

class TestDownload : public QObject {
    Q_OBJECT

    QProcess server_;
    niwa::test::TempDir root_;  // the files the server serves, and its request log
    int port_ = 0;

    QString url(const QString& path) const { return QString("http://127.0.0.1:%1/%2").arg(port_).arg(path); }

    // Serves `data` as NAME; returns its content.
    QByteArray serve(const QString& name, qsizetype size, quint32 seed) {
        QByteArray data = random_bytes(size, seed);
        write_all(root_.file(name), data);
        return data;
    }

    // The Range header of every request the server saw for `path`, in order ("" for none).
    QStringList requests(const QString& path) const {
        QStringList ranges;
        for (const QByteArray& line : read_all(root_.file("requests.log")).split('\n')) {
            const QJsonObject o = QJsonDocument::fromJson(line).object();
            if (o.value("path").toString() == "/" + path) ranges << o.value("range").toString();
        }
        return ranges;
    }

    runtime::DownloadOptions options(const QString& path, const QString& out) const {
        runtime::DownloadOptions o;
        o.url = url(path).toStdString();
        o.out = out.toStdString();
        o.retry_base = std::chrono::milliseconds(10);
        return o;
    }

private slots:
    void initTestCase() {
        server_.setProgram("/usr/bin/python3");
        server_.setArguments({QStringLiteral(NIWA_SOURCE_DIR) + "/tests/fixtures/http_fixture_server.py",
                              "--root", root_.path(), "--log", root_.file("requests.log")});
        server_.setProcessChannelMode(QProcess::ForwardedErrorChannel);
        server_.start();
        QVERIFY2(server_.waitForStarted(10000), "cannot start /usr/bin/python3");
        for (int i = 0; i < 100 && !server_.canReadLine(); ++i) server_.waitForReadyRead(100);
        const QByteArray line = server_.readLine().trimmed();
        QVERIFY2(line.startsWith("PORT "), line.constData());
        port_ = line.mid(5).toInt();
        QVERIFY(port_ > 0);
    }

    void cleanupTestCase() {
        server_.kill();
        server_.waitForFinished();
    }

    void sha256MatchesReference() {
        QCOMPARE(runtime::Sha256().hex_digest(), hex_sha256(""));
        const QByteArray data = random_bytes(10000, 7);
        for (size_t chunk : {size_t(1), size_t(63), size_t(64), size_t(65), size_t(4096)}) {
            runtime::Sha256 s;
            for (qsizetype i = 0; i < data.size(); i += qsizetype(chunk))
                s.update(data.constData() + i, std::min<size_t>(chunk, size_t(data.size() - i)));
            QCOMPARE(s.hex_digest(), hex_sha256(data));
        }
    }

    void fullDownloadWithChecksum() {
        const QByteArray data = serve("full.bin", 300000, 1);
        niwa::test::TempDir tmp;
        auto o = options("ok/full.bin", tmp.file("sub/full.bin"));
        o.sha256 = QByteArray::fromStdString(hex_sha256(data)).toUpper().toStdString();
        const auto r = runtime::download(o);
        QCOMPARE(r.sha256, hex_sha256(data));
        QCOMPARE(r.bytes, uint64_t(data.size()));
        QCOMPARE(read_all(tmp.file("sub/full.bin")), data);
        QVERIFY(!QFile::exists(tmp.file("sub/full.bin.part")));
    }

    void cutConnectionResumesWithRange() {
        const QByteArray data = serve("cut.bin", 200000, 2);
        niwa::test::TempDir tmp;
        auto o = options("cut/cut.bin", tmp.file("cut.bin"));
        o.sha256 = hex_sha256(data);
        runtime::download(o);
        QCOMPARE(read_all(tmp.file("cut.bin")), data);
        const QStringList ranges = requests("cut/cut.bin");
        QCOMPARE(ranges.size(), 2);
        QCOMPARE(ranges[0], QString());
        QCOMPARE(ranges[1], QString("bytes=%1-").arg(data.size() / 2));
    }

    void serverIgnoringRangeRestartsFromZero() {
        const QByteArray data = serve("norange.bin", 100000, 3);
        niwa::test::TempDir tmp;
        write_all(tmp.file("norange.bin.part"), QByteArray(5000, 'x'));  // not a prefix of the file
        auto o = options("norange/norange.bin", tmp.file("norange.bin"));
        QStringList notices;
        o.on_notice = [&](const std::string& m) { notices << QString::fromStdString(m); };
        const auto r = runtime::download(o);
        QCOMPARE(read_all(tmp.file("norange.bin")), data);
        QCOMPARE(r.sha256, hex_sha256(data));
        QCOMPARE(requests("norange/norange.bin"), QStringList{"bytes=5000-"});
        QVERIFY2(notices.join('\n').contains("ignored the resume request"), qPrintable(notices.join('\n')));
    }

    // A run that stopped between the last byte and the rename: the server answers 416.
    void completePartIsFinished() {
        const QByteArray data = serve("done.bin", 20000, 13);
        niwa::test::TempDir tmp;
        write_all(tmp.file("done.bin.part"), data);
        auto o = options("ok/done.bin", tmp.file("done.bin"));
        o.sha256 = hex_sha256(data);
        runtime::download(o);
        QCOMPARE(read_all(tmp.file("done.bin")), data);
        QCOMPARE(requests("ok/done.bin"), QStringList{"bytes=20000-"});
    }

    void wrongBytesAreRemoved() {
        const QByteArray data = serve("wrong.bin", 50000, 4);
        niwa::test::TempDir tmp;
        const QString out = tmp.file("wrong.bin");
        const auto r = run_engine({"pull", url("wrong/wrong.bin"), "--out", out, "--sha256",
                                   QString::fromStdString(hex_sha256(data))});
        QCOMPARE(r.exit_code, 1);
        QVERIFY2(r.err.contains("checksum mismatch: expected " + QByteArray::fromStdString(hex_sha256(data)) +
                                ", got "),
                 r.err.constData());
        QVERIFY(r.err.contains("the download was removed"));
        QVERIFY(!QFile::exists(out));
        QVERIFY(!QFile::exists(out + ".part"));
    }

    void notFoundIsNotRetried() {
        niwa::test::TempDir tmp;
        const auto r = run_engine({"pull", url("status/404/missing.bin"), "--out", tmp.file("m.bin"),
                                   "--retries", "3", "--retry-base-ms", "10"});
        QCOMPARE(r.exit_code, 1);
        QVERIFY2(r.err.contains("not found: " + url("status/404/missing.bin").toUtf8() + " (HTTP 404)"),
                 r.err.constData());
        QCOMPARE(requests("status/404/missing.bin").size(), 1);
        QVERIFY(!QFile::exists(tmp.file("m.bin")));
    }

    void serverErrorsAreRetried() {
        const QByteArray data = serve("flaky.bin", 40000, 5);
        niwa::test::TempDir tmp;
        auto o = options("flaky/2/flaky.bin", tmp.file("flaky.bin"));
        o.retries = 2;
        QStringList notices;
        o.on_notice = [&](const std::string& m) { notices << QString::fromStdString(m); };
        runtime::download(o);
        QCOMPARE(read_all(tmp.file("flaky.bin")), data);
        QCOMPARE(requests("flaky/2/flaky.bin").size(), 3);
        QCOMPARE(notices.size(), 2);
        QVERIFY(notices[0].contains("HTTP 500"));
    }

    void retriesRunOut() {
        serve("flakier.bin", 1000, 6);
        niwa::test::TempDir tmp;
        auto o = options("flaky/5/flakier.bin", tmp.file("flakier.bin"));
        o.retries = 1;
        try {
            runtime::download(o);
            QFAIL("expected an error");
        } catch (const runtime::DownloadError& e) {
            QVERIFY2(QByteArray(e.what()).contains("HTTP 500") && QByteArray(e.what()).contains("2 attempts"),
                     e.what());
        }
        QCOMPARE(requests("flaky/5/flakier.bin").size(), 2);
    }

    void stalledTransferTimesOutAndResumes() {
        const QByteArray data = serve("stall-timeout.bin", 100000, 7);
        niwa::test::TempDir tmp;
        auto o = options("stall/stall-timeout.bin", tmp.file("s.bin"));
        o.low_speed_seconds = 1;
        runtime::download(o);
        QCOMPARE(read_all(tmp.file("s.bin")), data);
        QCOMPARE(requests("stall/stall-timeout.bin").size(), 2);
    }

    void jsonProgressLines() {
        const QByteArray data = serve("slow.bin", 640 * 1024, 8);
        niwa::test::TempDir tmp;
        const auto r = run_engine(
            {"pull", url("slow/slow.bin"), "--out", tmp.file("slow.bin"), "--json", "--progress-ms", "50"});
        QCOMPARE(r.exit_code, 0);
        const QList<QByteArray> lines = r.out.trimmed().split('\n');
        QVERIFY2(lines.size() >= 3, r.out.constData());
        double last_bytes = -1;
        for (qsizetype i = 0; i + 1 < lines.size(); ++i) {
            QJsonParseError err;
            const QJsonObject o = QJsonDocument::fromJson(lines[i], &err).object();
            QVERIFY2(err.error == QJsonParseError::NoError, lines[i].constData());
            QVERIFY(o.value("rate").isDouble());
            QCOMPARE(o.value("total").toDouble(), double(data.size()));
            QVERIFY(o.value("bytes").toDouble() >= last_bytes);
            last_bytes = o.value("bytes").toDouble();
        }
        QCOMPARE(last_bytes, double(data.size()));
        const QJsonObject done = QJsonDocument::fromJson(lines.last()).object();
        QCOMPARE(done.value("done").toBool(), true);
        QCOMPARE(done.value("path").toString(), tmp.file("slow.bin"));
        QCOMPARE(done.value("sha256").toString().toStdString(), hex_sha256(data));
    }

    void interruptedRunIsResumed() {
        const QByteArray data = serve("stall.bin", 300000, 9);
        niwa::test::TempDir tmp;
        const QString out = tmp.file("stall.bin");
        const QStringList args = {"pull", url("stall/stall.bin"), "--out", out, "--json"};
        QProcess p;
        p.start(niwa::test::engine_path(), args);
        QVERIFY(p.waitForStarted(10000));
        // The server sends half the file, then stalls: wait until that half is on disk.
        for (int i = 0; i < 600 && QFileInfo(out + ".part").size() < data.size() / 2; ++i) QTest::qWait(50);
        QCOMPARE(QFileInfo(out + ".part").size(), data.size() / 2);
        ::kill(pid_t(p.processId()), SIGINT);
        QVERIFY(p.waitForFinished(30000));
        QCOMPARE(p.exitCode(), 130);
        QVERIFY2(p.readAllStandardError().contains("run the same command again to resume"), "no resume hint");
        QVERIFY(!QFile::exists(out));
        QCOMPARE(QFileInfo(out + ".part").size(), data.size() / 2);

        const auto r = run_engine(args);
        QCOMPARE(r.exit_code, 0);
        QCOMPARE(read_all(out), data);
        QCOMPARE(requests("stall/stall.bin"), (QStringList{"", QString("bytes=%1-").arg(data.size() / 2)}));
    }

    void existingFileIsKept() {
        const QByteArray data = serve("present.bin", 1000, 10);
        niwa::test::TempDir tmp;
        write_all(tmp.file("present.bin"), data);
        auto o = options("ok/present.bin", tmp.file("present.bin"));
        o.sha256 = hex_sha256(data);
        const auto r = runtime::download(o);
        QVERIFY(r.already_present);
        QVERIFY(requests("ok/present.bin").isEmpty());
    }

    void modelFilesHavePublishedSizes() {
        const auto* m = runtime::find_published_model("bonsai-27b");
        QVERIFY(m);
        QCOMPARE(std::string(runtime::find_quant(*m, "")->name),
                 std::string("Ternary-Bonsai-2-27B-PQ2_0.gguf"));
        QCOMPARE(*runtime::find_quant(*m, "")->size, uint64_t(7206168928ull));
        QCOMPARE(*runtime::find_quant(*m, "ptq1_0")->size, uint64_t(5946648928ull));
        QVERIFY(!runtime::find_quant(*m, "q4_0"));
        QCOMPARE(runtime::model_base_url(*m, "http://x/y"), std::string("http://x/y/"));
        qputenv("NIWA_MODEL_BASE_URL", "http://mirror/models/");
        QCOMPARE(runtime::model_base_url(*m, ""), std::string("http://mirror/models/"));
        qunsetenv("NIWA_MODEL_BASE_URL");
        QVERIFY(runtime::model_base_url(*m, "").rfind("https://huggingface.co/", 0) == 0);
    }

    // A small file under the published name: the size check stops it before it is written.
    void modelOfWrongSizeIsRefused() {
        serve("Ternary-Bonsai-2-27B-PTQ1_0.gguf", 4096, 11);
        niwa::test::TempDir tmp;
        const auto r = run_engine({"pull", "--model", "bonsai-27b", "--quant", "ptq1_0", "--base-url",
                                   url("ok"), "--out", tmp.path()});
        QCOMPARE(r.exit_code, 1);
        QVERIFY2(r.err.contains("size mismatch") && r.err.contains("5946648928"), r.err.constData());
        QVERIFY(!QFile::exists(tmp.file("Ternary-Bonsai-2-27B-PTQ1_0.gguf")));
        QCOMPARE(requests("ok/Ternary-Bonsai-2-27B-PTQ1_0.gguf").size(), 1);
    }

    void diskFullMessage() {
        const std::string m = runtime::disk_full_message("/data/models", "/data/models/x.gguf.part",
                                                         7206168928ull, 1000000000ull);
        QVERIFY2(m.rfind("disk full: not enough space in /data/models", 0) == 0, m.c_str());
        QVERIFY(m.find("7206168928 more bytes needed, 7.21 GB; 1.00 GB free") != std::string::npos);
        QVERIFY(m.find("kept at /data/models/x.gguf.part") != std::string::npos);
        const std::string unknown = runtime::disk_full_message("/d", "/d/x.part", std::nullopt, std::nullopt);
        QVERIFY(unknown.find("needed") == std::string::npos);
    }

    // Runs only where a tmpfs can be mounted (root); the message itself is tested above.
    void diskFullOnATinyTmpfs() {
        niwa::test::TempDir tmp;
        const QString mnt = tmp.file("tiny");
        QVERIFY(QDir().mkpath(mnt));
        if (::geteuid() != 0 || ::mount("tmpfs", mnt.toLocal8Bit().constData(), "tmpfs", 0, "size=64k") != 0)
            QSKIP("cannot mount a tmpfs here (needs root)");
        const QByteArray data = serve("big.bin", 256 * 1024, 12);
        // With a Content-Length the free space is checked before writing...
        const auto sized = run_engine({"pull", url("ok/big.bin"), "--out", mnt + "/big.bin"});
        // ... without one the write itself fails with ENOSPC.
        const auto unsized = run_engine({"pull", url("nolength/big.bin"), "--out", mnt + "/big.bin"});
        const bool part_kept = QFileInfo(mnt + "/big.bin.part").size() > 0;
        ::umount(mnt.toLocal8Bit().constData());
        QCOMPARE(sized.exit_code, 1);
        QVERIFY2(sized.err.contains("disk full: not enough space in " + mnt.toUtf8()), sized.err.constData());
        QVERIFY2(sized.err.contains(QByteArray::number(data.size()) + " more bytes needed"),
                 sized.err.constData());
        QCOMPARE(unsized.exit_code, 1);
        QVERIFY2(unsized.err.contains("disk full: not enough space in " + mnt.toUtf8()),
                 unsized.err.constData());
        QVERIFY(part_kept);
    }
};

QTEST_GUILESS_MAIN(TestDownload)
#include "test_download.moc"
