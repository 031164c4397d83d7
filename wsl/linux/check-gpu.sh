#!/usr/bin/env bash
# Checks that an NVIDIA GPU is visible here (inside WSL2, or on a Linux PC) and lists it.
#   check-gpu.sh            one line per GPU: index, name, memory, driver; exit 0
#   exit 3 and a message saying what to do when nvidia-smi is missing or sees no GPU.
# Inside WSL2 nvidia-smi and libcuda come from the Windows driver (/usr/lib/wsl/lib); a Linux
# NVIDIA driver must not be installed in the distro.
set -euo pipefail

export PATH="$PATH:/usr/lib/wsl/lib"

in_wsl() {
  [ -n "${WSL_DISTRO_NAME:-}" ] || grep -qi microsoft /proc/sys/kernel/osrelease 2>/dev/null
}

fail() {
  echo "check-gpu: $1" >&2
  if in_wsl; then
    cat >&2 <<'EOF'
check-gpu: in WSL2 the GPU comes from the NVIDIA driver installed on Windows. Install or
  update the NVIDIA Game Ready / Studio driver for Windows (https://www.nvidia.com/drivers),
  then run `wsl --shutdown` in a Windows terminal and try again. Do not install an NVIDIA
  Linux driver inside the distro: it replaces the one WSL provides.
EOF
  else
    echo "check-gpu: install the NVIDIA driver for this Linux (e.g. 'sudo ubuntu-drivers install'), reboot, and try again." >&2
  fi
  exit 3
}

command -v nvidia-smi >/dev/null || fail "nvidia-smi was not found, so no NVIDIA driver is reachable."
[ -n "${WSL_DISTRO_NAME:-}" ] && [ ! -e /dev/dxg ] && fail "/dev/dxg is missing: this distro runs under WSL 1 or GPU support is off."

if ! gpus="$(nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader 2>&1)"; then
  fail "nvidia-smi failed: ${gpus}"
fi
[ -n "$gpus" ] || fail "nvidia-smi lists no GPU."
printf '%s\n' "$gpus"
