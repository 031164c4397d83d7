#!/usr/bin/python3
# fake_wsl: a stand-in for wsl.exe that runs the command on this machine. Same argument
# grammar as the real one: [-d|--distribution NAME] [--cd DIR] (--exec|-e CMD ARGS... |
# -- CMD ARGS... | CMD LINE for the shell), and -l -v / --list --verbose.
# Like wsl.exe, its own messages and the distro list are UTF-16LE unless WSL_UTF8=1;
# FAKE_WSL_OLD=1 plays an old wsl.exe that ignores WSL_UTF8 and also turns the command's
# output into UTF-16LE. Distros: FAKE_WSL_DISTROS (comma-separated, first is the default).
import os
import subprocess
import sys

OLD = os.environ.get("FAKE_WSL_OLD") == "1"
UTF16 = OLD or os.environ.get("WSL_UTF8") != "1"
DISTROS = os.environ.get("FAKE_WSL_DISTROS", "Ubuntu-24.04,Debian").split(",")


def say(text, stream=sys.stdout):
    data = text.replace("\n", "\r\n").encode("utf-16-le" if UTF16 else "utf-8")
    stream.buffer.write(data)
    stream.buffer.flush()


def main(argv):
    distro = DISTROS[0]
    cwd = None
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("-l", "--list"):
            say("  NAME            STATE           VERSION\n")
            for n, name in enumerate(DISTROS):
                say("%s %-15s %-15s 2\n" % ("*" if n == 0 else " ", name, "Running" if n == 0 else "Stopped"))
            return 0
        if a in ("-v", "--verbose"):
            i += 1
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
