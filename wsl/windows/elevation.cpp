// runElevated: the shell asks for consent (UAC) and starts the program; ERROR_CANCELLED
// means the user said no.
#include "wsl/windows/elevation.h"

#include <windows.h>
// shellapi.h needs windows.h first.
#include <shellapi.h>

#include "wsl/windows/job_object.h"

namespace niwa::win {

bool isElevated() {
    HANDLE token = nullptr;
    if (!OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &token)) return false;
    TOKEN_ELEVATION elevation = {};
    DWORD size = 0;
    const BOOL ok = GetTokenInformation(token, TokenElevation, &elevation, sizeof elevation, &size);
    CloseHandle(token);
    return ok && elevation.TokenIsElevated != 0;
}

ElevatedResult runElevated(const std::wstring& program, const std::wstring& parameters,
                           unsigned long timeoutMs) {
    ElevatedResult result;
    SHELLEXECUTEINFOW info = {};
    info.cbSize = sizeof info;
    info.fMask = SEE_MASK_NOCLOSEPROCESS | SEE_MASK_NOASYNC | SEE_MASK_FLAG_NO_UI;
    info.lpVerb = L"runas";
    info.lpFile = program.c_str();
    info.lpParameters = parameters.c_str();
    info.nShow = SW_HIDE;
    if (!ShellExecuteExW(&info)) {
        const DWORD code = GetLastError();
        if (code == ERROR_CANCELLED) {
            result.outcome = ElevatedResult::Outcome::Declined;
            return result;
        }
        result.error = "could not start the elevated helper: " + systemMessage(code);
        return result;
    }
    if (!info.hProcess) {
        result.error = "the elevated helper started without a process handle";
        return result;
    }
    const DWORD waited = WaitForSingleObject(info.hProcess, timeoutMs);
    if (waited != WAIT_OBJECT_0) {
        result.outcome = ElevatedResult::Outcome::TimedOut;
        result.error = "the elevated helper did not finish in " + std::to_string(timeoutMs / 1000) + " s";
        CloseHandle(info.hProcess);
        return result;
    }
    DWORD exitCode = 0;
    GetExitCodeProcess(info.hProcess, &exitCode);
    CloseHandle(info.hProcess);
    result.outcome = ElevatedResult::Outcome::Finished;
    result.exitCode = exitCode;
    return result;
}

ElevatedResult runLanHelper(const LanHelperCall& call, unsigned long timeoutMs) {
    wchar_t system[MAX_PATH];
    const UINT n = GetSystemDirectoryW(system, MAX_PATH);
    if (n == 0 || n >= MAX_PATH) {
        ElevatedResult result;
        result.error = "could not find the Windows system folder: " + systemMessage(GetLastError());
        return result;
    }
    const std::wstring powershell = std::wstring(system) + L"\\WindowsPowerShell\\v1.0\\powershell.exe";
    return runElevated(powershell, L"-WindowStyle Hidden " + lanHelperParameters(call), timeoutMs);
}

}  // namespace niwa::win
