// Helpers shared by the launcher tests: a free loopback port, and waiting for a launcher
// state (failing on a time-out or on reaching Failed instead).
#pragma once

#include <QHostAddress>
#include <QSignalSpy>
#include <QTcpServer>

#include "gui/core/engine_launcher.h"

namespace niwa::test {

constexpr int kLauncherWait = 20000;

inline quint16 free_port() {
    QTcpServer s;
    s.listen(QHostAddress::LocalHost, 0);
    return s.serverPort();
}

inline bool reach(gui::EngineLauncher& l, gui::EngineLauncher::State state) {
    QSignalSpy spy(&l, &gui::EngineLauncher::stateChanged);
    while (l.state() != state) {
        if (l.state() == gui::EngineLauncher::State::Failed) {
            qWarning("launcher failed: %s", qPrintable(l.reason()));
            return false;
        }
        if (!spy.wait(kLauncherWait)) return false;
    }
    return true;
}

}  // namespace niwa::test
