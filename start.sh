#!/usr/bin/env bash
# README command (1): set up, build and start Niwa.
#   ./start.sh                  the desktop app, with the engine on --model, $NIWA_MODEL, or
#                               a small built-in model when none is configured
#   ./start.sh --headless       only the engine (an OpenAI-compatible server)
#   ./start.sh --model FILE     a real model (e.g. Ternary-Bonsai-2-27B-PQ2_0.gguf)
set -euo pipefail
cd "$(dirname "$0")"
[ -d /usr/local/cuda/bin ] && export PATH="/usr/local/cuda/bin:$PATH"

headless=0 model="${NIWA_MODEL:-}" port="${NIWA_PORT:-8000}"
while [ $# -gt 0 ]; do
  case "$1" in
    --headless) headless=1 ;;
    --model) model="$2"; shift ;;
    --port) port="$2"; shift ;;
    -h|--help) sed -n '2,7p' "$0"; exit 0 ;;
    *) echo "start.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
  esac
  shift
done

deps=()
[ "$headless" = 1 ] && deps=(--no-gui)
./install-deps.sh "${deps[@]}"
# Its own build folder: test.sh's (build/) is a RelWithDebInfo build with the tests.
build="${NIWA_APP_BUILD_DIR:-build-release}"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DNIWA_TESTS=OFF -DNIWA_WERROR=OFF
cmake --build "$build" --parallel "$(nproc)"
engine="$build/engine/niwa-engine"

if [ -z "$model" ]; then
  model="${XDG_DATA_HOME:-$HOME/.local/share}/niwa/models/niwa-tiny.gguf"
  if [ ! -f "$model" ]; then
    mkdir -p "$(dirname "$model")"
    echo "start.sh: no model configured; making the small built-in model at $model"
    "$engine" mkmodel --preset tiny --seed 1 --out "$model"
  fi
fi

backend=cpu
command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 && "$engine" --help | grep -q cuda && backend=cuda

app="$build/gui/app/niwa"
if [ "$headless" = 0 ] && [ -x "$app" ]; then
  exec "$app" --model "$model" --backend "$backend" --port "$port" --start
fi
if "$engine" --help | grep -q '^  serve'; then
  exec "$engine" serve --model "$model" --backend "$backend" --port "$port"
fi
# Until the server lands, show the engine working on the model.
echo "start.sh: the HTTP server is not built yet; running one generation instead"
exec "$engine" generate --model "$model" --prompt "Hello from Niwa" --max-tokens 16
