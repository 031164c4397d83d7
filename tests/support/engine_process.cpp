#include "support/engine_process.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHash>
#include <QProcess>
#include <QStandardPaths>
#include <QTest>

namespace niwa::test {

QString engine_path() { return QStringLiteral(NIWA_ENGINE_PATH); }

EngineRun run_engine(const QStringList& args, int timeout_ms) {
    QProcess p;
    p.start(engine_path(), args);
    EngineRun r;
    if (!p.waitForStarted(10000)) {
        qWarning("could not start %s", qPrintable(engine_path()));
        return r;
    }
    if (!p.waitForFinished(timeout_ms)) {
        p.kill();
        p.waitForFinished();
        qWarning("niwa-engine %s timed out", qPrintable(args.join(' ')));
    }
    r.exit_code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = p.readAllStandardOutput();
    r.err = p.readAllStandardError();
    return r;
}

QString synthetic_model(const QString& preset, int seed, const QString& quant) {
    static QHash<QString, QString> made;
    const QString key = preset + "-" + QString::number(seed) + "-" + quant;
    if (made.contains(key)) return made[key];
    // Shared across test executables of one build: models are deterministic per seed.
    const QString dir = QStringLiteral(NIWA_BINARY_DIR) + "/test-models";
    QDir().mkpath(dir);
    const QString path = dir + "/" + key + ".gguf";
    if (!QFileInfo::exists(path)) {
        const QString tmp = path + ".making." + QString::number(QCoreApplication::applicationPid());
        const EngineRun r = run_engine({"mkmodel", "--preset", preset, "--seed", QString::number(seed),
                                        "--quant", quant, "--out", tmp},
                                       600000);
        if (r.exit_code != 0) {
            qWarning("mkmodel failed: %s", r.err.constData());
            return {};
        }
        QFile::remove(path);
        QFile::rename(tmp, path);
    }
    made[key] = path;
    return path;
}

}  // namespace niwa::test
