#!/usr/bin/env bash
# README command (2): set up, build and run the whole test suite on Debian/Ubuntu.
#   ./test.sh [ctest arguments...]     e.g. ./test.sh -L unit
# GPU tests (label gpu) run only where a GPU is: pass NIWA_GPU_TESTS=1 to include them.
set -euo pipefail
cd "$(dirname "$0")"
[ -d /usr/local/cuda/bin ] && export PATH="/usr/local/cuda/bin:$PATH"

./install-deps.sh
build="${NIWA_BUILD_DIR:-build}"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNIWA_WERROR="${NIWA_WERROR:-OFF}"
cmake --build "$build" --parallel "$(nproc)"

exclude=(-LE gpu)
[ "${NIWA_GPU_TESTS:-0}" = 1 ] && exclude=()
ctest --test-dir "$build" --output-on-failure --parallel "$(nproc)" "${exclude[@]}" "$@"
