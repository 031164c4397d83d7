// SetupChecks: one QProcess at a time, each check a short command whose exit code and output
// decide the step; fixes are longer commands (wsl --install, install.sh, niwa-engine pull)
// after which the checks run again.
#include "gui/core/setup_checks.h"

#include <QCoreApplication>
#include <QDir>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcessEnvironment>
#include <QRegularExpression>
#include <memory>

#include "gui/core/settings.h"
#include "gui/core/wsl_output_decoder.h"

namespace niwa::gui {

namespace {

const QStringList kStepIds = {QStringLiteral("wsl"), QStringLiteral("distro"), QStringLiteral("gpu"),
                              QStringLiteral("engine"), QStringLiteral("model")};
const QString kDefaultDistro = QStringLiteral("Ubuntu-24.04");
// nvidia-smi comes from the Windows driver and lives here inside WSL2; not always on PATH.
const QString kGpuQuery = QStringLiteral(
    "PATH=\"$PATH:/usr/lib/wsl/lib\"; "
    "nvidia-smi --query-gpu=name,memory.total --format=csv,noheader");

// A download can outlive wsl.exe (ended with the app) and would then race the next one for
// the same .part file. So the pull records its pid; the next one first interrupts a leftover
// (SIGINT: it stops cleanly and keeps the .part), and so does the destructor.
const QString kPullPidFile = QStringLiteral("/tmp/niwa-pull-$(id -u).pid");
const QString kPullScript =
    QStringLiteral("f=") + kPullPidFile +
    QStringLiteral(
        "; old=$(cat \"$f\" 2>/dev/null) && grep -q pull /proc/\"$old\"/cmdline 2>/dev/null && "
        "kill -INT \"$old\" && i=0 && while kill -0 \"$old\" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.2; "
        "i=$((i+1)); done; echo $$ > \"$f\"; exec \"$0\" \"$@\"");
const QString kStopPull = QStringLiteral("f=") + kPullPidFile +
                          QStringLiteral(
                              "; p=$(cat \"$f\" 2>/dev/null) && grep -q pull /proc/\"$p\"/cmdline "
                              "2>/dev/null && kill -INT \"$p\"; rm -f \"$f\"");

struct Distro {
    QString name;
    int version = 0;
    bool isDefault = false;
};

// `wsl.exe -l -v`: "  NAME  STATE  VERSION" then "* Ubuntu-24.04  Running  2" ('*': default).
// The header is localized, so it is recognised by having no version number at the end.
QList<Distro> parseDistros(const QString& listing) {
    QList<Distro> out;
    static const QRegularExpression space(QStringLiteral("\\s+"));
    for (QString line : listing.split(QLatin1Char('\n'), Qt::SkipEmptyParts)) {
        line = line.trimmed();
        Distro d;
        d.isDefault = line.startsWith(QLatin1Char('*'));
        if (d.isDefault) line = line.mid(1).trimmed();
        const QStringList fields = line.split(space, Qt::SkipEmptyParts);
        bool numeric = false;
        if (fields.size() < 3) continue;
        d.version = fields.last().toInt(&numeric);
        if (!numeric) continue;
        d.name = fields.first();
        out.append(d);
    }
    return out;
}

// Docker Desktop's own distros are listed too (and can be the default); they are not for us.
bool isDockerDistro(const QString& name) {
    return name.startsWith(QLatin1String("docker-desktop"));
}

QProcessEnvironment wslEnvironment() {
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("WSL_UTF8"), QStringLiteral("1"));
    return env;
}

QString lastLines(const QString& text, int n) {
    QStringList lines = text.trimmed().split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    if (lines.size() > n) lines = lines.mid(lines.size() - n);
    return lines.join(QLatin1Char('\n')).trimmed();
}

// The message of `niwa-engine` JSON log lines ({"msg": ...}); plain text is kept as it is.
QString readableErrors(const QString& stderrText) {
    QStringList out;
    for (const QString& line : stderrText.split(QLatin1Char('\n'), Qt::SkipEmptyParts)) {
        const QJsonObject o = QJsonDocument::fromJson(line.toUtf8()).object();
        out << (o.contains(QStringLiteral("msg")) ? o.value(QStringLiteral("msg")).toString() : line);
    }
    return lastLines(out.join(QLatin1Char('\n')), 3);
}

}  // namespace

SetupChecks::SetupChecks(Settings& settings, QObject* parent)
#ifdef Q_OS_WIN
    : SetupChecks(settings, Mode::Wsl, parent){}
#else
    : SetupChecks(settings, Mode::Local, parent) {
}
#endif

      SetupChecks::SetupChecks(Settings & settings, Mode mode, QObject * parent)
    : QObject(parent), settings_(settings), mode_(mode) {
    for (const QString& id : kStepIds) steps_.append({id, QStringLiteral("pending"), {}, {}});
}

SetupChecks::~SetupChecks() {
    if (!process_) return;
    process_->disconnect(this);
    if (pulling_) stopPull();
    if (!process_->waitForFinished(pulling_ ? 5000 : 0)) {
        process_->kill();
        process_->waitForFinished(2000);
    }
}

// Interrupts the download where it runs (killing wsl.exe would leave it running in the distro).
void SetupChecks::stopPull() {
    QStringList args{QStringLiteral("sh"), QStringLiteral("-c"), kStopPull};
    QString program = args.takeFirst();
    if (mode_ == Mode::Wsl) {
        const QString distro = resolvedDistro_.isEmpty() ? settings_.distro() : resolvedDistro_;
        args = QStringList{QStringLiteral("--exec"), program} + args;
        if (!distro.isEmpty()) args = QStringList{QStringLiteral("-d"), distro} + args;
        program = wslProgram_;
    }
    QProcess stop;
    stop.setProcessEnvironment(wslEnvironment());
    stop.start(program, args);
    if (!stop.waitForFinished(30000)) stop.kill();
}

QString SetupChecks::titleOf(const QString& id) const {
    if (id == QLatin1String("wsl")) return tr("WSL 2 (Windows Subsystem for Linux)");
    if (id == QLatin1String("distro")) return tr("Linux distribution");
    if (id == QLatin1String("gpu")) return tr("NVIDIA GPU");
    if (id == QLatin1String("engine")) return tr("Niwa engine");
    return tr("Model");
}

QVariantList SetupChecks::steps() const {
    QVariantList out;
    for (const Step& s : steps_)
        out.append(QVariantMap{{QStringLiteral("id"), s.id},
                               {QStringLiteral("title"), titleOf(s.id)},
                               {QStringLiteral("state"), s.state},
                               {QStringLiteral("detail"), s.detail},
                               {QStringLiteral("fix"), s.fix}});
    return out;
}

bool SetupChecks::allOk() const {
    if (running()) return false;
    for (const Step& s : steps_)
        if (s.state != QLatin1String("ok") && s.state != QLatin1String("skipped")) return false;
    return true;
}

SetupChecks::Step* SetupChecks::step(const QString& id) {
    for (Step& s : steps_)
        if (s.id == id) return &s;
    return nullptr;
}

void SetupChecks::setStep(const QString& id, const QString& state, const QString& detail,
                          const QString& fix) {
    Step* s = step(id);
    s->state = state;
    s->detail = detail;
    s->fix = fix;
    emit changed();
}

// --- running the checks ------------------------------------------------------------------

void SetupChecks::runAll() {
    if (running()) return;
    for (Step& s : steps_) s = {s.id, QStringLiteral("pending"), {}, {}};
    progress_ = -1;
    runStep(0);
}

void SetupChecks::runStep(int index) {
    current_ = index;
    if (index >= steps_.size()) {
        current_ = -1;
        emit changed();
        return;
    }
    const QString id = steps_[index].id;
    if (mode_ == Mode::Local && (id == QLatin1String("wsl") || id == QLatin1String("distro"))) {
        setStep(id, QStringLiteral("skipped"), tr("Not needed: the engine runs directly on this computer."));
        runStep(index + 1);
        return;
    }
    setStep(id, QStringLiteral("running"));
    if (id == QLatin1String("wsl")) checkWsl();
    if (id == QLatin1String("distro")) checkDistro();
    if (id == QLatin1String("gpu")) checkGpu();
    if (id == QLatin1String("engine")) checkEngine();
    if (id == QLatin1String("model")) checkModel();
}

// A step that failed in a way the later ones depend on ends the run there.
void SetupChecks::skipFrom(int index, const QString& why) {
    for (int i = index; i < steps_.size(); ++i) {
        steps_[i].state = QStringLiteral("skipped");
        steps_[i].detail = why;
        steps_[i].fix.clear();
    }
    current_ = -1;
    emit changed();
}

void SetupChecks::finishStep(bool ok) {
    const int index = current_;
    const QString id = steps_[index].id;
    if (!ok && (id == QLatin1String("wsl") || id == QLatin1String("distro"))) {
        skipFrom(index + 1, tr("Waiting for the step above."));
        return;
    }
    runStep(index + 1);
}

void SetupChecks::checkWsl() {
    // --version exists only in the Store release of WSL (0.64+), the one with GPU support
    // that is kept up to date; the inbox wsl.exe of older Windows answers it with usage text.
    runWsl({QStringLiteral("--version")}, [this](int code, const QString& out) {
        static const QRegularExpression version(QStringLiteral("(\\d+\\.\\d+\\.\\d+(\\.\\d+)?)"));
        const QRegularExpressionMatch m = version.match(out);
        if (code == 0 && m.hasMatch()) {
            setStep(QStringLiteral("wsl"), QStringLiteral("ok"), tr("WSL %1").arg(m.captured(1)));
            wslFix_ = WslFix::None;
            finishStep(true);
            return;
        }
        if (code == -2) {  // wsl.exe could not be started at all
            wslFix_ = WslFix::Install;
            setStep(QStringLiteral("wsl"), QStringLiteral("failed"), tr("WSL is not installed on this PC."),
                    tr("Install WSL (asks for administrator permission; restart Windows afterwards)."));
        } else {
            wslFix_ = WslFix::Update;
            setStep(QStringLiteral("wsl"), QStringLiteral("failed"),
                    tr("WSL is missing or too old for GPU use (wsl --version: %1).")
                        .arg(out.trimmed().section(QLatin1Char('\n'), 0, 0).trimmed()),
                    tr("Install or update WSL (wsl --install, then wsl --update)."));
        }
        finishStep(false);
    });
}

void SetupChecks::checkDistro() {
    runWsl({QStringLiteral("-l"), QStringLiteral("-v")}, [this](int code, const QString& out) {
        const QList<Distro> distros = code == 0 ? parseDistros(out) : QList<Distro>{};
        const QString wanted = settings_.distro();
        const Distro* chosen = nullptr;
        for (const Distro& d : distros)
            if (wanted.isEmpty() ? d.isDefault && !isDockerDistro(d.name) : d.name == wanted) chosen = &d;
        for (const Distro& d : distros)
            if (!chosen && wanted.isEmpty() && !isDockerDistro(d.name)) chosen = &d;
        distroToFix_.clear();
        if (!chosen) {
            distroToFix_ = wanted.isEmpty() ? kDefaultDistro : wanted;
            QString detail = wanted.isEmpty()
                                 ? tr("No Linux distribution is installed in WSL.")
                                 : tr("The distribution '%1' is not installed in WSL.").arg(wanted);
            // Older WSL registers a Store distro only when it is first opened.
            if (distroInstalled_)
                detail +=
                    QLatin1Char('\n') + tr("If it was just installed, open %1 once from the Start menu to "
                                           "finish its setup, then check again.")
                                            .arg(distroToFix_);
            distroFix_ = DistroFix::Install;
            setStep(QStringLiteral("distro"), QStringLiteral("failed"), detail,
                    tr("Install %1 (a download of about 1 GB).").arg(distroToFix_));
            finishStep(false);
            return;
        }
        if (chosen->version != 2) {
            distroToFix_ = chosen->name;
            distroFix_ = DistroFix::Convert;
            setStep(QStringLiteral("distro"), QStringLiteral("failed"),
                    tr("'%1' runs under WSL 1, which cannot use the GPU.").arg(chosen->name),
                    tr("Convert '%1' to WSL 2 (takes a few minutes).").arg(chosen->name));
            finishStep(false);
            return;
        }
        distroFix_ = DistroFix::None;
        resolvedDistro_ = chosen->name;
        setStep(QStringLiteral("distro"), QStringLiteral("ok"), tr("%1 (WSL 2)").arg(chosen->name));
        finishStep(true);
    });
}

void SetupChecks::checkGpu() {
    runInLinux({QStringLiteral("sh"), QStringLiteral("-c"), kGpuQuery}, [this](int code, const QString& out) {
        QStringList gpus;
        for (const QString& line : out.split(QLatin1Char('\n'), Qt::SkipEmptyParts))
            if (line.contains(QLatin1Char(','))) gpus << line.trimmed();
        if (code == 0 && !gpus.isEmpty()) {
            setStep(QStringLiteral("gpu"), QStringLiteral("ok"), gpus.join(QLatin1Char('\n')));
            finishStep(true);
            return;
        }
        const QString where = mode_ == Mode::Wsl ? tr("inside WSL") : tr("on this computer");
        const QString fix = mode_ == Mode::Wsl
                                ? tr("Install or update the NVIDIA driver for Windows (not inside Linux), "
                                     "restart Windows, then check again.")
                                : tr("Install the NVIDIA driver (nvidia-smi must work), then check again.");
        QString detail = tr("No NVIDIA GPU is visible %1.").arg(where);
        if (!out.trimmed().isEmpty()) detail += QLatin1Char('\n') + lastLines(out, 2);
        setStep(QStringLiteral("gpu"), QStringLiteral("failed"), detail, fix);
        finishStep(false);
    });
}

void SetupChecks::checkEngine() {
    runInLinux({settings_.enginePath(), QStringLiteral("--version")}, [this](int code, const QString& out) {
        const QString first = out.trimmed().section(QLatin1Char('\n'), 0, 0);
        if (code == 0 && first.startsWith(QLatin1String("niwa-engine"))) {
            setStep(QStringLiteral("engine"), QStringLiteral("ok"), first);
            finishStep(true);
            return;
        }
        setStep(QStringLiteral("engine"), QStringLiteral("failed"),
                tr("niwa-engine was not found at '%1'.").arg(settings_.enginePath()),
                tr("Install the engine and its libraries (takes a few minutes)."));
        finishStep(false);
    });
}

void SetupChecks::checkModel() {
    const QString path = settings_.modelPath();
    const QString fix = tr("Download Ternary-Bonsai-2-27B (about 7.2 GB).");
    if (path.isEmpty()) {
        setStep(QStringLiteral("model"), QStringLiteral("failed"), tr("No model file is chosen yet."), fix);
        finishStep(false);
        return;
    }
    const QStringList test{QStringLiteral("sh"), QStringLiteral("-c"), QStringLiteral("test -s \"$1\""),
                           QStringLiteral("sh"), path};
    runInLinux(test, [this, path, fix](int code, const QString&) {
        if (code == 0) {
            setStep(QStringLiteral("model"), QStringLiteral("ok"), path);
            finishStep(true);
            return;
        }
        setStep(QStringLiteral("model"), QStringLiteral("failed"),
                tr("The model file '%1' is missing.").arg(path), fix);
        finishStep(false);
    });
}

// --- fixes -------------------------------------------------------------------------------

void SetupChecks::applyFix(const QString& id) {
    if (running() || !step(id)) return;
    if (id == QLatin1String("wsl")) return fixWsl();
    if (id == QLatin1String("distro")) return fixDistro();
    if (id == QLatin1String("engine")) return fixEngine();
    if (id == QLatin1String("model")) return fixModel();
    runAll();  // the GPU's fix is the user's to make; checking again is all we can do
}

void SetupChecks::beginFix(const QString& id, const QString& detail) {
    fixing_ = true;
    progress_ = -1;
    setStep(id, QStringLiteral("running"), detail, step(id)->fix);  // offered again if it fails
}

void SetupChecks::endFix(bool ok, const QString& id, const QString& detail) {
    fixing_ = false;
    progress_ = -1;
    if (!ok) {
        setStep(id, QStringLiteral("failed"), detail, step(id)->fix);
        return;
    }
    runAll();
}

void SetupChecks::fixWsl() {
    if (wslFix_ == WslFix::Update) {
        beginFix(QStringLiteral("wsl"), tr("Updating WSL…"));
        runWsl({QStringLiteral("--update")}, [this](int code, const QString& out) {
            endFix(code == 0, QStringLiteral("wsl"), tr("wsl --update failed: %1").arg(lastLines(out, 3)));
        });
        return;
    }
    beginFix(QStringLiteral("wsl"), tr("Installing WSL…"));
    runWsl({QStringLiteral("--install"), QStringLiteral("--no-distribution")}, [this](int code,
                                                                                      const QString& out) {
        fixing_ = false;
        if (code != 0) {
            setStep(QStringLiteral("wsl"), QStringLiteral("failed"),
                    tr("wsl --install failed: %1").arg(lastLines(out, 3)), step(QStringLiteral("wsl"))->fix);
            return;
        }
        // WSL's optional components only load after a restart; checking now would fail.
        setStep(QStringLiteral("wsl"), QStringLiteral("failed"),
                tr("WSL is installed. Restart Windows, then open Niwa again to continue."));
    });
}

void SetupChecks::fixDistro() {
    const QString name = distroToFix_.isEmpty() ? kDefaultDistro : distroToFix_;
    if (distroFix_ == DistroFix::Convert) {
        beginFix(QStringLiteral("distro"), tr("Converting '%1' to WSL 2…").arg(name));
        runWsl({QStringLiteral("--set-version"), name, QStringLiteral("2")},
               [this](int code, const QString& out) {
                   endFix(code == 0, QStringLiteral("distro"),
                          tr("Converting to WSL 2 failed: %1").arg(lastLines(out, 3)));
               });
        return;
    }
    beginFix(QStringLiteral("distro"), tr("Installing %1…").arg(name));
    // --no-launch: no console window asking for a user name; the engine runs as root there.
    runWsl({QStringLiteral("--install"), QStringLiteral("-d"), name, QStringLiteral("--no-launch")},
           [this, name](int code, const QString& out) {
               if (code == 0) {
                   settings_.setDistro(name);
                   distroInstalled_ = true;
               }
               endFix(code == 0, QStringLiteral("distro"),
                      tr("Installing %1 failed: %2").arg(name, lastLines(out, 3)));
           });
}

QString SetupChecks::defaultInstallScript() const {
    // The packages' layouts (cmake/NiwaPackaging.cmake): bin\niwa.exe and wsl\linux\ on
    // Windows; /usr/bin/niwa and /usr/share/niwa/wsl/linux/ on Linux.
    const QString relative = mode_ == Mode::Wsl ? QStringLiteral("../wsl/linux/install.sh")
                                                : QStringLiteral("../share/niwa/wsl/linux/install.sh");
    return QDir::cleanPath(QDir(QCoreApplication::applicationDirPath()).absoluteFilePath(relative));
}

void SetupChecks::fixEngine() {
    beginFix(QStringLiteral("engine"), tr("Installing the engine…"));
    QStringList script;
    if (!installScript_.isEmpty()) {
        script << QStringLiteral("bash") << installScript_;
    } else if (mode_ == Mode::Wsl) {
        // The bundled script has a Windows path; the distro sees it through wslpath.
        script << QStringLiteral("sh") << QStringLiteral("-c")
               << QStringLiteral("s=$(wslpath -u \"$1\") && shift && exec bash \"$s\" \"$@\"")
               << QStringLiteral("sh") << QDir::toNativeSeparators(defaultInstallScript());
    } else {
        script << QStringLiteral("bash") << defaultInstallScript();
    }
    script << installArguments_;
    // As the user: the engine goes under ~/.local and the models folder is theirs. In WSL the
    // packages were installed as root just before; here install.sh says which are missing.
    const QStringList asUser =
        script + (mode_ == Mode::Wsl ? QStringList{QStringLiteral("--skip-deps")} : QStringList{});
    auto install = [this, asUser] {
        runInLinux(asUser, [this](int code, const QString& out) {
            static const QRegularExpression installed(QStringLiteral("^NIWA_ENGINE=(.+)$"),
                                                      QRegularExpression::MultilineOption);
            const QRegularExpressionMatch m = installed.match(out);
            if (code == 0 && m.hasMatch()) settings_.setEnginePath(m.captured(1).trimmed());
            endFix(code == 0 && m.hasMatch(), QStringLiteral("engine"),
                   tr("The engine could not be installed: %1").arg(lastLines(out, 4)));
        });
    };
    if (mode_ == Mode::Local) {
        install();
        return;
    }
    // The runtime packages need root; `wsl.exe -u root` needs no password.
    runInLinux(
        script + QStringList{QStringLiteral("--deps-only")},
        [this, install](int code, const QString& out) {
            if (code != 0) {
                endFix(false, QStringLiteral("engine"),
                       tr("The engine's libraries could not be installed: %1").arg(lastLines(out, 4)));
                return;
            }
            install();
        },
        {}, true);
}

void SetupChecks::fixModel() {
    if (step(QStringLiteral("engine"))->state != QLatin1String("ok")) {
        setStep(QStringLiteral("model"), QStringLiteral("failed"),
                tr("Install the engine first: it downloads the model."), step(QStringLiteral("model"))->fix);
        return;
    }
    beginFix(QStringLiteral("model"), tr("Downloading the model…"));
    progress_ = 0;
    emit changed();
    auto donePath = std::make_shared<QString>();
    const QStringList pull = QStringList{QStringLiteral("sh"), QStringLiteral("-c"), kPullScript,
                                         settings_.enginePath(), QStringLiteral("pull")} +
                             pullArguments_ + QStringList{QStringLiteral("--json")};
    pulling_ = true;
    runInLinux(
        pull,
        [this, donePath](int code, const QString& errors) {
            pulling_ = false;
            if (code == 0 && !donePath->isEmpty()) settings_.setModelPath(*donePath);
            endFix(code == 0 && !donePath->isEmpty(), QStringLiteral("model"),
                   tr("The download stopped: %1\nChoose the fix again to resume it.")
                       .arg(readableErrors(errors)));
        },
        [this, donePath](const QString& line) {
            const QJsonObject o = QJsonDocument::fromJson(line.toUtf8()).object();
            if (o.value(QStringLiteral("done")).toBool()) {
                *donePath = o.value(QStringLiteral("path")).toString();
                return;
            }
            const double total = o.value(QStringLiteral("total")).toDouble();
            if (total <= 0) return;
            const double bytes = o.value(QStringLiteral("bytes")).toDouble();
            progress_ = qBound(0.0, bytes / total, 1.0);
            setStep(QStringLiteral("model"), QStringLiteral("running"),
                    tr("Downloading the model: %1 of %2 GB")
                        .arg(bytes / 1e9, 0, 'f', 2)
                        .arg(total / 1e9, 0, 'f', 2),
                    step(QStringLiteral("model"))->fix);
        });
}

// --- running commands --------------------------------------------------------------------

void SetupChecks::runWsl(const QStringList& args, Done done) {
    runProgram(wslProgram_, args, std::move(done), {});
}

void SetupChecks::runInLinux(const QStringList& command, Done done, LineSink lines, bool asRoot) {
    if (mode_ == Mode::Local) {
        runProgram(command.first(), command.mid(1), std::move(done), std::move(lines));
        return;
    }
    QStringList args;
    const QString distro = resolvedDistro_.isEmpty() ? settings_.distro() : resolvedDistro_;
    if (!distro.isEmpty()) args << QStringLiteral("-d") << distro;
    if (asRoot) args << QStringLiteral("-u") << QStringLiteral("root");
    args << QStringLiteral("--exec") << command;
    runProgram(wslProgram_, args, std::move(done), std::move(lines));
}

// Exit code -2: the program could not be started; -1: it crashed. With a line sink, stdout is
// handed over line by line and `done` gets stderr; otherwise `done` gets both, merged.
void SetupChecks::runProgram(const QString& program, const QStringList& args, Done done, LineSink lines) {
    auto* p = new QProcess(this);
    process_ = p;
    p->setProcessChannelMode(lines ? QProcess::SeparateChannels : QProcess::MergedChannels);
    p->setProcessEnvironment(wslEnvironment());
    auto decoder = std::make_shared<WslOutputDecoder>();
    auto partial = std::make_shared<QString>();
    if (lines) {
        connect(p, &QProcess::readyReadStandardOutput, this, [p, decoder, partial, lines] {
            *partial += decoder->decode(p->readAllStandardOutput());
            qsizetype nl;
            while ((nl = partial->indexOf(QLatin1Char('\n'))) >= 0) {
                const QString line = partial->left(nl).trimmed();
                partial->remove(0, nl + 1);
                if (!line.isEmpty()) lines(line);
            }
        });
    }
    connect(p, &QProcess::finished, this,
            [p, decoder, partial, done, lines](int code, QProcess::ExitStatus status) {
                if (lines) {
                    const QString last = (*partial + decoder->decode(p->readAllStandardOutput())).trimmed();
                    for (const QString& line : last.split(QLatin1Char('\n'), Qt::SkipEmptyParts))
                        lines(line.trimmed());
                }
                const QString rest = lines ? WslOutputDecoder().decode(p->readAllStandardError())
                                           : decoder->decode(p->readAll());
                p->deleteLater();
                done(status == QProcess::CrashExit ? -1 : code, rest);
            });
    connect(p, &QProcess::errorOccurred, this, [p, done](QProcess::ProcessError error) {
        if (error != QProcess::FailedToStart) return;
        p->deleteLater();
        done(-2, p->errorString());
    });
    p->start(program, args);
}

}  // namespace niwa::gui
