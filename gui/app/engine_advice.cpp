// engineFixFor: ordered from the most specific pattern to the most general.
#include "gui/app/engine_advice.h"

#include <QCoreApplication>
#include <QStringList>

namespace niwa::gui {

namespace {

// The reason without the command line the launcher quotes ("$ niwa-engine serve --model …"):
// paths and flags there would match the patterns below.
QString withoutCommandLine(const QString& reason) {
    QStringList lines = reason.split(QLatin1Char('\n'));
    for (QString& line : lines) {
        const qsizetype dollar = line.indexOf(QLatin1String("$ "));
        if (dollar >= 0) line.truncate(dollar);
    }
    return lines.join(QLatin1Char('\n')).toLower();
}

}  // namespace

QString engineFixFor(const QString& reason) {
    if (reason.isEmpty()) return {};
    const QString r = withoutCommandLine(reason);
    if (r.contains(QLatin1String("could not start")) ||
        r.contains(QLatin1String("no such file or directory: niwa-engine")))
        return QCoreApplication::translate(
            "EngineAdvice",
            "The engine program was not found. Run setup again to install it, or set its path in "
            "Settings.");
    if (r.contains(QLatin1String("address already in use")) || r.contains(QLatin1String("could not bind")) ||
        r.contains(QLatin1String("cannot listen")))
        return QCoreApplication::translate(
            "EngineAdvice", "Another program uses this port. Choose another port and start again.");
    if (r.contains(QLatin1String("out of memory")) || r.contains(QLatin1String("does not fit")) ||
        r.contains(QLatin1String("bad_alloc")))
        return QCoreApplication::translate(
            "EngineAdvice",
            "The GPUs ran out of memory. Lower the context length, the maximum sequences or the memory "
            "share, or choose a smaller KV format.");
    if (r.contains(QLatin1String("api keys")) || r.contains(QLatin1String("api-keys")) ||
        r.contains(QLatin1String("allow-unauthenticated")))
        return QCoreApplication::translate(
            "EngineAdvice",
            "Serving on the LAN needs an API key. Turn LAN serving off and on again to make a new one.");
    if (r.contains(QLatin1String("model")) &&
        (r.contains(QLatin1String("no such file")) || r.contains(QLatin1String("not a file")) ||
         r.contains(QLatin1String("cannot open")) || r.contains(QLatin1String("could not open"))))
        return QCoreApplication::translate(
            "EngineAdvice", "The model file is missing. Choose it again, or run setup to download it.");
    if (r.contains(QLatin1String("gguf")) || r.contains(QLatin1String("tensor")) ||
        r.contains(QLatin1String("magic")))
        return QCoreApplication::translate(
            "EngineAdvice", "The model file is damaged or not a Bonsai model. Download it again with setup.");
    if (r.contains(QLatin1String("cuda")) || r.contains(QLatin1String("gpu")) ||
        r.contains(QLatin1String("nvidia")))
        return QCoreApplication::translate(
            "EngineAdvice",
            "The GPU could not be used. Update the NVIDIA driver, or choose the CPU backend.");
    if (r.contains(QLatin1String("distro")) || r.contains(QLatin1String("wsl")))
        return QCoreApplication::translate("EngineAdvice",
                                           "WSL is not ready. Run setup to install or repair it.");
    return QCoreApplication::translate("EngineAdvice", "See the log below for details, then start again.");
}

}  // namespace niwa::gui
