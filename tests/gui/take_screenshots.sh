#!/usr/bin/env bash
# Makes docs/screenshots/*.png: each page of the app in a real X window (Xvfb), in light and
# dark, in English and Japanese. The chat page carries sample history (Markdown, code, reasoning)
# and then a real reply streamed from niwa-engine serving a tiny synthetic model (random
# weights: its words are gibberish, but every piece of the path is the real one).
#   tests/gui/take_screenshots.sh [BUILD_DIR]     (default: build-app, then build)
# Needs xvfb-run and fonts-noto-cjk (install-deps.sh installs both).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${1:-}"
if [ -z "$build" ]; then
  for b in build-app build; do [ -x "$root/$b/gui/app/niwa" ] && build="$root/$b" && break; done
fi
build="$(cd "${build:?no build folder with gui/app/niwa}" && pwd)"
app="$build/gui/app/niwa"
engine="${NIWA_ENGINE:-$build/engine/niwa-engine}"
out="$root/docs/screenshots"
mkdir -p "$out" "$build/test-models"

model="$build/test-models/screenshots-tiny.gguf"
[ -f "$model" ] || "$engine" mkmodel --preset tiny --seed 7 --out "$model"

free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

shoot() {  # lang theme pages
  local lang="$1" theme="$2" pages="$3" profile
  profile="$(mktemp -d)"
  # A tiny model on the CPU: small enough a cache for any machine.
  printf '[engine]\npath=%s\nmax_seqs=4\ncontext_length=4096\n' "$engine" > "$profile/settings.ini"
  local prompt="Summarise our meeting in three points."
  [ "$lang" = ja ] && prompt="会議の要点を三つにまとめてください。"
  env LANG="$([ "$lang" = ja ] && echo ja_JP.UTF-8 || echo en_US.UTF-8)" \
    NIWA_LANG="$lang" NIWA_THEME="$theme" NIWA_SCREENSHOT_SUFFIX="-$theme-$lang" \
    NIWA_SCREENSHOT_PAGES="$pages" NIWA_SCREENSHOT_SEED=1 NIWA_SCREENSHOT_PROMPT="$prompt" \
    NIWA_INSTANCE_NAME="niwa-screenshots-$$" QT_QUICK_BACKEND=software QT_SCALE_FACTOR=1 \
    xvfb-run -a -s "-screen 0 1400x900x24" \
    "$app" --profile "$profile" --model "$model" --backend cpu --port "$(free_port)" --start \
      --screenshot "$out"
  rm -rf "$profile"
}

shoot en light chat,dashboard,engine,wizard,tray,settings,apikey
shoot en dark chat,dashboard,engine,wizard,tray
shoot ja light chat,dashboard,engine,wizard,tray,apikey
shoot ja dark chat,engine
ls -1 "$out"
