#!/usr/bin/env bash
# On the GPU machine (see docs/ARCHITECTURE.md "The GPU machine"): configure and build the
# engine with the GUI off, list the GPUs, and run whatever GPU steps are asked for.
#   tests/gpu/run.sh [build] [smoke] [mkmodel_27b] [reference]   (default: build)
# Logs and results go to $OUT (the device tool's output folder) or /tmp/niwa-gpu.
set -euo pipefail
cd "$(dirname "$0")/../.."
out="${OUT:-/tmp/niwa-gpu}"
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH="$PWD/.deps/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(build)

build() {
  nvidia-smi -L | tee "$out/gpus.txt"
  cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DNIWA_GUI=OFF -DNIWA_TESTS=OFF \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DNIWA_DEPS_DIR="$PWD/.deps" 2>&1 | tee "$out/configure.log"
  cmake --build build-gpu --parallel "$(nproc)" 2>&1 | tail -n 40 | tee "$out/build.log"
  build-gpu/engine/niwa-engine devices --json | tee "$out/devices.json"
}

smoke() {
  # The engine end to end on the GPU machine's CPU: a synthetic model, logits, a generation.
  local e=build-gpu/engine/niwa-engine
  $e mkmodel --preset tiny --seed 1 --out /tmp/niwa-tiny.gguf
  $e logits --model /tmp/niwa-tiny.gguf --tokens 1,2,3,4,5,6,7,8 --tp 2 --out "$out/tiny-logits.f32"
  $e generate --model /tmp/niwa-tiny.gguf --prompt "Hello" --max-tokens 16 --seed 1 2>&1 | tee "$out/generate.txt"
}

mkmodel_27b() {
  # Writes the full 27B layout (~7.2 GB) and times it: mkmodel must write at disk speed.
  local e=build-gpu/engine/niwa-engine
  /usr/bin/time -v $e mkmodel --preset 27b --seed 1 --out /tmp/niwa-27b.gguf 2>&1 | tail -n 25 | tee "$out/mkmodel-27b.txt"
  ls -l /tmp/niwa-27b.gguf | tee -a "$out/mkmodel-27b.txt"
  dd if=/dev/zero of=/tmp/niwa-dd bs=64M count=64 oflag=direct 2>&1 | tail -n 1 | tee -a "$out/mkmodel-27b.txt"
  rm -f /tmp/niwa-dd
}

reference() {
  # Reference logits from transformers' Qwen3.5 on mkmodel weights (tests/fixtures/README.md).
  PYTHONUNBUFFERED=1 tests/fixtures/make_fixtures.sh build-gpu/engine/niwa-engine "$out" 2>&1 | tee "$out/reference.log"
}

for s in "${steps[@]}"; do "$s"; done
