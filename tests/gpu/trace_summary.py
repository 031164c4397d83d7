#!/usr/bin/env python3
"""Where a decode step's time goes, from tests/gpu/kernel_trace.cpp's CSV.

  trace_summary.py kernel-trace.csv [--top N] [--list N]

A step is one graph launch (its kernels share a correlation id); the steps kept are those with
the most common kernel count among groups of 30 kernels or more. Kernels launched to overlap
(PDL) start before the one ahead of them ends, so a kernel's cost to the step is taken as
end - the previous kernel's end ("adds"), which sums to the step's span; "runs" is end - start.
"""
import collections
import re
import shutil
import statistics
import subprocess
import sys


def demangle(names):
    if not shutil.which("c++filt"):
        return {n: n for n in names}
    r = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True)
    return dict(zip(names, r.stdout.splitlines()))


def short(name):
    name = re.sub(r"niwa::kernels::cuda::|\(anonymous namespace\)::|niwa::kernels::", "", name)
    name = re.sub(r"\(.*\)$", "", name)
    name = re.sub(r"^void ", "", name)
    name = re.sub(r"std::integral_constant<int, (\d+)>", r"\1", name)
    return name.replace("(DType)", "").replace("DType::", "")


def main():
    path = sys.argv[1]
    top = int(sys.argv[sys.argv.index("--top") + 1]) if "--top" in sys.argv else 40
    listed = int(sys.argv[sys.argv.index("--list") + 1]) if "--list" in sys.argv else 40
    groups = collections.defaultdict(list)
    with open(path) as f:
        for line in f:
            p = line.rstrip("\n").split(",", 9)
            if len(p) < 10:
                continue
            start, end, corr, graph, gx, gy, gz, block, regs = map(int, p[:9])
            groups[corr].append((start, end, gx, gy, gz, block, regs, p[9]))
    big = {c: sorted(k) for c, k in groups.items() if len(k) >= 30}
    if not big:
        print("no graph launches of 30 kernels or more in", path)
        return
    mode = statistics.mode(len(k) for k in big.values())
    steps = sorted((k for k in big.values() if len(k) == mode), key=lambda k: k[0][0])
    names = demangle(sorted({k[7] for s in steps for k in s}))
    spans = [s[-1][1] - s[0][0] for s in steps]
    gaps = [b[0][0] - a[-1][1] for a, b in zip(steps, steps[1:])]
    print(f"{len(steps)} steps of {mode} kernels; span median {statistics.median(spans) / 1e3:.1f} us, "
          f"min {min(spans) / 1e3:.1f}; gap between steps median "
          f"{(statistics.median(gaps) / 1e3 if gaps else 0):.1f} us")
    # The median step, kernel by kernel.
    med = sorted(steps, key=lambda s: s[-1][1] - s[0][0])[len(steps) // 2]
    adds = collections.defaultdict(float)
    runs = collections.defaultdict(float)
    calls = collections.defaultdict(int)
    idle = 0
    prev_end = med[0][0]
    for k in med:
        key = f"{short(names[k[7]])} grid {k[2]}x{k[3]}x{k[4]} blk {k[5]} r{k[6]}"
        adds[key] += max(0, k[1] - prev_end)
        runs[key] += k[1] - k[0]
        calls[key] += 1
        idle += max(0, k[0] - prev_end)
        prev_end = max(prev_end, k[1])
    span = med[-1][1] - med[0][0]
    print(f"median step: span {span / 1e3:.1f} us, no kernel running {idle / 1e3:.1f} us")
    print(f"{'adds us':>9} {'share':>6} {'calls':>5} {'runs us':>9}  kernel")
    for key in sorted(adds, key=lambda x: -adds[x])[:top]:
        print(f"{adds[key] / 1e3:9.1f} {100 * adds[key] / span:5.1f}% {calls[key]:5d} {runs[key] / 1e3:9.1f}  {key}")
    # By kernel name alone.
    by = collections.defaultdict(lambda: [0.0, 0])
    for key, v in adds.items():
        n = key.split(" grid")[0].split("<")[0]
        by[n][0] += v
        by[n][1] += calls[key]
    print("\nby kernel:")
    for n, (v, c) in sorted(by.items(), key=lambda x: -x[1][0]):
        print(f"{v / 1e3:9.1f} {100 * v / span:5.1f}% {c:5d}  {n}")
    # The first layers of the median step in order.
    print(f"\nthe median step's first {listed} kernels (start, end relative to the step, runs, adds; us):")
    t0 = med[0][0]
    prev_end = t0
    for k in med[:listed]:
        print(f"{(k[0] - t0) / 1e3:8.1f} {(k[1] - t0) / 1e3:8.1f} {(k[1] - k[0]) / 1e3:7.1f} "
              f"{max(0, k[1] - prev_end) / 1e3:6.1f}  "
              f"{short(names[k[7]])[:90]} {k[2]}x{k[3]}")
        prev_end = max(prev_end, k[1])


if __name__ == "__main__":
    main()
