// The WSL distros registered for this Windows user, read from the registry
// (HKCU\Software\Microsoft\Windows\CurrentVersion\Lxss) without starting wsl.exe, which can
// take seconds when the WSL VM is not running.
#pragma once

#include <string>
#include <vector>

namespace niwa::win {

struct RegisteredDistro {
    std::wstring id;            // the subkey, a GUID in braces
    std::wstring name;          // DistributionName, as wsl.exe -d takes it
    std::wstring basePath;      // where its disk (ext4.vhdx) lives
    unsigned long version = 0;  // 1 or 2
    bool isDefault = false;
};

// Empty when WSL has no distro (or is not installed). Never throws.
std::vector<RegisteredDistro> registeredDistros();

}  // namespace niwa::win
