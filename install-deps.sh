#!/usr/bin/env bash
# Installs what Niwa needs to build and test on Debian 12+ / Ubuntu 22.04+.
# Reused inside WSL2 by wsl/linux/ (with --runtime for the engine's run-time libraries only).
#   install-deps.sh            build + test dependencies (apt) and the Node test clients (npm)
#   install-deps.sh --no-gui   skip Qt and the GUI test tools (e.g. a headless server)
#   install-deps.sh --runtime  only what a built niwa-engine needs to run
set -euo pipefail

want_gui=1 runtime_only=0
for arg in "$@"; do
  case "$arg" in
    --no-gui) want_gui=0 ;;
    --runtime) runtime_only=1 ;;
    -h|--help) sed -n '2,7p' "$0"; exit 0 ;;
    *) echo "install-deps.sh: unknown option '$arg' (try --help)" >&2; exit 2 ;;
  esac
done

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps.sh: run as root or install sudo" >&2; exit 1; }
  sudo="sudo"
fi

runtime_pkgs=(libcurl4 libspdlog1.10 libpcre2-8-0 libutf8proc2 ca-certificates)
build_pkgs=(build-essential cmake ninja-build pkg-config git
  nlohmann-json3-dev libspdlog-dev libfmt-dev libcurl4-openssl-dev libcpp-httplib-dev libssl-dev
  libpcre2-dev libutf8proc-dev libstb-dev
  python3 python3-jinja2 python3-numpy clang-format
  dpkg-dev nsis g++-mingw-w64-x86-64 shellcheck)  # packaging and wsl/ tests
gui_pkgs=(qt6-base-dev qt6-base-dev-tools qt6-declarative-dev qt6-svg-dev qt6-tools-dev qt6-tools-dev-tools
  qt6-l10n-tools libqt6sql6-sqlite libqt6svg6 libgl-dev
  qml6-module-qtquick qml6-module-qtquick-controls qml6-module-qtquick-layouts
  qml6-module-qtquick-window qml6-module-qtquick-templates qml6-module-qtquick-dialogs
  qml6-module-qtqml-workerscript qml6-module-qtqml qml6-module-qt-labs-platform
  xvfb xauth fonts-noto-cjk qt6-translations-l10n)

pkgs=("${runtime_pkgs[@]}")
if [ "$runtime_only" -eq 0 ]; then
  pkgs+=("${build_pkgs[@]}")
  # Node.js may come from elsewhere (NodeSource, nvm); Debian's nodejs conflicts with those.
  command -v node >/dev/null && command -v npm >/dev/null || pkgs+=(nodejs npm)
  [ "$want_gui" -eq 1 ] && pkgs+=("${gui_pkgs[@]}")
fi

# Some distributions name the versioned runtime packages differently; keep only those apt knows.
$sudo apt-get update -qq
available=()
for p in "${pkgs[@]}"; do
  if apt-cache show "$p" >/dev/null 2>&1; then available+=("$p"); else echo "install-deps.sh: no package '$p' here, skipped" >&2; fi
done
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${available[@]}"

if [ "$runtime_only" -eq 0 ]; then
  here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
  if [ -f "$here/tests/node/package.json" ]; then
    (cd "$here/tests/node" && npm ci --no-audit --no-fund --loglevel=error)
  fi
fi
echo "install-deps.sh: done"
