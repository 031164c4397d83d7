#!/usr/bin/python3
# fake_wsl: a stand-in for wsl.exe that runs the command on this machine. Same argument
# grammar as the real one: [-d|--distribution NAME] [-u|--user USER] [--cd DIR]
# (--exec|-e CMD ARGS... | -- CMD ARGS... | CMD LINE for the shell), -l -v / --list --verbose,
# --status, --version, --update, --install [-d NAME] [--no-distribution] [--no-launch] and
# --set-version NAME 2, with the real one's texts. -u is accepted; the command runs as us.
# Like wsl.exe, its own messages and the distro list are UTF-16LE unless WSL_UTF8=1;
# FAKE_WSL_OLD=1 plays an old wsl.exe that ignores WSL_UTF8 and also turns the command's
# output into UTF-16LE; FAKE_WSL_INBOX=1 plays the inbox wsl.exe of an older Windows, which
# knows neither --version nor --status (its --update fetches the Store WSL). Distros: FAKE_WSL_DISTROS (comma-separated, first is
# the default, NAME:1 for a WSL 1 distro, empty for none), or the file FAKE_WSL_STATE when
# set (one a line), which --install and --set-version change. FAKE_WSL_LOG, when set, gets
# each call's arguments, one call a line.
import os
import subprocess
import sys

OLD = os.environ.get("FAKE_WSL_OLD") == "1"
INBOX = os.environ.get("FAKE_WSL_INBOX") == "1"
UTF16 = OLD or os.environ.get("WSL_UTF8") != "1"
STATE = os.environ.get("FAKE_WSL_STATE")
# Real wsl.exe exits with -1 (0xFFFFFFFF) on most errors; a Linux process can only say 255.
E_FAIL = 255


def load_distros():
    if STATE:
        try:
            with open(STATE) as f:
                text = f.read()
        except OSError:
            text = ""
        entries = [e.strip() for e in text.splitlines()]
    else:
        entries = os.environ.get("FAKE_WSL_DISTROS", "Ubuntu-24.04,Debian").split(",")
    out = []
    for e in entries:
        if e:
            name, _, version = e.partition(":")
            out.append((name, int(version or "2")))
    return out


def save_distros(distros):
    if not STATE:
        return
    with open(STATE, "w") as f:
        f.write("".join("%s:%d\n" % d for d in distros))


DISTROS_V = load_distros()
DISTROS = [name for name, _ in DISTROS_V]
USAGE = "Copyright (c) Microsoft Corporation. All rights reserved.\n\nUsage: wsl.exe [Argument] [Options...] [CommandLine]\n"


def say(text, stream=sys.stdout):
    data = text.replace("\n", "\r\n").encode("utf-16-le" if UTF16 else "utf-8")
    stream.buffer.write(data)
    stream.buffer.flush()


def list_distros():
    if not DISTROS_V:
        say("Windows Subsystem for Linux has no installed distributions.\n"
            "You can resolve this by installing a distribution with the instructions below:\n\n"
            "Use 'wsl.exe --list --online' to list available distributions\n"
            "and 'wsl.exe --install <Distro>' to install.\n")
        return E_FAIL
    say("  NAME            STATE           VERSION\n")
    for n, (name, version) in enumerate(DISTROS_V):
        say("%s %-15s %-15s %d\n" % ("*" if n == 0 else " ", name, "Running" if n == 0 else "Stopped", version))
    return 0


def manage(a, rest):
    """The management options (no command runs); None when a is not one."""
    if INBOX and a in ("--version", "--status"):
        say("Invalid command line option: %s\n%s" % (a, USAGE))
        return E_FAIL
    if a == "--version":
        say("WSL version: 2.3.26.0\nKernel version: 5.15.167.4-1\nWSLg version: 1.0.65\n"
            "MSRDC version: 1.2.5620\nDirect3D version: 1.611.1-81528511\n"
            "DXCore version: 10.0.26100.1-240331-1435.ge-release\nWindows version: 10.0.22631.4460\n")
        return 0
    if a == "--status":
        if DISTROS_V:
            say("Default Distribution: %s\nDefault Version: 2\n" % DISTROS[0])
        return 0
    if a == "--update":
        say("Checking for updates.\nThe most recent version of Windows Subsystem for Linux is already installed.\n")
        return 0
    if a == "--install":
        if "-d" in rest or "--distribution" in rest:
            name = rest[rest.index("-d" if "-d" in rest else "--distribution") + 1]
            if name not in DISTROS:
                save_distros(DISTROS_V + [(name, 2)])
            say("Installing: %s\n%s has been installed.\n" % (name, name))
        else:
            say("The requested operation is successful. Changes will not be effective until the system is rebooted.\n")
        return 0
    if a == "--set-version":
        name, version = rest[0], int(rest[1])
        if name not in DISTROS:
            say("There is no distribution with the supplied name.\nError code: Wsl/Service/WSL_E_DISTRO_NOT_FOUND\n")
            return E_FAIL
        save_distros([(n, version if n == name else v) for n, v in DISTROS_V])
        say("Conversion in progress, this may take a few minutes.\nThe operation completed successfully.\n")
        return 0
    return None


def main(argv):
    log = os.environ.get("FAKE_WSL_LOG")
    if log:
        with open(log, "a") as f:
            f.write(" ".join(argv) + "\n")
    distro = DISTROS[0] if DISTROS else None
    cwd = None
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("-l", "--list"):
            return list_distros()
        managed = manage(a, argv[i + 1:])
        if managed is not None:
            return managed
        if a in ("-v", "--verbose"):
            i += 1
        elif a in ("-u", "--user"):
            i += 2
        elif a in ("-d", "--distribution"):
            distro = argv[i + 1]
            i += 2
        elif a == "--cd":
            cwd = argv[i + 1]
            i += 2
        elif a in ("-e", "--exec", "--"):
            command = argv[i + 1:]
            break
        else:
            command = ["sh", "-c", " ".join(argv[i:])]  # no flag: a command line for the shell
            break
    else:
        command = [os.environ.get("SHELL", "sh")]
    if distro is None:
        list_distros()
        return E_FAIL
    if distro not in DISTROS:
        say("There is no distribution with the supplied name.\nError code: Wsl/Service/WSL_E_DISTRO_NOT_FOUND\n")
        return 1
    if cwd:
        try:
            os.chdir(os.path.expanduser(cwd))
        except OSError:
            say("chdir(%s) failed 2\n" % cwd)
            return 1
    if not OLD:
        # The real wsl.exe passes the program's bytes through; so does exec.
        sys.stdout.flush()
        try:
            os.execvp(command[0], command)
        except OSError:
            say("execvpe(%s) failed: No such file or directory\n" % command[0])
            return 1
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    for line in iter(child.stdout.readline, b""):
        sys.stdout.buffer.write(line.decode("utf-8", "replace").encode("utf-16-le"))
        sys.stdout.buffer.flush()
    rc = child.wait()
    return rc if rc >= 0 else 128 - rc  # killed by a signal: as a shell reports it


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
