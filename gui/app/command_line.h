// `niwa [--model FILE] [--mmproj FILE] [--backend cpu|cuda] [--port P] [--start]` (DESIGN.md)
// plus the options tests and the screenshot script use.
#pragma once

#include <QString>
#include <QStringList>

namespace niwa::gui {

struct CommandLine {
    QString model;
    QString mmproj;
    QString backend;
    int port = 0;  // 0: not given
    bool start = false;
    // Settings (settings.ini) and chats (chats.sqlite) in this folder instead of the user's.
    QString profile;
    // Takes screenshots of every page into this folder, then quits.
    QString screenshotDir;
    QString error;  // not empty: a usage error to print (exit status 2)
    bool help = false;
    QString helpText;
};

// Parses arguments (arguments[0] is the program).
CommandLine parseCommandLine(const QStringList& arguments);

}  // namespace niwa::gui
