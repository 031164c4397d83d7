#!/usr/bin/env python3
"""The card's SM clock, power and temperature while a probe ran: nvidia-smi's samples
(`--query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv,noheader,nounits -lms N`)
inside the launches' span that the probe printed ({"from_ms": .., "to_ms": ..} on a line of its own).

    tests/gpu/clock_summary.py SAMPLES.csv SPAN.json
"""
import json
import statistics
import sys
from datetime import datetime


def main(samples_path, span_path):
    span = None
    for line in open(span_path, encoding="utf-8", errors="replace"):
        if line.startswith("{") and "from_ms" in line:
            span = json.loads(line)
    if span is None:
        sys.exit(f"{span_path}: no launch span (was NIWA_DATAFLOW_LAUNCHES set?)")
    clocks, powers, temps = [], [], []
    for line in open(samples_path, encoding="utf-8", errors="replace"):
        parts = [p.strip() for p in line.split(",")]
        if len(parts) < 4:
            continue
        try:
            # nvidia-smi's local time, as the probe's epoch milliseconds are read in the same zone.
            at = datetime.strptime(parts[0], "%Y/%m/%d %H:%M:%S.%f").timestamp() * 1e3
            clock, power, temp = float(parts[1]), float(parts[2]), float(parts[3])
        except ValueError:
            continue
        if span["from_ms"] <= at <= span["to_ms"]:
            clocks.append(clock)
            powers.append(power)
            temps.append(temp)
    if not clocks:
        sys.exit(f"{samples_path}: no sample inside the launches' span")
    print(f"{span['form']}: {len(clocks)} samples over {(span['to_ms'] - span['from_ms']) / 1e3:.1f} s, "
          f"{span['launches']} launches | SM clock MHz median {statistics.median(clocks):.0f}, "
          f"min {min(clocks):.0f} | power W median {statistics.median(powers):.0f}, max {max(powers):.0f} | "
          f"temperature C max {max(temps):.0f}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
