// LanExposure: what Windows needs beyond binding 0.0.0.0 for the engine in WSL2 to be
// reachable from the LAN — a port forward and firewall rules, made by niwa-lan.ps1 run
// elevated (one UAC prompt). Elsewhere binding 0.0.0.0 is enough and every call reports
// success at once, running nothing.
#pragma once

#include <QObject>
#include <QString>
#include <functional>
#include <optional>
#include <utility>

class QProcess;

namespace niwa::gui {

class LanExposure : public QObject {
    Q_OBJECT

public:
    enum class Action { Enable, Disable, Reapply };
    Q_ENUM(Action)
    // Declined: the user said no to the UAC prompt.
    enum class Outcome { Done, Declined, Failed };
    Q_ENUM(Outcome)

    explicit LanExposure(QObject* parent = nullptr);
    ~LanExposure() override;

    // Whether this platform needs the helper at all (Windows).
    static bool needed();

    // Empty: the default distro.
    void setDistro(const QString& distro) { distro_ = distro; }
    // niwa-lan.ps1; empty (the default): looked up beside the app.
    void setScript(const QString& path) { script_ = path; }
    QString script() const;

    // Opens the port to the LAN (elevated).
    void enable(int port);
    // Removes what enable added (elevated).
    void disable(int port);
    // After the engine starts: asks the helper (unelevated) whether the NAT forward points at
    // the distro's current address, and re-points it (elevated) when it does not.
    void checkAndReapply(int port);
    // A helper still runs. A call made meanwhile waits for it; a later enable or disable
    // replaces a waiting call, which then reports nothing (a reapply replaces nothing).
    bool busy() const { return busy_; }

signals:
    // Once per call. message: why, for Declined and Failed (translated, with the helper's own
    // message when it gave one); empty for Done. Reapply reports Done also when nothing was needed.
    void finished(niwa::gui::LanExposure::Action action, niwa::gui::LanExposure::Outcome outcome,
                  const QString& message);

private:
    void start(Action action, int port);
    void finish(Action action, Outcome outcome, const QString& message);
#ifdef Q_OS_WIN
    struct Status {
        bool answered = false;  // the helper wrote its JSON
        bool ok = false;
        QString error;
        QString mode;     // nat, mirrored
        QString address;  // the distro's (NAT)
        bool needsReapply = false;
    };
    static Status readStatus(const QString& file);
    void runStatus(int port, std::function<void(const Status&)> then);
    void runElevated(Action action, int port, const Status& status);
    QString statusFile() const;
#endif

    QString distro_;
    QString script_;
    bool busy_ = false;
    std::optional<std::pair<Action, int>> waiting_;
};

}  // namespace niwa::gui
