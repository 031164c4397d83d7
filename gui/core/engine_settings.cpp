// Builds the engine's command line from EngineSettings (flag names: DESIGN.md, CLI contract).
#include "gui/core/engine_settings.h"

namespace niwa::gui {

QStringList EngineSettings::serveArguments() const {
    QStringList a{QStringLiteral("serve"), QStringLiteral("--model"), modelPath};
    if (!mmprojPath.isEmpty()) a << QStringLiteral("--mmproj") << mmprojPath;
    a << QStringLiteral("--host") << (lan ? QStringLiteral("0.0.0.0") : QStringLiteral("127.0.0.1"));
    a << QStringLiteral("--port") << QString::number(port);
    if (!backend.isEmpty()) a << QStringLiteral("--backend") << backend;
    if (tensorParallel > 0) a << QStringLiteral("--tp") << QString::number(tensorParallel);
    if (memFraction > 0) a << QStringLiteral("--mem-fraction") << QString::number(memFraction);
    if (vramLimitGiB > 0) a << QStringLiteral("--vram-limit") << QString::number(vramLimitGiB);
    if (maxSeqs > 0) a << QStringLiteral("--max-seqs") << QString::number(maxSeqs);
    if (maxContext > 0) a << QStringLiteral("--max-context") << QString::number(maxContext);
    if (!kvFormat.isEmpty()) a << QStringLiteral("--kv-format") << kvFormat;
    if (!apiKeysFile.isEmpty()) a << QStringLiteral("--api-keys") << apiKeysFile;
    return a + extraArguments;
}

QString EngineSettings::localBaseUrl() const {
    return QStringLiteral("http://127.0.0.1:%1").arg(port);
}

}  // namespace niwa::gui
