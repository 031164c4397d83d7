// A Windows job object that kills its processes when the app goes (closes the last handle,
// also when it crashes), so a wsl.exe started by the app never outlives it. Qt-free; the
// app assigns each wsl.exe it starts, by process id.
#pragma once

#include <string>

namespace niwa::win {

class KillOnCloseJob {
public:
    KillOnCloseJob();
    ~KillOnCloseJob();
    KillOnCloseJob(const KillOnCloseJob&) = delete;
    KillOnCloseJob& operator=(const KillOnCloseJob&) = delete;

    // False when the job could not be made (error() says why).
    bool valid() const { return job_ != nullptr; }
    // Puts the process in the job; its children started afterwards follow it.
    bool assign(unsigned long processId);
    const std::string& error() const { return error_; }

private:
    void* job_ = nullptr;  // HANDLE
    std::string error_;
};

// The message of a Windows error code (GetLastError()), in UTF-8.
std::string systemMessage(unsigned long code);

}  // namespace niwa::win
