// registeredDistros: each subkey of Lxss is one distro; the Lxss key's DefaultDistribution
// names the default one by its GUID. A distro's Flags carry bit 8 for WSL 2 on releases that
// leave Version out.
#include "wsl/windows/wsl_registry.h"

#include <windows.h>

namespace niwa::win {

namespace {

constexpr const wchar_t* kLxssKey = L"Software\\Microsoft\\Windows\\CurrentVersion\\Lxss";
constexpr DWORD kFlagWsl2 = 0x8;

std::wstring readString(HKEY key, const wchar_t* value) {
    DWORD bytes = 0;
    if (RegGetValueW(key, nullptr, value, RRF_RT_REG_SZ, nullptr, nullptr, &bytes) != ERROR_SUCCESS)
        return {};
    std::wstring out(bytes / sizeof(wchar_t), L'\0');
    if (RegGetValueW(key, nullptr, value, RRF_RT_REG_SZ, nullptr, out.data(), &bytes) != ERROR_SUCCESS)
        return {};
    out.resize(wcsnlen(out.c_str(), out.size()));
    return out;
}

bool readDword(HKEY key, const wchar_t* value, DWORD* out) {
    DWORD bytes = sizeof(DWORD);
    return RegGetValueW(key, nullptr, value, RRF_RT_REG_DWORD, nullptr, out, &bytes) == ERROR_SUCCESS;
}

}  // namespace

std::vector<RegisteredDistro> registeredDistros() {
    std::vector<RegisteredDistro> out;
    HKEY lxss = nullptr;
    if (RegOpenKeyExW(HKEY_CURRENT_USER, kLxssKey, 0, KEY_READ, &lxss) != ERROR_SUCCESS) return out;
    const std::wstring defaultId = readString(lxss, L"DefaultDistribution");
    wchar_t name[256];
    for (DWORD i = 0;; ++i) {
        DWORD length = sizeof name / sizeof name[0];
        const LSTATUS status = RegEnumKeyExW(lxss, i, name, &length, nullptr, nullptr, nullptr, nullptr);
        if (status == ERROR_NO_MORE_ITEMS) break;
        if (status != ERROR_SUCCESS) continue;
        HKEY sub = nullptr;
        if (RegOpenKeyExW(lxss, name, 0, KEY_READ, &sub) != ERROR_SUCCESS) continue;
        RegisteredDistro d;
        d.id.assign(name, length);
        d.name = readString(sub, L"DistributionName");
        d.basePath = readString(sub, L"BasePath");
        DWORD version = 0, flags = 0;
        if (readDword(sub, L"Version", &version))
            d.version = version;
        else if (readDword(sub, L"Flags", &flags))
            d.version = (flags & kFlagWsl2) ? 2 : 1;
        d.isDefault = d.id == defaultId;
        RegCloseKey(sub);
        if (!d.name.empty()) out.push_back(d);
    }
    RegCloseKey(lxss);
    return out;
}

}  // namespace niwa::win
