// A real `niwa-engine serve` on a free loopback port for the server tests, the OpenAI Node
// client scripts run against it (tests/node/*.mjs), and small HTTP helpers.
#pragma once

#include <QByteArray>
#include <QProcess>
#include <QProcessEnvironment>
#include <QString>
#include <QStringList>

#include <memory>

#include <nlohmann/json.hpp>

namespace niwa::test {

// A port nothing listens on now (the kernel's pick for 127.0.0.1:0).
int free_loopback_port();

class ServerProcess {
public:
    ServerProcess() = default;
    ~ServerProcess();  // stops the server

    // Starts `niwa-engine serve --model MODEL --host 127.0.0.1 --port P extra...`; with
    // `wait_ready`, waits (bounded) for `Application startup complete.`. False with the
    // output in `log()` when it exits or never gets ready.
    bool start(const QString& model, const QStringList& extra = {}, bool wait_ready = true,
               const QProcessEnvironment& env = QProcessEnvironment::systemEnvironment());
    bool wait_ready();
    // SIGTERM, then the exit code (-1 when it had to be killed).
    int stop();
    // Waits for the process to exit on its own; its exit code, -1 when it did not.
    int wait_exit(int timeout_ms);

    int port() const { return port_; }
    QString url() const { return QStringLiteral("http://127.0.0.1:%1").arg(port_); }
    qint64 pid() const { return proc_ ? proc_->processId() : 0; }
    long rss_kb() const;  // VmRSS of the server process
    QByteArray log();     // stdout and stderr so far

private:
    std::unique_ptr<QProcess> proc_;
    int port_ = 0;
    QByteArray log_;
};

struct HttpReply {
    int status = 0;  // 0: no connection
    std::string body;
    std::string retry_after;
    nlohmann::json json() const { return nlohmann::json::parse(body, nullptr, false); }
};

HttpReply http_get(int port, const std::string& path, const std::string& key = {});
HttpReply http_post(int port, const std::string& path, const std::string& body, const std::string& key = {});

// Runs `node tests/node/SCRIPT` with NIWA_URL (and `env`) set; fails the test with the
// script's output when node or the OpenAI package is missing or the script fails.
bool run_node(const QString& script, const ServerProcess& server, const QStringList& env = {},
              int timeout_ms = 240000);

}  // namespace niwa::test
