// Running one program elevated (the UAC prompt) and waiting for it: the app itself never
// runs elevated; it starts niwa-lan.ps1 this way when LAN serving is turned on or off.
#pragma once

#include <string>

#include "wsl/windows/command_line.h"

namespace niwa::win {

struct ElevatedResult {
    enum class Outcome { Finished, Declined, Failed, TimedOut };
    Outcome outcome = Outcome::Failed;
    unsigned long exitCode = 0;  // when Finished
    std::string error;           // when Failed or TimedOut
};

// Whether this process already runs with an elevated token.
bool isElevated();

// ShellExecuteEx with the "runas" verb; `parameters` is the program's command line without the
// program (see command_line.h). Waits up to timeoutMs for it to end. No console window is shown.
ElevatedResult runElevated(const std::wstring& program, const std::wstring& parameters,
                           unsigned long timeoutMs);

// niwa-lan.ps1 elevated through Windows PowerShell (System32's, so a user's PATH cannot
// substitute another). Exit code 0: done; 1: failed (the status file says why).
ElevatedResult runLanHelper(const LanHelperCall& call, unsigned long timeoutMs);

}  // namespace niwa::win
