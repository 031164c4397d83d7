// fake_niwa_engine: a stand-in executable for `niwa-engine serve` (until the real server
// lands, and for failure modes the real one should not be made to show): the FakeEngine HTTP
// server plus the engine's log lines and exit behaviour. Flags after `serve` are the real
// ones (--port is used, the rest ignored) plus --fake-* knobs for the tests:
//   --fake-load-steps N      /health answers 503 with progress N times before 200
//   --fake-no-startup-line   never print "Application startup complete."
//   --fake-never-healthy     /health stays 503
//   --fake-deaf              do not listen at all (a hung engine)
//   --fake-ignore-term       ignore SIGTERM (only SIGKILL ends it)
//   --fake-exit-after-ms MS  exit on its own after MS with --fake-exit-code (default 1)
//   --fake-marker FILE       write FILE when ending on SIGTERM
#include <QCoreApplication>
#include <QFile>
#include <QStringList>
#include <QTimer>
#include <atomic>
#include <csignal>
#include <cstdio>

#include "fake_engine.h"

namespace {

std::atomic<bool> termRequested{false};

void onTerm(int) {
    termRequested = true;
}

void say(const QString& line) {
    std::fputs((line + QLatin1Char('\n')).toUtf8().constData(), stdout);
    std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
    QCoreApplication app(argc, argv);
    const QStringList args = app.arguments().mid(1);
    if (args.value(0) != QLatin1String("serve")) {
        std::fprintf(stderr, "fake_niwa_engine: only 'serve' is faked\n");
        return 2;
    }
    const auto value = [&args](const char* flag, const QString& fallback = {}) {
        const qsizetype i = args.indexOf(QLatin1String(flag));
        return i >= 0 && i + 1 < args.size() ? args[i + 1] : fallback;
    };
    const auto flag = [&args](const char* name) { return args.contains(QLatin1String(name)); };

    const bool ignoreTerm = flag("--fake-ignore-term");
    std::signal(SIGTERM, ignoreTerm ? SIG_IGN : onTerm);
    const QString marker = value("--fake-marker");
    QTimer termWatch;
    QObject::connect(&termWatch, &QTimer::timeout, [&] {
        if (!termRequested) return;
        say(QStringLiteral("shutting down"));
        if (!marker.isEmpty()) {
            QFile f(marker);
            if (f.open(QIODevice::WriteOnly)) f.write("terminated\n");
        }
        app.exit(0);
    });
    termWatch.start(10);

    say(QStringLiteral("niwa-engine (fake) pid %1").arg(QCoreApplication::applicationPid()));
    say(QStringLiteral("loading model %1 — モデルを読み込み中").arg(value("--model")));

    niwa::test::FakeEngine engine;
    const int steps = value("--fake-load-steps", QStringLiteral("0")).toInt();
    QList<double> progress;
    for (int i = 0; i < steps; ++i) progress << double(i + 1) / double(steps + 1);
    if (flag("--fake-never-healthy"))
        for (int i = 0; i < 1000000; ++i) progress << 0.5;
    engine.setLoadingSteps(progress);
    if (!flag("--fake-deaf") && !engine.listen(quint16(value("--port", QStringLiteral("8080")).toInt()))) {
        say(QStringLiteral("error: cannot listen on port %1").arg(value("--port")));
        return 1;
    }
    if (!flag("--fake-no-startup-line")) say(QStringLiteral("Application startup complete."));

    if (const QString ms = value("--fake-exit-after-ms"); !ms.isEmpty()) {
        const int code = value("--fake-exit-code", QStringLiteral("1")).toInt();
        QTimer::singleShot(ms.toInt(), [code] {
            say(QStringLiteral("error: CUDA out of memory while allocating the KV pool"));
            std::exit(code);
        });
    }
    return app.exec();
}
