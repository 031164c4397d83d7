// The first-run wizard's logic: checks that WSL2, a distro, the GPU inside it, the engine and
// the model are in place, one step at a time, and offers a fix for each one that is not. On
// Windows the commands run through wsl.exe; elsewhere they run here and the WSL steps are
// skipped. The wizard page only shows `steps` and calls runAll()/applyFix().
#pragma once

#include <QObject>
#include <QPointer>
#include <QProcess>
#include <QStringList>
#include <QVariantList>
#include <functional>

namespace niwa::gui {

class Settings;

class SetupChecks : public QObject {
    Q_OBJECT
    // Each step: {id: "wsl"|"distro"|"gpu"|"engine"|"model", title, state:
    // "pending"|"running"|"ok"|"failed"|"skipped", detail, fix (empty when none is offered)}.
    Q_PROPERTY(QVariantList steps READ steps NOTIFY changed)
    Q_PROPERTY(bool running READ running NOTIFY changed)
    Q_PROPERTY(bool allOk READ allOk NOTIFY changed)
    // 0..1 while a fix with measurable progress (the model download) runs; -1 otherwise.
    Q_PROPERTY(double progress READ progress NOTIFY changed)

public:
    // How commands reach the engine's Linux: through wsl.exe, or run right here.
    enum class Mode { Wsl, Local };

    // The platform's mode: Wsl on Windows, Local elsewhere.
    explicit SetupChecks(Settings& settings, QObject* parent = nullptr);
    SetupChecks(Settings& settings, Mode mode, QObject* parent = nullptr);
    ~SetupChecks() override;

    // wsl.exe by default; tests point it at a stand-in with the same argument grammar.
    void setWslProgram(const QString& program) { wslProgram_ = program; }
    // wsl/linux/install.sh as the distro sees it (default: the one bundled next to the app,
    // translated with wslpath). Local mode runs it as it is.
    void setInstallScript(const QString& path) { installScript_ = path; }
    // The arguments install.sh gets (default: none, it installs under ~/.local).
    void setInstallArguments(const QStringList& args) { installArguments_ = args; }
    // What `niwa-engine pull … --json` fetches: default `--model bonsai-27b` (its catalog
    // entry); a mirror or a test gives `URL --out FILE` or adds `--base-url URL`.
    void setPullArguments(const QStringList& args) { pullArguments_ = args; }

    QVariantList steps() const;
    bool running() const { return current_ >= 0 || fixing_; }
    bool allOk() const;
    double progress() const { return progress_; }

    // Runs every check in order; a failed step leaves the ones that depend on it skipped.
    Q_INVOKABLE void runAll();
    // Runs the fix offered for step id, then the checks again. Ignored while running.
    Q_INVOKABLE void applyFix(const QString& id);

signals:
    void changed();

private:
    struct Step {
        QString id;
        QString state;
        QString detail;
        QString fix;
    };
    using Done = std::function<void(int exitCode, const QString& output)>;
    using LineSink = std::function<void(const QString& line)>;

    QString titleOf(const QString& id) const;
    Step* step(const QString& id);
    void setStep(const QString& id, const QString& state, const QString& detail = {},
                 const QString& fix = {});
    void runStep(int index);
    void finishStep(bool ok);
    void skipFrom(int index, const QString& why);

    void checkWsl();
    void checkDistro();
    void checkGpu();
    void checkEngine();
    void checkModel();

    void fixWsl();
    void fixDistro();
    void fixEngine();
    void fixModel();
    void stopPull();
    void beginFix(const QString& id, const QString& detail);
    void endFix(bool ok, const QString& id, const QString& detail);

    // A command run where the engine runs (inside the distro, or here).
    void runInLinux(const QStringList& command, Done done, LineSink lines = {}, bool asRoot = false);
    // wsl.exe itself, with its own arguments.
    void runWsl(const QStringList& args, Done done);
    void runProgram(const QString& program, const QStringList& args, Done done, LineSink lines);
    QString defaultInstallScript() const;

    enum class WslFix { None, Install, Update };
    enum class DistroFix { None, Install, Convert };

    Settings& settings_;
    Mode mode_;
    QString wslProgram_ = QStringLiteral("wsl.exe");
    QString installScript_;
    QStringList installArguments_;
    QStringList pullArguments_{QStringLiteral("--model"), QStringLiteral("bonsai-27b")};
    QList<Step> steps_;
    int current_ = -1;
    bool fixing_ = false;
    bool pulling_ = false;
    double progress_ = -1;
    WslFix wslFix_ = WslFix::None;
    DistroFix distroFix_ = DistroFix::None;
    QString distroToFix_;           // the distro the offered fix installs or converts
    bool distroInstalled_ = false;  // by our fix, in this session
    QString resolvedDistro_;        // the distro the checks found (the default one when none is set)
    QPointer<QProcess> process_;
};

}  // namespace niwa::gui
