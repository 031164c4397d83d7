#!/usr/bin/python3
"""Static checks of wsl/windows/niwa-lan.ps1 where no PowerShell runs (Debian has none).

With `pwsh` on PATH the file is also parsed by PowerShell's own parser. Without it:
  - ASCII only (Windows PowerShell 5.1 reads a file without a BOM in the ANSI code page)
  - brackets balance outside strings and comments
  - a line-continuation backtick is the last character of its line
  - every Verb-Noun command it calls is a function it defines or a cmdlet it is known to use
  - the actions enable, disable, status, reapply are the -Action choices
Usage: check_ps1.py FILE
"""

import re
import shutil
import subprocess
import sys

KNOWN_CMDLETS = {
    "Set-StrictMode", "Join-Path", "ForEach-Object", "Where-Object", "Select-Object", "Get-Command",
    "Get-NetFirewallRule", "New-NetFirewallRule", "Remove-NetFirewallRule", "Get-NetFirewallHyperVRule",
    "New-NetFirewallHyperVRule", "Remove-NetFirewallHyperVRule", "Get-Service", "Start-Service", "Out-Null",
    "Get-NetIPAddress", "Get-NetConnectionProfile", "Split-Path", "Test-Path", "New-Item", "ConvertTo-Json",
    "Write-Output", "New-Object", "Get-Date",
}


def strip_strings_and_comments(text):
    """The code with string contents and comments blanked (newlines kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("<#", i):
            j = text.index("#>", i) + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "#":
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c == "'":
            j = i + 1
            while True:
                j = text.index("'", j)
                if text.startswith("''", j):
                    j += 2
                    continue
                break
            out.append("'" + re.sub(r"[^\n]", " ", text[i + 1:j]) + "'")
            i = j + 1
        elif c == '"':
            j, depth = i + 1, 0
            while j < n:
                if text[j] == "`":
                    j += 2
                    continue
                if text.startswith("$(", j):
                    depth += 1
                    j += 2
                    continue
                if text[j] == ")" and depth:
                    depth -= 1
                elif text[j] == '"' and not depth:
                    break
                j += 1
            if j >= n:
                raise ValueError("unterminated string at offset %d" % i)
            out.append('"' + re.sub(r"[^\n]", " ", text[i + 1:j]) + '"')
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def check(path):
    problems = []
    raw = open(path, "rb").read()
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError as e:
        return ["not ASCII at byte %d (Windows PowerShell 5.1 would misread it)" % e.start]
    try:
        code = strip_strings_and_comments(text)
    except ValueError as e:
        return [str(e)]
    stack, pairs = [], {")": "(", "}": "{", "]": "["}
    for lineno, line in enumerate(code.split("\n"), 1):
        for c in line:
            if c in "({[":
                stack.append((c, lineno))
            elif c in pairs:
                if not stack or stack[-1][0] != pairs[c]:
                    problems.append("line %d: unbalanced '%s'" % (lineno, c))
                else:
                    stack.pop()
        if re.search(r"`[ \t]+\r?$", line):
            problems.append("line %d: whitespace after a line-continuation backtick" % lineno)
    problems += ["line %d: '%s' never closed" % (ln, c) for c, ln in stack]
    defined = set(re.findall(r"^\s*function\s+([A-Za-z]+-[A-Za-z]+)", code, re.M))
    for name in sorted(set(re.findall(r"(?<![\w$.-])([A-Z][a-z]+-[A-Z][A-Za-z]+)(?![\w-])", code))):
        if name not in defined and name not in KNOWN_CMDLETS:
            problems.append("calls '%s', which it does not define and is not a known cmdlet" % name)
    m = re.search(r"ValidateSet\(([^)]*)\)\]\s*\[string\]\$Action", text)
    actions = set(re.findall(r"'(\w+)'", m.group(1))) if m else set()
    if actions != {"enable", "disable", "status", "reapply"}:
        problems.append("-Action choices are %s" % sorted(actions))
    return problems


def main():
    path = sys.argv[1]
    problems = check(path)
    pwsh = shutil.which("pwsh")
    if pwsh:
        script = ("$e = $null; [void][System.Management.Automation.Language.Parser]::ParseFile('%s', [ref]$null, [ref]$e);"
                  " $e | ForEach-Object { $_.ToString() }; exit $e.Count" % path.replace("'", "''"))
        r = subprocess.run([pwsh, "-NoProfile", "-Command", script], capture_output=True, text=True)
        if r.returncode != 0:
            problems.append("pwsh parser: " + r.stdout + r.stderr)
    for p in problems:
        print("%s: %s" % (path, p), file=sys.stderr)
    if problems:
        return 1
    print("%s: ok (%s)" % (path, "parsed by pwsh too" if pwsh else "static checks; no pwsh here"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
