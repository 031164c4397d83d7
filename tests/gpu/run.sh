#!/usr/bin/env bash
# On the GPU machine (see docs/ARCHITECTURE.md "The GPU machine"): configure and build the
# engine with the GUI off, list the GPUs, and run whatever GPU steps are asked for.
#   tests/gpu/run.sh [build] [test] [sanitize] [bench] [decode_kernels] [ab] [trace] [stalls] [patterns] [mma_rate] [icache] [clusters] [dataflow] [dataflow_warps] [dataflow_clocks] [dataflow_stalls] [smoke] [mkmodel_27b] [reference]   (default: build)
# Logs and results go to $OUT (the device tool's output folder) or /tmp/niwa-gpu.
set -euo pipefail
cd "$(dirname "$0")/../.."
out="${OUT:-/tmp/niwa-gpu}"
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH="$PWD/.deps/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(build)

# The 27B layout the benches run on, made once a machine (mkmodel, ~7 s).
model_27b() {
  [ -f /tmp/niwa-27b.gguf ] || build-gpu/engine/niwa-engine mkmodel --preset 27b --seed 1 --out /tmp/niwa-27b.gguf >/dev/null
}

# decode_rates FILE LABEL: prints LABEL and the decode tok/s a batch of a `bench --json` file.
decode_rates() {
  python3 -c 'import json, sys; d = json.load(open(sys.argv[1]))
print(sys.argv[2], "decode tok/s", [(x["batch"], round(x["tok_s"], 1)) for x in d["decode"]])' "$1" "$2"
}

build() {
  nvidia-smi -L | tee "$out/gpus.txt"
  rm -rf build-gpu/ab  # ab's engines were built from an earlier tree
  cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DNIWA_GUI=OFF -DNIWA_TESTS=OFF \
    -DCMAKE_CUDA_ARCHITECTURES=90a -DNIWA_DEPS_DIR="$PWD/.deps" 2>&1 | tee "$out/configure.log"
  cmake --build build-gpu --parallel "$(nproc)" 2>&1 | tail -n 40 | tee "$out/build.log"
  build-gpu/engine/niwa-engine devices --json | tee "$out/devices.json"
}

stage_qt() {
  # The image has no Qt: unpack Debian's Qt Core + Test and what they link (stage-deps.sh)
  # over /, keeping every file the image already has.
  tar xJf .deps/qt-stage.tar.xz -C / --skip-old-files
}

test() {
  # The gpu-labelled tests (files named test_cuda_*.cpp anywhere under tests/): build them and
  # the engine, run them through ctest. They fail, never skip, without a GPU.
  stage_qt
  cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNIWA_GUI=OFF -DNIWA_TESTS=ON \
    -DCMAKE_CUDA_ARCHITECTURES=90a -DNIWA_DEPS_DIR="$PWD/.deps" >"$out/configure-test.log" 2>&1 ||
    { tail -n 40 "$out/configure-test.log"; return 1; }
  mapfile -t targets < <(find tests -name 'test_cuda_*.cpp' -printf '%f\n' | sed 's/\.cpp$//' | sort)
  cmake --build build-gpu --parallel "$(nproc)" --target niwa-engine "${targets[@]}" >"$out/build-test.log" 2>&1 ||
    { grep -E -A5 'error|Error' "$out/build-test.log" | head -n 80; return 1; }
  (cd build-gpu && ctest -L gpu -j "${NIWA_CTEST_JOBS:-1}" --output-on-failure --timeout 600 2>&1 | tee "$out/ctest-gpu.log" | tail -n 60)
}

bench() {
  # The 27B layout on the CUDA backend: decode at batch 1/8/24 (context 4096) and prefill of
  # 512 and 8192 tokens, against the copy bandwidth and bf16 GEMM rate measured in the run.
  local e=build-gpu/engine/niwa-engine
  model_27b
  $e bench --model /tmp/niwa-27b.gguf --backend cuda --max-seqs 24 ${NIWA_BENCH_ARGS:-} --json \
    2>"$out/bench-27b.log" | tee "$out/bench-27b.json"
  git -C . rev-parse HEAD >"$out/commit.txt" 2>/dev/null || true
}

decode_kernels() {
  # Each decode matmul kernel forced in turn (CudaOps::DecodeGemm), and the choice decode_kernel
  # makes: every matmul shape alone and whole decode steps, at 1-32 rows (the ninth pass of
  # docs/BENCHMARKS.md chose the kernels from the whole steps).
  local e=build-gpu/engine/niwa-engine k
  model_27b
  for k in auto registers ring staged; do
    NIWA_DECODE_GEMM=$k $e bench --model /tmp/niwa-27b.gguf --backend cuda --max-seqs 32 --kernels \
      --batch 1,2,4,8,16,24,32 --prompt 0 --json 2>"$out/decode-kernels-$k.log" >"$out/decode-kernels-$k.json"
    decode_rates "$out/decode-kernels-$k.json" "$k"
  done
}

ab() {
  # A/B of changes in whole decode steps, on one machine: each diff in NIWA_AB_PATCH (one or
  # more files, as `git diff > F` writes them, each against the tree as it is) is applied, the
  # engine built (Release, incremental) and kept as build-gpu/ab/SIDE, and the patch reverted;
  # the tree as it is last. A side is "with" (one patch) or "with-NAME" (NAME: the patch file's
  # name less .patch), and "without". Each NAME:VAR=VALUE[,VAR=VALUE...] in NIWA_AB_ENV is a
  # side "env-NAME" too: the tree's engine run with those variables set (switches a build reads
  # from its environment cost no build of their own). A side whose engine is there already (a
  # call cut short: `build` clears them) is not built again. Then each side is benched
  # NIWA_AB_ROUNDS times (default 2), alternating, with NIWA_AB_ARGS (default: batch 1,2,4,8,24,
  # no prefill, 64 steps); prints tok/s a batch for each run. Needs `build` first.
  local e=build-gpu/engine/niwa-engine patches envs r side patch spec engine sides=() vars=()
  declare -A side_env=()
  read -r -a patches <<<"${NIWA_AB_PATCH:-}"
  read -r -a envs <<<"${NIWA_AB_ENV:-}"
  [ $((${#patches[@]} + ${#envs[@]})) -gt 0 ] || { echo "ab: set NIWA_AB_PATCH and/or NIWA_AB_ENV" >&2; return 1; }
  for spec in "${envs[@]}"; do
    [[ "$spec" == ?*:?*=* ]] || { echo "ab: NIWA_AB_ENV takes NAME:VAR=VALUE[,VAR=VALUE...], not '$spec'" >&2; return 1; }
  done
  model_27b
  mkdir -p build-gpu/ab
  for patch in "${patches[@]}"; do git apply --check "$patch"; done
  for patch in "${patches[@]}" ""; do
    side=without
    if [ -n "$patch" ]; then
      side=with
      [ ${#patches[@]} -gt 1 ] && side="with-$(basename "$patch" .patch)"
    fi
    sides+=("$side")
    [ -x "build-gpu/ab/$side" ] && continue
    [ -n "$patch" ] && git apply "$patch"
    cmake --build build-gpu --parallel "$(nproc)" --target niwa-engine >"$out/ab-build.log" 2>&1 ||
      { [ -n "$patch" ] && git apply -R "$patch"; tail -n 30 "$out/ab-build.log"; return 1; }
    cp "$e" "build-gpu/ab/$side"
    if [ -n "$patch" ]; then git apply -R "$patch"; fi
    echo "built $side"
  done
  for spec in "${envs[@]}"; do
    sides+=("env-${spec%%:*}")
    side_env["env-${spec%%:*}"]=${spec#*:}
  done
  for ((r = 1; r <= ${NIWA_AB_ROUNDS:-2}; r++)); do
    for side in "${sides[@]}"; do
      vars=()
      engine="build-gpu/ab/$side"
      if [ -n "${side_env[$side]:-}" ]; then
        IFS=, read -r -a vars <<<"${side_env[$side]}"
        engine=build-gpu/ab/without
      fi
      # shellcheck disable=SC2086  # the arguments split on purpose
      env "${vars[@]}" "$engine" bench --model /tmp/niwa-27b.gguf --backend cuda --max-seqs 24 \
        ${NIWA_AB_ARGS:---batch 1,2,4,8,24 --prompt 0 --steps 64} --json \
        2>"$out/ab-$side-$r.log" >"$out/ab-$side-$r.json" || true
      decode_rates "$out/ab-$side-$r.json" "$side $r" || tail -n 5 "$out/ab-$side-$r.log"
    done
  done
}

trace() {
  # A kernel timeline of decode steps on the 27B layout, without Nsight Systems: kernel_trace.cpp
  # records every kernel through CUDA's injection hook (CUPTI), trace_summary.py says what each
  # kernel adds to a step. One bench run a batch size (NIWA_TRACE_BATCH, default "1 24"); the
  # raw CSVs stay in /tmp/niwa-trace.
  local e=build-gpu/engine/niwa-engine cupti b
  cupti=$(dirname "$(find /usr/local/cuda/ -name 'libcupti.so' | head -n 1)")
  g++ -std=c++17 -O2 -shared -fPIC -I/usr/local/cuda/include tests/gpu/kernel_trace.cpp -L"$cupti" -lcupti \
    -Wl,-rpath,"$cupti" -o build-gpu/libkernel_trace.so
  model_27b
  mkdir -p /tmp/niwa-trace
  for b in ${NIWA_TRACE_BATCH:-1 24}; do
    CUDA_INJECTION64_PATH="$PWD/build-gpu/libkernel_trace.so" NIWA_TRACE_OUT="/tmp/niwa-trace/b$b.csv" \
      $e bench --model /tmp/niwa-27b.gguf --backend cuda --max-seqs "$b" --batch "$b" --prompt 0 --steps 16 --json \
      2>"$out/trace-b$b.log" >"$out/trace-b$b.json"
    python3 tests/gpu/trace_summary.py "/tmp/niwa-trace/b$b.csv" --list "${NIWA_TRACE_LIST:-40}" >"$out/trace-b$b.txt"
  done
}

stalls() {
  # Where one decode matmul launch's warps stall: ncu --set full (clocks locked, kernels
  # serialised, so no PDL overlap) on launch NIWA_STALLS_SKIP (default 2) of the kernels matching
  # NIWA_STALLS_KERNEL (default wgmma_decode) in whole 27B decode steps of NIWA_STALLS_BATCH rows
  # (default 24). At 24 rows the wgmma launches of layer 0 are qkv+z, out, gate+up, down, so the
  # default is gate+up (stalls-details.csv names the launch and its grid). ncu_stalls.py sums
  # the source page's samples by SASS line and by opcode, and instructions and samples by region.
  local e=build-gpu/engine/niwa-engine b=${NIWA_STALLS_BATCH:-24}
  model_27b
  ncu --set full -k "regex:${NIWA_STALLS_KERNEL:-wgmma_decode}" --launch-skip "${NIWA_STALLS_SKIP:-2}" \
    --launch-count 1 -f -o /tmp/niwa-stalls \
    $e bench --model /tmp/niwa-27b.gguf --backend cuda --max-seqs "$b" --batch "$b" --prompt 0 --steps 2 --json \
    >"$out/stalls-bench.json" 2>"$out/stalls-ncu.log" || { tail -n 20 "$out/stalls-ncu.log"; return 1; }
  ncu_summary /tmp/niwa-stalls stalls
}

# ncu_summary REPORT NAME: REPORT.ncu-rep's details page to $out/NAME-details.csv, and its samples
# by SASS line, by opcode and by region (ncu_stalls.py) to $out/NAME.txt.
ncu_summary() {
  ncu -i "$1.ncu-rep" --page details --csv >"$out/$2-details.csv"
  ncu -i "$1.ncu-rep" --page source --csv --print-source sass >"$1-source.csv"
  python3 tests/gpu/ncu_stalls.py "$1-source.csv" --top 40 | tee "$out/$2.txt"
}

probe() {
  # A standalone measurement program: tests/gpu/$1.cu built for $2 and run, its JSON lines to $out/$3.
  probe_build "$1" "$2"
  "build-gpu/$1" | tee "$out/$3"
}

# probe_build NAME ARCH [BINARY]: tests/gpu/NAME.cu built for ARCH as build-gpu/NAME (or build-gpu/BINARY),
# with NIWA_NVCC_FLAGS added.
probe_build() {
  mkdir -p build-gpu
  nvcc -O3 -std=c++17 -arch="$2" -I. ${NIWA_NVCC_FLAGS:-} "tests/gpu/$1.cu" -o "build-gpu/${3:-$1}"
}

patterns() {
  # The decode matmuls' weight reads by access pattern alone, no arithmetic (read_pattern.cu):
  # the copy bound, the split kernel's units, and the same units stored tile by tile.
  probe read_pattern sm_90 read-pattern.jsonl
}

icache() {
  # What code out of the instruction caches costs a launch: straight-line kernels of 0.1-128 KB,
  # the same one again and again or 2, 4, 8 and 16 copies in turn (icache.cu).
  probe icache sm_90a icache.jsonl
}

clusters() {
  # Whether a decode matmul's K slices could meet inside a thread block cluster: how many clusters
  # of 1-16 blocks of the wgmma kernel's footprint fit at once, and a cluster barrier's round
  # against the counter round the kernels use now (clusters.cu).
  probe clusters sm_90a clusters.jsonl
}

dataflow() {
  # Whether a persistent kernel streaming each SM's share of a batch-1 step's matmul weights
  # through a shared-memory ring, waiting only for free slots, keeps the copy rate through the
  # links' dependencies (dataflow_chain.cu): exactness first, then by ring depth, with and without
  # the waits; the ring alone; x staged alone, the rows on independent chains, and the rows in
  # 16-row tiles on the tensor cores, a chunk's sums by one warp or split over all eight, and the
  # split tiles' refinements (fragment order, paired x, deferred sums, warp-local x, K by field,
  # unrolled, tiles taken at run time); then with more of a step in the chain: x rotated by H_1024,
  # the residual stream and its norms, each GDN layer's recurrent step as a link (checked within a
  # tolerance of the exact arithmetic); x rotated a block a warp with one scale a link met at a
  # barrier, with the norms and the recurrent steps; and last where a link's time goes in the
  # unrolled and rotated forms (stamped runs, staging's steps by the SM's clock).
  # NIWA_DATAFLOW_FORMS=<letters> times only those forms (dataflow_chain.cu's parts);
  # NIWA_DATAFLOW_GENERIC=1 runs 'a' through the kernel that reads its flags at run time, not its own;
  # NIWA_NVCC_FLAGS=-DNIWA_CONSUMER_WARPS=16 builds it with sixteen consumer warps (=12:
  # twelve; forms 'a', 'B', 'F', 'E', 'H' and 'T' only).
  probe dataflow_chain sm_90a dataflow-chain.jsonl >/dev/null
  python3 tests/gpu/dataflow_summary.py "$out/dataflow-chain.jsonl"  # a line a figure; fails on a failed check
}

dataflow_warps() {
  # Forms 'a', 'B', 'H' and the ring alone ('T'; NIWA_DATAFLOW_WARP_FORMS, any of aTBFEH) with eight,
  # twelve and sixteen consumer warps a block (the probe built three ways), twice each in turn on one
  # card: whether more warps hide the tiles' latencies (docs/BENCHMARKS.md, fifty-seventh pass).
  local i w build8 build12
  probe_build dataflow_chain sm_90a dataflow_chain8 &
  build8=$!
  NIWA_NVCC_FLAGS=-DNIWA_CONSUMER_WARPS=12 probe_build dataflow_chain sm_90a dataflow_chain12 &
  build12=$!
  NIWA_NVCC_FLAGS=-DNIWA_CONSUMER_WARPS=16 probe_build dataflow_chain sm_90a dataflow_chain16
  # Their status: a failed build must not leave an earlier call's binary to run.
  wait "$build8"
  wait "$build12"
  for i in 1 2; do
    for w in 8 12 16; do
      NIWA_DATAFLOW_FORMS="${NIWA_DATAFLOW_WARP_FORMS:-aTBH}" "build-gpu/dataflow_chain$w" \
        >"$out/dataflow-warps$w-$i.jsonl"
    done
  done
  # Every figure a line in a file; side by side (a line a form and ring depth) in the output.
  python3 tests/gpu/dataflow_summary.py "$out"/dataflow-warps*.jsonl >"$out/dataflow-warps.txt" || true
  python3 tests/gpu/dataflow_summary.py --compare "$out"/dataflow-warps{8,12,16}-{1,2}.jsonl
}

dataflow_clocks() {
  # The card's SM clock and power while one form runs alone (NIWA_DATAFLOW_CLOCK_FORMS, default 'a',
  # 'F' and 'B': whether the rotation's arithmetic pushes the card to its power limit; the
  # fifty-seventh pass saw the rotated forms' staging at 1.79 GHz against 1.95), 1,500 launches
  # each (~5 s), nvidia-smi sampling every 20 ms; the samples inside the launches' span summed.
  probe_build dataflow_chain sm_90a
  nvidia-smi --query-gpu=power.limit,clocks.max.sm --format=csv | tee "$out/dataflow-clock-limits.csv"
  local f forms="${NIWA_DATAFLOW_CLOCK_FORMS:-aFB}" pid i
  for ((i = 0; i < ${#forms}; i++)); do
    f="${forms:i:1}"
    nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv,noheader,nounits \
      -lms 20 >"$out/dataflow-clocks-$f.csv" &
    pid=$!
    NIWA_DATAFLOW_ONLY="$f" NIWA_DATAFLOW_LAUNCHES=1500 build-gpu/dataflow_chain 2>"$out/dataflow-clocks-$f.json"
    kill "$pid"
    wait "$pid" 2>/dev/null || true
    python3 tests/gpu/clock_summary.py "$out/dataflow-clocks-$f.csv" "$out/dataflow-clocks-$f.json"
  done
}

dataflow_stalls() {
  # Where the probe's warps stall in one form (NIWA_DATAFLOW_ONLY, default m: the tensor-core
  # tiles with their waits; a second character 0: without them): ncu --set full on the form's
  # second launch, the probe doing nothing else; ncu_stalls.py sums the samples as in `stalls`.
  probe_build dataflow_chain sm_90a
  NIWA_DATAFLOW_ONLY="${NIWA_DATAFLOW_ONLY:-m}" ncu --set full -k regex:chain_kernel --launch-skip 1 \
    --launch-count 1 -f -o /tmp/niwa-dataflow build-gpu/dataflow_chain >"$out/dataflow-ncu.log" 2>&1 ||
    { tail -n 20 "$out/dataflow-ncu.log"; return 1; }
  ncu_summary /tmp/niwa-dataflow dataflow-stalls
}

mma_rate() {
  # The tensor-core rate the decode matmuls' arithmetic can reach on an SM, by warps and
  # accumulator chains, bare and fed as the decode kernels feed it (mma_rate.cu).
  probe mma_rate sm_90a mma-rate.jsonl
}

sanitize() {
  # Issue #6 asks for the GPU suite clean under compute-sanitizer: every gpu-labelled test binary
  # (NIWA_SANITIZE_TESTS, default all) under each tool (NIWA_SANITIZE_TOOLS, default memcheck and
  # racecheck), NIWA_SANITIZE_JOBS runs at a time (default 6). Each run's log goes to $out
  # (sanitize_one); one line a run is printed, in order. Fails if any run reports an error,
  # fails or is cut at NIWA_SANITIZE_TIMEOUT seconds (default 500). Needs `test` first.
  # - The binaries in NIWA_SANITIZE_SPLIT (default: matmul, model, gated delta rule) run one data
  #   row a run (sanitize_runs): whole, each takes over ten minutes under racecheck.
  # - memcheck reports every failed CUDA call; test_cuda_memory makes cudaMalloc fail on purpose
  #   (the out-of-memory error it checks), so there API errors are not reported.
  # - racecheck checks niwa's kernels only, not cuBLAS's or NCCL's. Prefill goes through niwa's
  #   tensor-core tiles (NIWA_PREFILL_GEMM=tiles), and the runs in NIWA_RACECHECK_SKIP (default
  #   test_cuda_matmul:prefillPaths, which calls cuBLAS by name) are left out: racecheck ends in
  #   "Internal Sanitizer Error: The Sanitizer failed to handle a hardware exception" once a
  #   large cuBLAS GEMM has run, whichever of niwa's kernels it checks, and the same matmul row
  #   passes with the tiles (docs/BENCHMARKS.md, nineteenth pass).
  # - QtTest's 5-minute limit a test function is lifted: under racecheck the gated delta rule's
  #   prefill cases alone take over 2 minutes.
  # - NIWA_SANITIZE_DEADLINE (seconds from the start, default none) fits the whole under a limit
  #   such as the device tool's ten minutes a command: each run is cut at the deadline at the
  #   latest, none starts with less than a minute left, and the summary is still printed (a run
  #   that never started reads "not run"). At 8 runs at a time the suite fits two such calls
  #   (split by NIWA_SANITIZE_TESTS) but for runs of over six minutes: under racecheck
  #   test_cuda_model's logitsMatchCpu small-300-fp32 (about eight) and recordedStepsEqualDirect
  #   (over ten: six for its direct half), under initcheck logitsMatchCpu's mixed rows (over 8.5)
  #   and recordedStepsEqualDirect (mixedDecodeMatchesCpu takes six, the gated delta rule's
  #   layout27b rows about five each at nine at a time: docs/BENCHMARKS.md, twenty-sixth and
  #   twenty-ninth passes).
  # - The runs in NIWA_SANITIZE_SKIP (default test_cuda_model:recordedStepsEqualDirect:180+steps)
  #   are left out under every tool: that row's 30-step twin runs the same kernels and step
  #   layouts in a few minutes, the 180 steps in over ten.
  # - initcheck (NIWA_SANITIZE_TOOLS=initcheck, not in the default) checks niwa's kernels only,
  #   as racecheck does.
  # - `test` first also makes the synthetic models test_cuda_model and test_cuda_park read: made
  #   by the test itself under compute-sanitizer (a child niwa-engine mkmodel through QProcess),
  #   the run dies with SIGSEGV before its first CUDA call (seen under initcheck, twenty-ninth pass).
  local tool t jobs=${NIWA_SANITIZE_JOBS:-6} bad=0 r log runs limit left
  local deadline=${NIWA_SANITIZE_DEADLINE:-0} start=$SECONDS
  declare -A runs_of
  for tool in ${NIWA_SANITIZE_TOOLS:-memcheck racecheck}; do
    runs=$(sanitize_runs "$tool")
    runs_of[$tool]=$runs
    for t in $runs; do
      while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
      limit=${NIWA_SANITIZE_TIMEOUT:-500}
      if [ "$deadline" -gt 0 ]; then
        left=$((deadline - (SECONDS - start)))
        [ "$left" -ge 60 ] || continue
        [ "$left" -ge "$limit" ] || limit=$left
      fi
      sanitize_one "$tool" "$t" "$limit" &
    done
  done
  wait
  for tool in ${NIWA_SANITIZE_TOOLS:-memcheck racecheck}; do
    for t in ${runs_of[$tool]}; do
      log=$(sanitize_log "$tool" "$t")
      r=$(cat "$log.rc" 2>/dev/null || echo "not run")
      echo "$tool $t: exit $r, $(grep -E '(ERROR|RACECHECK) SUMMARY' "$log.log" 2>/dev/null | tail -n 1)"
      [ "$r" = 0 ] || bad=1
    done
  done
  return "$bad"
}

# sanitize_runs TOOL: the runs of one tool, a word each: a test binary, or for the binaries in
# NIWA_SANITIZE_SPLIT each data row as `-datatags` lists it (test:function or
# test:function:row, + for a space), less racecheck's NIWA_RACECHECK_SKIP (test:function).
sanitize_runs() {
  local tool=$1 t bin fn tag run skip s
  local split=" ${NIWA_SANITIZE_SPLIT-test_cuda_matmul test_cuda_model test_cuda_gated_delta_rule} "
  local skips=" ${NIWA_SANITIZE_SKIP-test_cuda_model:recordedStepsEqualDirect:180+steps} "
  [ "$tool" = racecheck ] && skips+="${NIWA_RACECHECK_SKIP-test_cuda_matmul:prefillPaths} "
  for t in ${NIWA_SANITIZE_TESTS:-$(cd build-gpu && ctest -L gpu -N | sed -n 's/^ *Test *#[0-9]*: //p' | sort)}; do
    if [[ "$t" == *:* || "$split" != *" $t "* ]]; then
      echo "$t"
      continue
    fi
    bin=$(sanitize_bin "$t")
    [ -n "$bin" ] || { echo "$t"; continue; }  # sanitize_one says there is no binary
    while read -r _ fn tag; do
      [ -n "$fn" ] || continue
      run="$t:$fn${tag:+:${tag// /+}}"
      skip=0
      for s in $skips; do [[ "$run" == "$s" || "$run" == "$s":* ]] && skip=1; done
      [ "$skip" = 1 ] || echo "$run"
    done < <("$bin" -datatags)
  done
}

# sanitize_log TOOL TEST: where a run's log (.log) and exit status (.rc) go, less the suffix:
# $out/sanitize-TOOL-NAME, NAME being TEST with - for : and +.
sanitize_log() {
  echo "$out/sanitize-$1-$(tr ':+' '--' <<<"$2")"
}

# sanitize_one TOOL TEST SECONDS: one compute-sanitizer run (sanitize_log says where), cut after
# SECONDS. TEST may name one test function and a data row of it, as QtTest takes them, with + for
# a space: test_cuda_matmul:realShapes:PQ2_0T+mixed runs `test_cuda_matmul "realShapes:PQ2_0T mixed"`.
sanitize_one() {
  local tool=$1 t=$2 seconds=$3 bin r=0 args=() fn=() log
  log=$(sanitize_log "$tool" "$t")
  [[ "$t" == *:* ]] && fn=("$(tr + ' ' <<<"${t#*:}")")
  bin=$(sanitize_bin "${t%%:*}")
  if [ -z "$bin" ]; then
    echo "no binary (run.sh test first)" >"$log.log"
    echo 1 >"$log.rc"
    return
  fi
  [ "$tool" = memcheck ] && [ "${t%%:*}" = test_cuda_memory ] && args+=(--report-api-errors no)
  # racecheck and initcheck check niwa's kernels, not cuBLAS's (whose split-K reduce reads its
  # own workspace before writing it) nor NCCL's.
  [ "$tool" = memcheck ] || args+=(--kernel-name kns=niwa)
  local gemm=${NIWA_PREFILL_GEMM:-}
  [ "$tool" = racecheck ] && gemm=tiles
  NIWA_PREFILL_GEMM=$gemm QTEST_FUNCTION_TIMEOUT=3600000 timeout "$seconds" \
    compute-sanitizer --tool "$tool" "${args[@]}" --error-exitcode 99 "$bin" "${fn[@]}" >"$log.log" 2>&1 || r=$?
  echo "$r" >"$log.rc"
}

# sanitize_bin TEST: the test binary's path under build-gpu, or nothing.
sanitize_bin() {
  find build-gpu -name "$1" -type f -perm -u+x | head -n 1
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
