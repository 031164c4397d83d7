#!/usr/bin/env bash
# Builds a package from this build with CPack and checks it.
#   test_packages.sh deb BUILD_DIR [APP]   cpack -G DEB; dpkg-deb -x into a scratch root; the
#                                          engine (runs --help), APP (when given), the wsl/
#                                          scripts, the .desktop entry and icon are there
#   test_packages.sh nsis BUILD_DIR        cpack -G NSIS: makensis compiles the generated
#                                          script over the staged tree into an .exe
# A missing tool (dpkg-deb, dpkg-shlibdeps, makensis) fails: install-deps.sh installs them.
set -euo pipefail
kind="$1" build="$2" app="${3:-}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
need() { command -v "$1" >/dev/null || { echo "test_packages: $1 not found ($2; run install-deps.sh)" >&2; exit 1; }; }
fail() { echo "FAIL: $*" >&2; exit 1; }

if [ "$kind" = deb ]; then
  need dpkg-deb "package dpkg"
  need dpkg-shlibdeps "package dpkg-dev"
  cpack -G DEB --config "$build/CPackConfig.cmake" -B "$tmp/out" >"$tmp/cpack.log" 2>&1 || { cat "$tmp/cpack.log"; fail "cpack -G DEB"; }
  deb="$(ls "$tmp"/out/*.deb)"
  echo "built $(basename "$deb") ($(stat -c %s "$deb") bytes)"
  dpkg-deb --info "$deb" | sed -n '/Package:/,$p'
  dpkg-deb -x "$deb" "$tmp/root"
  root="$tmp/root"
  for f in usr/bin/niwa-engine usr/share/niwa/wsl/linux/install.sh usr/share/niwa/wsl/linux/check-gpu.sh \
           usr/share/niwa/wsl/linux/niwa-enginectl usr/share/niwa/wsl/windows/niwa-lan.ps1 usr/share/niwa/install-deps.sh \
           usr/share/applications/niwa.desktop usr/share/icons/hicolor/scalable/apps/niwa.svg \
           usr/share/doc/niwa/USER_GUIDE.md usr/share/doc/niwa/USER_GUIDE.ja.md; do
    [ -e "$root/$f" ] || fail "$f is not in the package"
  done
  for f in usr/bin/niwa-engine usr/share/niwa/wsl/linux/install.sh usr/share/niwa/wsl/linux/niwa-enginectl; do
    [ -x "$root/$f" ] || fail "$f is not executable"
  done
  "$root/usr/bin/niwa-engine" --help >/dev/null || fail "the packaged niwa-engine does not run --help"
  "$root/usr/bin/niwa-engine" --version
  file_info="$(od -An -c -N4 "$root/usr/bin/niwa-engine" | tr -d ' ')"
  [ "$file_info" = "177ELF" ] || fail "usr/bin/niwa-engine is not an ELF binary"
  if [ -n "$app" ]; then
    [ -x "$root/usr/bin/niwa" ] || fail "usr/bin/niwa (the app) is not in the package"
    QT_QPA_PLATFORM=offscreen "$root/usr/bin/niwa" --help >/dev/null || fail "the packaged app does not run --help"
  fi
  grep -q '^Exec=niwa' "$root/usr/share/applications/niwa.desktop" || fail "niwa.desktop does not run niwa"
  grep -q '^Icon=niwa$' "$root/usr/share/applications/niwa.desktop" || fail "niwa.desktop does not name the niwa icon"
  if command -v desktop-file-validate >/dev/null; then desktop-file-validate "$root/usr/share/applications/niwa.desktop"; fi
  depends="$(dpkg-deb --field "$deb" Depends)"
  case "$depends" in *libc6*) ;; *) fail "Depends has no libc6 (shlibdeps did not run): '$depends'" ;; esac
  # The installed scripts still find each other: install.sh finds the packaged engine.
  installed="$(HOME="$tmp/home" bash "$root/usr/share/niwa/wsl/linux/install.sh" --skip-deps \
    --prefix "$tmp/prefix" --models "$tmp/models" --log "$tmp/install.log")" || fail "the packaged install.sh failed"
  grep -qx "NIWA_ENGINE=$tmp/prefix/bin/niwa-engine" <<<"$installed" ||
    fail "the packaged install.sh did not install the packaged engine: $installed"
  echo "DEB contents ok"
elif [ "$kind" = nsis ]; then
  need makensis "package nsis"
  # zlib: the script is what is tested; lzma on the engine only costs time here.
  cpack -G NSIS --config "$build/CPackConfig.cmake" -B "$tmp/out" -D CPACK_NSIS_COMPRESSOR=zlib \
    >"$tmp/cpack.log" 2>&1 || { cat "$tmp/cpack.log"; cat "$tmp"/out/_CPack_Packages/*/NSIS/NSISOutput.log 2>/dev/null; fail "cpack -G NSIS"; }
  exe="$(ls "$tmp"/out/*.exe)"
  [ "$(od -An -c -N2 "$exe" | tr -d ' ')" = MZ ] || fail "$exe is not a Windows executable"
  script="$(ls "$tmp"/out/_CPack_Packages/*/NSIS/project.nsi)"
  grep -q '^RequestExecutionLevel user' "$script" || fail "the installer is not per-user"
  grep -F 'niwa-engine"' "$script" | grep -q '^ *Delete' ||
    fail "the uninstaller does not delete the files it installed"
  grep -q 'wsl\\linux\\install.sh' "$script" || fail "the wsl/ scripts are not bundled"
  echo "built $(basename "$exe") ($(stat -c %s "$exe") bytes) from $script"
else
  echo "usage: test_packages.sh deb|nsis BUILD_DIR [APP]" >&2
  exit 2
fi
