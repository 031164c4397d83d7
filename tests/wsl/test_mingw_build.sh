#!/usr/bin/env bash
# Cross-compiles wsl/windows (Qt-free Windows-API code) and tests/wsl/win_check.cpp with
# mingw-w64 at -Wall -Wextra -Werror, and checks the result is a Windows x86-64 executable.
# Fails when the cross compiler is missing (install-deps.sh installs g++-mingw-w64-x86-64).
#   test_mingw_build.sh SOURCE_DIR OUT_DIR
set -euo pipefail
src="$1" out="$2"
cxx=""
for c in x86_64-w64-mingw32-g++-posix x86_64-w64-mingw32-g++; do
  command -v "$c" >/dev/null && { cxx="$c"; break; }
done
[ -n "$cxx" ] || { echo "test_mingw_build: x86_64-w64-mingw32-g++ not found (apt-get install g++-mingw-w64-x86-64)" >&2; exit 1; }
mkdir -p "$out"
flags=(-std=c++20 -O1 -Wall -Wextra -Werror -municode -DUNICODE -D_UNICODE -I"$src")
"$cxx" "${flags[@]}" -o "$out/niwa-win-check.exe" \
  "$src"/wsl/windows/*.cpp "$src/tests/wsl/win_check.cpp" \
  -static -ladvapi32 -lshell32
# PE: "MZ" at 0, "PE\0\0" at the offset stored at 0x3c, machine 0x8664 (x86-64) after it.
pe="$(od -An -tu4 -j60 -N4 "$out/niwa-win-check.exe" | tr -d ' ')"
magic="$(od -An -c -N2 "$out/niwa-win-check.exe" | tr -d ' ')"
machine="$(od -An -tx2 -j$((pe + 4)) -N2 "$out/niwa-win-check.exe" | tr -d ' ')"
[ "$magic" = MZ ] || { echo "not a PE file (starts with '$magic')" >&2; exit 1; }
[ "$machine" = 8664 ] || { echo "PE machine is $machine, not 8664 (x86-64)" >&2; exit 1; }
echo "built $out/niwa-win-check.exe with $cxx ($(stat -c %s "$out/niwa-win-check.exe") bytes, PE x86-64)"
