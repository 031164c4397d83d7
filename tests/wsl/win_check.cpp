// niwa-win-check.exe: links every Windows-API file of wsl/windows and exercises them on a real
// Windows (CI only cross-compiles it): lists the registered distros, puts itself in a
// kill-on-close job, and prints the elevated helper's command line; with --lan-status SCRIPT
// it runs the helper's status action elevated.
#include <windows.h>

#include <cstdio>
#include <string>

#include "wsl/windows/command_line.h"
#include "wsl/windows/elevation.h"
#include "wsl/windows/job_object.h"
#include "wsl/windows/wsl_registry.h"

int wmain(int argc, wchar_t** argv) {
    using namespace niwa::win;
    for (const RegisteredDistro& d : registeredDistros())
        std::wprintf(L"%ls%ls  WSL %lu  %ls\n", d.isDefault ? L"* " : L"  ", d.name.c_str(), d.version,
                     d.basePath.c_str());
    KillOnCloseJob job;
    if (!job.valid() || !job.assign(GetCurrentProcessId()))
        std::printf("job object: %s\n", job.error().c_str());
    std::printf("elevated: %s\n", isElevated() ? "yes" : "no");
    LanHelperCall call;
    call.script = L"C:\\Program Files\\Niwa\\wsl\\windows\\niwa-lan.ps1";
    call.action = L"status";
    std::wprintf(L"powershell.exe %ls\n", lanHelperParameters(call).c_str());
    // --lan-status SCRIPT: runs the helper's status action (asks for elevation).
    if (argc == 3 && std::wstring(argv[1]) == L"--lan-status") {
        call.script = argv[2];
        const ElevatedResult r = runLanHelper(call, 120000);
        std::printf("helper: outcome %d, exit code %lu %s\n", int(r.outcome), r.exitCode, r.error.c_str());
    }
    return 0;
}
