// The app's command line, with QCommandLineParser; values are checked here so a bad one
// stops the app with a message instead of reaching the engine.
#include "gui/app/command_line.h"

#include <QCommandLineParser>

namespace niwa::gui {

CommandLine parseCommandLine(const QStringList& arguments) {
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral("Niwa: run a large language model for the whole office."));
    const QCommandLineOption help(QStringList{QStringLiteral("h"), QStringLiteral("help")},
                                  QStringLiteral("Show this help."));
    const QCommandLineOption model(QStringLiteral("model"), QStringLiteral("The model file (GGUF)."),
                                   QStringLiteral("FILE"));
    const QCommandLineOption mmproj(QStringLiteral("mmproj"), QStringLiteral("The vision projector (GGUF)."),
                                    QStringLiteral("FILE"));
    const QCommandLineOption backend(QStringLiteral("backend"), QStringLiteral("cpu or cuda."),
                                     QStringLiteral("NAME"));
    const QCommandLineOption port(QStringLiteral("port"), QStringLiteral("The engine's port."),
                                  QStringLiteral("P"));
    const QCommandLineOption start(QStringLiteral("start"), QStringLiteral("Start the engine at once."));
    const QCommandLineOption profile(QStringLiteral("profile"),
                                     QStringLiteral("Keep settings and chats in DIR (portable use, tests)."),
                                     QStringLiteral("DIR"));
    const QCommandLineOption screenshot(QStringLiteral("screenshot"),
                                        QStringLiteral("Save a screenshot of each page into DIR, then quit."),
                                        QStringLiteral("DIR"));
    p.addOptions({help, model, mmproj, backend, port, start, profile, screenshot});

    CommandLine c;
    c.helpText = p.helpText();
    if (!p.parse(arguments)) {
        c.error = p.errorText();
        return c;
    }
    if (!p.positionalArguments().isEmpty()) {
        c.error = QStringLiteral("unexpected argument '%1'").arg(p.positionalArguments().first());
        return c;
    }
    c.help = p.isSet(help);
    c.model = p.value(model);
    c.mmproj = p.value(mmproj);
    c.backend = p.value(backend);
    if (!c.backend.isEmpty() && c.backend != QLatin1String("cpu") && c.backend != QLatin1String("cuda")) {
        c.error = QStringLiteral("--backend must be cpu or cuda, not '%1'").arg(c.backend);
        return c;
    }
    if (p.isSet(port)) {
        bool ok = false;
        c.port = p.value(port).toInt(&ok);
        if (!ok || c.port < 1 || c.port > 65535) {
            c.error = QStringLiteral("--port must be between 1 and 65535, not '%1'").arg(p.value(port));
            return c;
        }
    }
    c.start = p.isSet(start);
    c.profile = p.value(profile);
    c.screenshotDir = p.value(screenshot);
    return c;
}

}  // namespace niwa::gui
