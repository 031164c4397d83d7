#include "server/server_process.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QStandardPaths>
#include <QTest>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <httplib.h>

#include "support/engine_process.h"

namespace niwa::test {

int free_loopback_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t len = sizeof addr;
    int port = 0;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
        port = ntohs(addr.sin_port);
    ::close(fd);
    return port;
}

ServerProcess::~ServerProcess() {
    if (proc_ && proc_->state() != QProcess::NotRunning) stop();
}

bool ServerProcess::start(const QString& model, const QStringList& extra, bool ready,
                          const QProcessEnvironment& env) {
    port_ = free_loopback_port();
    proc_ = std::make_unique<QProcess>();
    proc_->setProcessEnvironment(env);
    QStringList args = {
        "serve",     "--model", model,         "--host", "127.0.0.1", "--port", QString::number(port_),
        "--threads", "2",       "--log-level", "info"};
    args += extra;
    proc_->start(engine_path(), args);
    if (!proc_->waitForStarted(10000)) {
        qWarning("could not start %s", qPrintable(engine_path()));
        return false;
    }
    return !ready || wait_ready();
}

QByteArray ServerProcess::log() {
    if (proc_) {
        log_ += proc_->readAllStandardOutput();
        log_ += proc_->readAllStandardError();
    }
    return log_;
}

bool ServerProcess::wait_ready() {
    QByteArray out;
    for (int i = 0; i < 600; ++i) {  // up to 5 minutes on a busy machine
        proc_->waitForReadyRead(500);
        const QByteArray more = proc_->readAllStandardOutput();
        out += more;
        log_ += more + proc_->readAllStandardError();
        if (out.contains("Application startup complete.\n")) return true;
        if (proc_->state() == QProcess::NotRunning) break;
    }
    qWarning("niwa-engine serve did not get ready:\n%s", log_.constData());
    return false;
}

int ServerProcess::stop() {
    if (!proc_) return -1;
    proc_->terminate();
    if (!proc_->waitForFinished(60000)) {
        proc_->kill();
        proc_->waitForFinished();
        return -1;
    }
    log();
    return proc_->exitStatus() == QProcess::NormalExit ? proc_->exitCode() : -1;
}

int ServerProcess::wait_exit(int timeout_ms) {
    if (!proc_->waitForFinished(timeout_ms)) return -1;
    log();
    return proc_->exitStatus() == QProcess::NormalExit ? proc_->exitCode() : -1;
}

long ServerProcess::rss_kb() const {
    QFile f(QStringLiteral("/proc/%1/status").arg(pid()));
    if (!f.open(QIODevice::ReadOnly)) return -1;
    for (const QByteArray& line : f.readAll().split('\n')) {
        if (line.startsWith("VmRSS:")) return line.mid(6).trimmed().split(' ').first().toLong();
    }
    return -1;
}

namespace {

httplib::Headers auth_headers(const std::string& key) {
    httplib::Headers h;
    if (!key.empty()) h.emplace("Authorization", "Bearer " + key);
    return h;
}

HttpReply reply(const httplib::Result& r) {
    HttpReply out;
    if (!r) return out;
    out.status = r->status;
    out.body = r->body;
    out.retry_after = r->get_header_value("Retry-After");
    return out;
}

}  // namespace

HttpReply http_get(int port, const std::string& path, const std::string& key) {
    httplib::Client cli("127.0.0.1", port);
    cli.set_read_timeout(60, 0);
    return reply(cli.Get(path.c_str(), auth_headers(key)));
}

HttpReply http_post(int port, const std::string& path, const std::string& body, const std::string& key) {
    httplib::Client cli("127.0.0.1", port);
    cli.set_read_timeout(120, 0);
    return reply(cli.Post(path.c_str(), auth_headers(key), body, "application/json"));
}

bool run_node(const QString& script, const ServerProcess& server, const QStringList& env, int timeout_ms) {
    const QString node = QStandardPaths::findExecutable("node");
    if (node.isEmpty()) {
        qWarning("node is not on PATH: install Node.js (./install-deps.sh) to run the OpenAI client tests");
        return false;
    }
    const QString dir = QStringLiteral(NIWA_SOURCE_DIR) + "/tests/node";
    if (!QFileInfo::exists(dir + "/node_modules/openai/package.json")) {
        qWarning("%s/node_modules/openai is missing: run `npm ci` in tests/node (./install-deps.sh does)",
                 qPrintable(dir));
        return false;
    }
    QProcess p;
    p.setWorkingDirectory(dir);
    QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
    e.insert("NIWA_URL", server.url());
    for (const QString& kv : env) e.insert(kv.section('=', 0, 0), kv.section('=', 1));
    p.setProcessEnvironment(e);
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(node, {dir + "/" + script});
    if (!p.waitForStarted(10000)) {
        qWarning("could not start node");
        return false;
    }
    const bool finished = p.waitForFinished(timeout_ms);
    if (!finished) {
        p.kill();
        p.waitForFinished();
    }
    const QByteArray out = p.readAll();
    const bool ok = finished && p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0;
    if (!ok)
        qWarning("node %s %s:\n%s", qPrintable(script), finished ? "failed" : "timed out", out.constData());
    else
        qDebug("node %s:\n%s", qPrintable(script), out.constData());
    return ok;
}

}  // namespace niwa::test
