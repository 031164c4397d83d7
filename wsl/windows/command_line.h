// Building Windows command lines: quoting one argument so CommandLineToArgvW (and the C
// runtime) read it back unchanged, and the command line of the elevated LAN helper. Plain
// C++ with no Windows headers, so it is unit-tested on Linux too.
#pragma once

#include <string>
#include <vector>

namespace niwa::win {

// `arg` quoted for a Windows command line: as it is when it needs no quotes, otherwise in
// double quotes with backslashes before a quote (or the closing quote) doubled.
std::wstring quoteArgument(const std::wstring& arg);
// The arguments quoted and joined by spaces.
std::wstring joinArguments(const std::vector<std::wstring>& args);

struct LanHelperCall {
    std::wstring script;  // full path of niwa-lan.ps1
    std::wstring action;  // enable, disable, status, reapply
    int port = 8080;
    std::wstring distro;      // empty: the default distro
    std::wstring statusFile;  // where the helper writes its JSON status
    // nat or mirrored, and the distro's address (NAT), as an unelevated `status` reported
    // them: the elevated helper may run as another user whose WSL does not know the distro.
    // Empty: the helper asks the distro itself.
    std::wstring mode;
    std::wstring address;
};

// The parameters for powershell.exe that run the helper (without "powershell.exe" itself).
std::wstring lanHelperParameters(const LanHelperCall& call);

}  // namespace niwa::win
