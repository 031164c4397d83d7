// What it takes to start one niwa-engine: the `serve` flags of DESIGN.md plus where the engine
// lives (a local path, or a WSL2 distro). Plain data; Settings fills it, the launchers read it.
#pragma once

#include <QString>
#include <QStringList>

namespace niwa::gui {

struct EngineSettings {
    QString enginePath = QStringLiteral("niwa-engine");  // as seen where the engine runs
    QString modelPath;
    QString mmprojPath;
    QString backend;   // empty: the engine's default
    bool lan = false;  // listen on every interface instead of loopback only
    int port = 8080;
    double memFraction = 0;   // 0: the engine's default
    double vramLimitGiB = 0;  // 0: no limit
    int tensorParallel = 0;   // 0: the engine's default
    int maxSeqs = 0;
    int maxContext = 0;
    QString kvFormat;
    QString apiKeysFile;         // as seen where the engine runs
    QStringList extraArguments;  // appended verbatim (advanced users, stand-ins in tests)

    // WSL2 only: the distro and the folder the engine starts in (inside the distro).
    QString distro;
    QString workingDirectory;

    // `serve --model … --port …` with only the flags that differ from the engine's defaults.
    QStringList serveArguments() const;
    // The address the app reaches the engine at: always loopback (WSL2 forwards it).
    QString localBaseUrl() const;
};

}  // namespace niwa::gui
