// Quoting per "Parsing C++ command-line arguments" (Microsoft's C runtime rules, which
// CommandLineToArgvW shares): backslashes are literal unless a double quote follows them.
#include "wsl/windows/command_line.h"

namespace niwa::win {

std::wstring quoteArgument(const std::wstring& arg) {
    if (!arg.empty() && arg.find_first_of(L" \t\n\v\"") == std::wstring::npos) return arg;
    std::wstring out = L"\"";
    size_t backslashes = 0;
    for (const wchar_t c : arg) {
        if (c == L'\\') {
            ++backslashes;
            continue;
        }
        // Backslashes before a quote are doubled, and the quote itself escaped.
        out.append(c == L'"' ? backslashes * 2 + 1 : backslashes, L'\\');
        backslashes = 0;
        out.push_back(c);
    }
    out.append(backslashes * 2, L'\\');  // before the closing quote
    out.push_back(L'"');
    return out;
}

std::wstring joinArguments(const std::vector<std::wstring>& args) {
    std::wstring out;
    for (const std::wstring& a : args) {
        if (!out.empty()) out.push_back(L' ');
        out += quoteArgument(a);
    }
    return out;
}

std::wstring lanHelperParameters(const LanHelperCall& call) {
    std::vector<std::wstring> args = {
        L"-NoProfile", L"-NonInteractive", L"-ExecutionPolicy", L"Bypass", L"-File",
        call.script,   L"-Action",         call.action,         L"-Port",  std::to_wstring(call.port)};
    if (!call.distro.empty()) args.insert(args.end(), {L"-Distro", call.distro});
    if (!call.statusFile.empty()) args.insert(args.end(), {L"-StatusFile", call.statusFile});
    if (!call.mode.empty()) args.insert(args.end(), {L"-Mode", call.mode});
    if (!call.address.empty()) args.insert(args.end(), {L"-Address", call.address});
    return joinArguments(args);
}

}  // namespace niwa::win
