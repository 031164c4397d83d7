#!/usr/bin/env bash
# Installs niwa-engine inside a WSL2 distro (or on a Linux PC) for the Niwa app.
#   install.sh [--engine FILE] [--prefix DIR] [--models DIR] [--log FILE] [--skip-deps | --deps-only]
#     --engine FILE  the niwa-engine build to install (default: the one packaged with these
#                    scripts: ../../engine/niwa-engine (Windows) or ../../../../bin/niwa-engine (DEB))
#     --prefix DIR   where it goes: DIR/bin/niwa-engine and DIR/bin/niwa-enginectl (default ~/.local)
#     --models DIR   the model folder to create (default ~/.local/share/niwa/models, where
#                    `niwa-engine pull` downloads to)
#     --log FILE     appended to (default ~/.local/state/niwa/install.log)
#     --skip-deps    do not install the run-time libraries (the app runs --deps-only as root first)
#     --deps-only    only install the run-time libraries the engine lacks (needs root or sudo)
# Safe to re-run: each step checks first and does nothing when already done. The last lines
# are NIWA_ENGINE=PATH and NIWA_MODELS=DIR for the app.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
engine="" prefix="${HOME}/.local" models="${XDG_DATA_HOME:-$HOME/.local/share}/niwa/models"
log="${XDG_STATE_HOME:-$HOME/.local/state}/niwa/install.log"
deps=1 only_deps=0
while [ $# -gt 0 ]; do
  case "$1" in
    --engine) engine="$2"; shift ;;
    --prefix) prefix="$2"; shift ;;
    --models) models="$2"; shift ;;
    --log) log="$2"; shift ;;
    --skip-deps) deps=0 ;;
    --deps-only) only_deps=1 ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "install.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
  esac
  shift
done

say() { echo "install.sh: $*"; }
die() { echo "install.sh: error: $*" >&2; exit 1; }

find_engine() {
  [ -n "$engine" ] && { [ -f "$engine" ] || die "--engine '$engine' does not exist"; return; }
  for candidate in "$here/../../engine/niwa-engine" "$here/../../../../bin/niwa-engine"; do
    [ -f "$candidate" ] && { engine="$candidate"; return; }
  done
  die "no niwa-engine packaged with this script (looked in $here/../../engine and $here/../../../../bin); pass --engine FILE"
}

missing_libraries() {
  # ldd answers "not a dynamic executable" (exit 1) for a static binary: nothing is missing.
  { ldd "$engine" 2>/dev/null || true; } | awk '/not found/ { print $1 }'
}

install_dependencies() {
  local missing
  missing="$(missing_libraries)"
  if [ -z "$missing" ]; then
    say "run-time libraries: all present"
    return
  fi
  say "run-time libraries missing: $(echo "$missing" | tr '\n' ' ')"
  local deps_script="$here/../../install-deps.sh"
  [ -f "$deps_script" ] || die "install-deps.sh is not bundled next to wsl/ ($deps_script)"
  if [ "$(id -u)" -ne 0 ] && ! sudo -n true 2>/dev/null; then
    die "installing them needs root; run: sudo bash '$deps_script' --runtime   (or from Windows: wsl -u root bash '$0' --deps-only)"
  fi
  bash "$deps_script" --runtime
  missing="$(missing_libraries)"
  [ -z "$missing" ] || die "still missing after installing packages: $(echo "$missing" | tr '\n' ' ')"
}

check_gpu() {
  # Not fatal: the engine also runs on the CPU, and the app's GPU step says what to do.
  if gpus="$(bash "$here/check-gpu.sh" 2>&1)"; then
    say "GPUs: $(echo "$gpus" | tr '\n' ';')"
  else
    say "warning: no GPU visible yet (the engine will only run on the CPU):"
    echo "$gpus"
  fi
}

# Copies to a temporary name and renames, so a running engine keeps its (old) file.
install_file() {
  local from="$1" to="$2"
  if [ -f "$to" ] && cmp -s "$from" "$to"; then
    say "$to: already installed"
    return
  fi
  mkdir -p "$(dirname "$to")"
  cp "$from" "$to.new.$$"
  chmod 755 "$to.new.$$"
  mv -f "$to.new.$$" "$to"
  say "$to: installed"
}

main() {
  say "started $(date -u +%Y-%m-%dT%H:%M:%SZ) as $(id -un) (prefix $prefix)"
  find_engine
  if [ "$only_deps" -eq 1 ]; then
    install_dependencies
    return
  fi
  [ "$deps" -eq 1 ] && install_dependencies
  check_gpu
  install_file "$engine" "$prefix/bin/niwa-engine"
  install_file "$here/niwa-enginectl" "$prefix/bin/niwa-enginectl"
  mkdir -p "$models"
  say "model folder: $models"
  local version
  version="$("$prefix/bin/niwa-engine" --version)" || die "$prefix/bin/niwa-engine does not run (see the lines above)"
  say "done: $version"
  echo "NIWA_ENGINE=$prefix/bin/niwa-engine"
  echo "NIWA_MODELS=$models"
}

mkdir -p "$(dirname "$log")"
main 2>&1 | tee -a "$log"
exit "${PIPESTATUS[0]}"
