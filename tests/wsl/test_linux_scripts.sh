#!/usr/bin/env bash
# wsl/linux/ scripts in a temporary HOME and prefix, with fakes/ (nvidia-smi, apt-get,
# apt-cache, ldd, sudo) first on PATH where the real tools cannot run here.
#   test_linux_scripts.sh NIWA_ENGINE SOURCE_DIR
set -euo pipefail

engine="$1" src="$2"
scripts="$src/wsl/linux"
fakes="$src/tests/wsl/fakes"
tmp="$(mktemp -d)"
# Engines a failed check left running are found by their pid files.
cleanup() {
  for f in "$tmp"/*.pid; do [ -f "$f" ] && kill -KILL "$(cat "$f")" 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT
export HOME="$tmp/home" FAKE_STATE="$tmp/state"
unset XDG_DATA_HOME XDG_STATE_HOME WSL_DISTRO_NAME
mkdir -p "$HOME" "$FAKE_STATE"
base_path="/usr/local/bin:/usr/bin:/bin"
failures=0

fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
expect() { # expect DESCRIPTION COMMAND...
  local what="$1"; shift
  "$@" || fail "$what"
}
contains() { grep -q -- "$2" <<<"$1"; }
# Polls COMMAND... every 0.1 s for up to 20 s: what a started engine does is waited for, not
# slept on (fixed sleeps failed under a loaded ctest -j).
wait_for() {
  local i
  for ((i = 0; i < 200; i++)); do
    "$@" && return 0
    sleep 0.1
  done
  return 1
}

echo "--- check-gpu.sh with two GPUs"
out="$(PATH="$fakes:$base_path" FAKE_GPUS="NVIDIA GeForce RTX 5070:12227,NVIDIA GeForce RTX 5060 Ti:16311" bash "$scripts/check-gpu.sh")"
expect "lists GPU 0" contains "$out" "0, NVIDIA GeForce RTX 5070, 12227 MiB, 576.02"
expect "lists GPU 1" contains "$out" "1, NVIDIA GeForce RTX 5060 Ti, 16311 MiB"

echo "--- check-gpu.sh without nvidia-smi, inside WSL"
mkdir -p "$tmp/nogpu"
for tool in ldd apt-get apt-cache sudo; do ln -sf "$fakes/$tool" "$tmp/nogpu/$tool"; done
rc=0
out="$(PATH="$tmp/nogpu:$base_path" WSL_DISTRO_NAME=Ubuntu-24.04 bash "$scripts/check-gpu.sh" 2>&1)" || rc=$?
if [ -x /usr/bin/nvidia-smi ]; then
  echo "(this machine has nvidia-smi in /usr/bin: the missing case is not played)"
else
  expect "exit 3 without nvidia-smi (got $rc)" test "$rc" -eq 3
  expect "says the driver comes from Windows" contains "$out" "NVIDIA driver installed on Windows"
  expect "warns against a Linux driver" contains "$out" "Do not install an NVIDIA"
fi

echo "--- check-gpu.sh with a driver that does not answer"
rc=0
out="$(PATH="$fakes:$base_path" FAKE_NVIDIA_SMI_FAIL=1 bash "$scripts/check-gpu.sh" 2>&1)" || rc=$?
expect "exit 3 when nvidia-smi fails (got $rc)" test "$rc" -eq 3
expect "passes nvidia-smi's message on" contains "$out" "couldn't communicate with the NVIDIA driver"

echo "--- install.sh: libraries missing, installed through install-deps.sh --runtime"
prefix="$tmp/prefix" models="$tmp/models" log="$tmp/install.log"
out="$(PATH="$fakes:$base_path" bash "$scripts/install.sh" --engine "$engine" --prefix "$prefix" --models "$models" --log "$log" 2>&1)" ||
  fail "install.sh failed: $out"
expect "reports the missing library" contains "$out" "libcurl.so.4"
expect "ran apt-get install" grep -q "apt-get install -y -qq --no-install-recommends.*libcurl4" "$FAKE_STATE/apt.log"
expect "engine installed" test -x "$prefix/bin/niwa-engine"
expect "wrapper installed" test -x "$prefix/bin/niwa-enginectl"
expect "model folder made" test -d "$models"
expect "installed engine runs" "$prefix/bin/niwa-engine" --version
expect "prints NIWA_ENGINE" contains "$out" "NIWA_ENGINE=$prefix/bin/niwa-engine"
expect "prints NIWA_MODELS" contains "$out" "NIWA_MODELS=$models"
expect "GPU listed" contains "$out" "GPUs: 0, NVIDIA GeForce RTX 5070"
expect "logged" grep -q "NIWA_ENGINE=" "$log"

echo "--- install.sh again: nothing to do, same result"
apt_calls="$(wc -l <"$FAKE_STATE/apt.log")"
out="$(PATH="$fakes:$base_path" bash "$scripts/install.sh" --engine "$engine" --prefix "$prefix" --models "$models" --log "$log" 2>&1)" ||
  fail "second install.sh failed: $out"
expect "says already installed" contains "$out" "niwa-engine: already installed"
expect "libraries present" contains "$out" "run-time libraries: all present"
expect "no apt-get the second time" test "$(wc -l <"$FAKE_STATE/apt.log")" -eq "$apt_calls"
expect "log holds both runs" test "$(grep -c 'started ' "$log")" -eq 2

echo "--- install.sh --deps-only and --skip-deps; a missing engine; no GPU is not fatal"
out="$(PATH="$fakes:$base_path" bash "$scripts/install.sh" --engine "$engine" --deps-only --log "$log" 2>&1)" || fail "--deps-only failed: $out"
contains "$out" "NIWA_ENGINE=" && fail "--deps-only installed the engine"
rc=0
out="$(PATH="$fakes:$base_path" bash "$scripts/install.sh" --engine "$tmp/none" --log "$log" 2>&1)" || rc=$?
expect "missing --engine fails (got $rc)" test "$rc" -eq 1
expect "names the missing engine" contains "$out" "does not exist"
out="$(PATH="$tmp/nogpu:$base_path" bash "$scripts/install.sh" --engine "$engine" --prefix "$tmp/p2" --skip-deps --log "$log" 2>&1)" ||
  fail "install.sh without a GPU failed: $out"
expect "warns about the GPU" contains "$out" "no GPU visible yet"

echo "--- niwa-enginectl: start in the background, status, refuse a second start, stop"
fake_engine="$tmp/bin/niwa-engine"
mkdir -p "$tmp/bin"
printf '#!/bin/sh\necho "fake engine $*"\ntrap "exit 0" TERM\nwhile :; do sleep 0.1; done\n' >"$fake_engine"
chmod +x "$fake_engine"
cp "$scripts/niwa-enginectl" "$tmp/bin/"
ctl="$tmp/bin/niwa-enginectl" pid_file="$tmp/engine.pid"
"$ctl" start --pid-file "$pid_file" --background --log "$tmp/engine.log" -- serve --port 18080 >/dev/null ||
  fail "background start failed"
expect "engine got its arguments" wait_for grep -q "fake engine serve --port 18080" "$tmp/engine.log"
pid="$("$ctl" status --pid-file "$pid_file")" || fail "status says not running"
expect "pid file holds the engine's pid" test "$(cat "$pid_file")" = "$pid"
rc=0
"$ctl" start --pid-file "$pid_file" -- serve 2>/dev/null || rc=$?
expect "second start refused with 3 (got $rc)" test "$rc" -eq 3
"$ctl" stop --pid-file "$pid_file" >/dev/null
rc=0
"$ctl" status --pid-file "$pid_file" 2>/dev/null || rc=$?
expect "status 3 after stop (got $rc)" test "$rc" -eq 3
expect "pid file removed" test ! -e "$pid_file"
expect "stop when not running is fine" "$ctl" stop --pid-file "$pid_file"

echo "--- niwa-enginectl: foreground start writes its own pid and becomes the engine; stale pid file"
echo 999999 >"$tmp/p18081.pid"
"$ctl" start --pid-file "$tmp/p18081.pid" -- serve --port 18081 >"$tmp/fg.log" 2>&1 &
fg=$!
# The engine's first line comes after the wrapper wrote its pid and became the engine.
expect "the engine's output reaches the caller" wait_for grep -q "fake engine serve --port 18081" "$tmp/fg.log"
expect "foreground pid is the wrapper's own" test "$(cat "$tmp/p18081.pid")" = "$fg"
cmdline="$(tr '\0' ' ' <"/proc/$fg/cmdline")"
expect "the wrapper became the engine" contains "$cmdline" "niwa-engine serve --port 18081"
"$ctl" stop --pid-file "$tmp/p18081.pid" --timeout 5 >/dev/null
wait "$fg" || true
expect "engine gone after stop" test ! -e "/proc/$fg/cmdline"

echo "--- niwa-enginectl: an engine that ignores TERM is killed after --timeout"
printf '#!/bin/sh\ntrap "" TERM\necho "ignoring TERM"\nwhile :; do sleep 0.1; done\n' >"$fake_engine"
"$ctl" start --pid-file "$pid_file" --background --log "$tmp/stubborn.log" -- serve >/dev/null
expect "the stubborn engine started" wait_for grep -q "ignoring TERM" "$tmp/stubborn.log"
out="$("$ctl" stop --pid-file "$pid_file" --timeout 1 2>&1)"
expect "says it killed" contains "$out" "killing it"
rc=0
"$ctl" status --pid-file "$pid_file" 2>/dev/null || rc=$?
expect "gone after the kill" test "$rc" -eq 3

if [ "$failures" -gt 0 ]; then
  echo "$failures check(s) failed" >&2
  exit 1
fi
echo "all wsl/linux script checks passed"
