// KillOnCloseJob: CreateJobObjectW + JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE. The handle is never
// inherited, so only the app's own exit closes it.
#include "wsl/windows/job_object.h"

#include <windows.h>

namespace niwa::win {

std::string systemMessage(unsigned long code) {
    wchar_t* text = nullptr;
    const DWORD n = FormatMessageW(
        FORMAT_MESSAGE_ALLOCATE_BUFFER | FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, nullptr,
        code, 0, reinterpret_cast<wchar_t*>(&text), 0, nullptr);
    std::string out;
    if (n > 0) {
        const int bytes = WideCharToMultiByte(CP_UTF8, 0, text, int(n), nullptr, 0, nullptr, nullptr);
        out.resize(size_t(bytes));
        WideCharToMultiByte(CP_UTF8, 0, text, int(n), out.data(), bytes, nullptr, nullptr);
        LocalFree(text);
    }
    while (!out.empty() && (out.back() == '\n' || out.back() == '\r' || out.back() == ' ')) out.pop_back();
    return out + " (error " + std::to_string(code) + ")";
}

KillOnCloseJob::KillOnCloseJob() {
    HANDLE job = CreateJobObjectW(nullptr, nullptr);
    if (!job) {
        error_ = "CreateJobObject failed: " + systemMessage(GetLastError());
        return;
    }
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION limits = {};
    limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
    if (!SetInformationJobObject(job, JobObjectExtendedLimitInformation, &limits, sizeof limits)) {
        error_ = "SetInformationJobObject failed: " + systemMessage(GetLastError());
        CloseHandle(job);
        return;
    }
    job_ = job;
}

KillOnCloseJob::~KillOnCloseJob() {
    if (job_) CloseHandle(static_cast<HANDLE>(job_));
}

bool KillOnCloseJob::assign(unsigned long processId) {
    if (!job_) return false;
    HANDLE process = OpenProcess(PROCESS_SET_QUOTA | PROCESS_TERMINATE, FALSE, processId);
    if (!process) {
        error_ = "OpenProcess(" + std::to_string(processId) + ") failed: " + systemMessage(GetLastError());
        return false;
    }
    const BOOL ok = AssignProcessToJobObject(static_cast<HANDLE>(job_), process);
    if (!ok) error_ = "AssignProcessToJobObject failed: " + systemMessage(GetLastError());
    CloseHandle(process);
    return ok != FALSE;
}

}  // namespace niwa::win
