// Runs the real niwa-engine executable (the one this build made) and collects its output.
#pragma once

#include <QByteArray>
#include <QString>
#include <QStringList>

namespace niwa::test {

struct EngineRun {
    int exit_code = -1;
    QByteArray out;  // stdout
    QByteArray err;  // stderr
};

// Path of the niwa-engine built with the tests.
QString engine_path();
// Runs `niwa-engine args...` to completion (fails the test on a time-out).
EngineRun run_engine(const QStringList& args, int timeout_ms = 120000);
// Makes (once per process and preset/seed/quant) a synthetic model with mkmodel and
// returns its path.
QString synthetic_model(const QString& preset, int seed = 1, const QString& quant = "pq2_0");

}  // namespace niwa::test
