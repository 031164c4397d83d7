// Windows command-line quoting (wsl/windows/command_line): each argument must come back
// unchanged through CommandLineToArgvW's rules, which parseWindows() below plays.
#include <QTest>

#include "wsl/windows/command_line.h"

using namespace niwa::win;

namespace {

// Microsoft's documented parsing: 2n backslashes + quote -> n backslashes and a quote toggle;
// 2n+1 backslashes + quote -> n backslashes and a literal quote; other backslashes literal.
std::vector<std::wstring> parseWindows(const std::wstring& line) {
    std::vector<std::wstring> out;
    std::wstring cur;
    bool inQuotes = false, any = false;
    for (size_t i = 0; i < line.size();) {
        const wchar_t c = line[i];
        if (c == L'\\') {
            size_t n = 0;
            while (i < line.size() && line[i] == L'\\') ++n, ++i;
            if (i < line.size() && line[i] == L'"') {
                cur.append(n / 2, L'\\');
                if (n % 2) {
                    cur.push_back(L'"');
                    ++i;
                }
            } else {
                cur.append(n, L'\\');
            }
            any = true;
        } else if (c == L'"') {
            inQuotes = !inQuotes;
            any = true;
            ++i;
        } else if ((c == L' ' || c == L'\t') && !inQuotes) {
            if (any) out.push_back(cur);
            cur.clear();
            any = false;
            ++i;
        } else {
            cur.push_back(c);
            any = true;
            ++i;
        }
    }
    if (any) out.push_back(cur);
    return out;
}

}  // namespace

class TestCommandLine : public QObject {
    Q_OBJECT

private slots:
    void quotesOnlyWhenNeeded() {
        QCOMPARE(quoteArgument(L"enable"), std::wstring(L"enable"));
        QCOMPARE(quoteArgument(L"C:\\x\\y"), std::wstring(L"C:\\x\\y"));
        QCOMPARE(quoteArgument(L""), std::wstring(L"\"\""));
        QCOMPARE(quoteArgument(L"a b"), std::wstring(L"\"a b\""));
        QCOMPARE(quoteArgument(L"C:\\Program Files\\Niwa\\"),
                 std::wstring(L"\"C:\\Program Files\\Niwa\\\\\""));
        QCOMPARE(quoteArgument(L"say \"hi\""), std::wstring(L"\"say \\\"hi\\\"\""));
    }

    void roundTrips() {
        const std::vector<std::wstring> args = {L"plain",
                                                L"two words",
                                                L"",
                                                L"trailing\\",
                                                L"end space\\",
                                                L"a\\\\\"b",
                                                L"\"quoted\"",
                                                L"tab\there",
                                                L"C:\\Users\\山田\\Niwa",
                                                L"\\\\server\\share\\x y"};
        QVERIFY(parseWindows(joinArguments(args)) == args);
    }

    void lanHelperParameters() {
        LanHelperCall call;
        call.script = L"C:\\Users\\Taro Yamada\\AppData\\Local\\Programs\\Niwa\\wsl\\windows\\niwa-lan.ps1";
        call.action = L"enable";
        call.port = 8000;
        call.distro = L"Ubuntu-24.04";
        call.statusFile = L"C:\\Users\\Taro Yamada\\AppData\\Local\\Niwa\\lan-status.json";
        const std::vector<std::wstring> expected = {
            L"-NoProfile", L"-NonInteractive", L"-ExecutionPolicy", L"Bypass",      L"-File",
            call.script,   L"-Action",         L"enable",           L"-Port",       L"8000",
            L"-Distro",    L"Ubuntu-24.04",    L"-StatusFile",      call.statusFile};
        QVERIFY(parseWindows(niwa::win::lanHelperParameters(call)) == expected);
        call.distro.clear();
        call.statusFile.clear();
        QVERIFY(niwa::win::lanHelperParameters(call).find(L"-Distro") == std::wstring::npos);
        QVERIFY(niwa::win::lanHelperParameters(call).find(L"-Mode") == std::wstring::npos);
        call.action = L"reapply";
        call.mode = L"nat";
        call.address = L"172.22.1.5";
        const std::vector<std::wstring> withMode = {L"-NoProfile", L"-NonInteractive", L"-ExecutionPolicy",
                                                    L"Bypass",     L"-File",           call.script,
                                                    L"-Action",    L"reapply",         L"-Port",
                                                    L"8000",       L"-Mode",           L"nat",
                                                    L"-Address",   L"172.22.1.5"};
        QVERIFY(parseWindows(niwa::win::lanHelperParameters(call)) == withMode);
    }
};

QTEST_GUILESS_MAIN(TestCommandLine)
#include "test_command_line.moc"
