#!/usr/bin/env python3
"""The weight-stream probe's JSON lines (dataflow_chain.cu), a line of text each, so a call's
output tail holds every figure: the card and its copy rate, each timed form's share of it, each
stamped run's link split and staging cycles, and the checks summed (a check that failed first).

    tests/gpu/dataflow_summary.py FILE.jsonl [FILE.jsonl ...]
"""
import json
import sys

# The unrolled K-by-field tiles taken at run time ('a') name every later form's start.
BASE = "mma split, K by field, unrolled, every tile taken at run time"
STAMPS = ("link_us", "tiles_us", "staging_us", "release_us", "end_us", "wait_us")
CYCLES = ("ghz", "load_cycles", "rotate_cycles", "meet_cycles", "quantise_cycles")


def short(form):
    return "a" + form[len(BASE):] if form.startswith(BASE) else form


def summarise(path):
    name = path.rsplit("/", 1)[-1]
    checks = bad = 0
    worst_rel = worst_row = 0.0
    for line in open(path, encoding="utf-8", errors="replace"):
        line = line.strip()
        if not line.startswith("{"):
            if line.startswith("link "):  # a row the CPU disagrees with
                print(f"{name}: {line}")
            continue
        try:
            d = json.loads(line)
        except json.JSONDecodeError:
            print(f"{name}: unparsed: {line[:120]}")
            continue
        if "check" in d:
            checks += 1
            wrong = d.get("mismatches", 0) + d.get("off_rows", 0)
            bad += wrong > 0
            worst_rel = max(worst_rel, d.get("rel_rms", 0.0))
            worst_row = max(worst_row, d.get("max_err_over_rms", 0.0))
        elif "fraction" in d:
            print(f"{name}: {short(d['form'])} | {d['slots']} slots | {d['us']:.1f} us | "
                  f"{100 * d['fraction']:.1f} %")
        elif "link_us" in d and "form" in d:
            split = " ".join(f"{k[:-3]} {d[k]:.2f}" for k in STAMPS if k in d)
            cyc = " ".join(f"{k.replace('_cycles', '')} {d[k]:g}" for k in CYCLES if k in d)
            print(f"{name}: {short(d['form'])} | {d['slots']} slots | us: {split}" + (f" | {cyc}" if cyc else ""))
        elif "copy_gb_s" in d:
            print(f"{name}: {d.get('gpu')} | {d.get('sms')} SMs | copy {d['copy_gb_s']} GB/s"
                  + (f" | {d['consumer_warps']} consumer warps" if "consumer_warps" in d else "")
                  + (" | generic kernel" if d.get("generic") else ""))
    if checks:
        print(f"{name}: checks {checks}, failed {bad}, rotated forms' worst rms error {100 * worst_rel:.2f} %, "
              f"worst row {100 * worst_row:.1f} % of the rms")
    return bad


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    failed = sum(summarise(p) for p in sys.argv[1:])
    sys.exit(1 if failed else 0)
