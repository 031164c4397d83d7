#!/usr/bin/env python3
"""The weight-stream probe's JSON lines (dataflow_chain.cu), a line of text each, so a call's
output tail holds every figure: the card and its copy rate, each timed form's share of it, each
stamped run's link split and staging cycles, and the checks summed (a check that failed first).

    tests/gpu/dataflow_summary.py FILE.jsonl [FILE.jsonl ...]
    tests/gpu/dataflow_summary.py --compare FILE.jsonl ...

--compare puts the runs of builds with different consumer warps side by side instead: a line a
form and ring depth (its share of the copy rate in each run, by build) and a line a stamped form
(each build's link split), then the checks summed, so two runs of three builds fit in a call's
output tail.
"""
import json
import sys

# The unrolled K-by-field tiles taken at run time ('a') name every later form's start.
BASE = "mma split, K by field, unrolled, every tile taken at run time"
STAMPS = ("link_us", "tiles_us", "staging_us", "release_us", "end_us", "wait_us")
CYCLES = ("ghz", "load_cycles", "rotate_cycles", "meet_cycles", "quantise_cycles")


def short(form):
    return "a" + form[len(BASE):] if form.startswith(BASE) else form


def records(path):
    """The file's JSON lines, and the text of the rows the CPU disagrees with."""
    out, rows = [], []
    for line in open(path, encoding="utf-8", errors="replace"):
        line = line.strip()
        if line.startswith("link "):
            rows.append(line)
        elif line.startswith("{"):
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                rows.append(f"unparsed: {line[:120]}")
    return out, rows


def check_failed(d):
    """As the probe judges it: any row off, or a recurrent link's rms error over 2e-3 of the state's."""
    return d.get("mismatches", 0) + d.get("off_rows", 0) > 0 or (d.get("recurrent", False) and d["rel_rms"] > 2e-3)


def split_text(d):
    """A stamped run's link split in µs."""
    return " ".join(f"{k[:-3]} {d[k]:.2f}" for k in STAMPS if k in d)


def compare(paths):
    """Each form's figures by build (consumer warps), runs in file order; returns the failed checks."""
    shares, stamps = {}, {}  # (form, slots) -> {warps: [%, ...]}; form -> {warps: split}
    checks = bad = 0
    for path in paths:
        recs, rows = records(path)
        for r in rows:
            print(f"{path.rsplit('/', 1)[-1]}: {r}")
        warps = next((d.get("consumer_warps", 8) for d in recs if "copy_gb_s" in d), None)
        for d in recs:
            if "check" in d:
                checks += 1
                bad += check_failed(d)
            elif "fraction" in d:
                shares.setdefault((short(d["form"]), d["slots"]), {}).setdefault(warps, []).append(
                    100 * d["fraction"])
            elif "link_us" in d and "form" in d and d.get("slots") == 4:
                stamps.setdefault(short(d["form"]).removesuffix(", stamped"), {})[warps] = split_text(d)
    for (form, slots), by in shares.items():
        cols = " | ".join(f"{w} warps " + " / ".join(f"{v:.1f}" for v in vs) for w, vs in sorted(by.items()))
        print(f"{form} | {slots} slots | {cols} %")
    for form, by in stamps.items():
        print(f"{form} stamped, 4 slots, us | " + " | ".join(f"{w} warps: {v}" for w, v in sorted(by.items())))
    print(f"checks {checks}, failed {bad}")
    return bad


def summarise(path):
    name = path.rsplit("/", 1)[-1]
    checks = bad = 0
    worst_rel = worst_row = 0.0
    recs, rows = records(path)
    for r in rows:
        print(f"{name}: {r}")
    for d in recs:
        if "check" in d:
            checks += 1
            bad += check_failed(d)
            worst_rel = max(worst_rel, d.get("rel_rms", 0.0))
            worst_row = max(worst_row, d.get("max_err_over_rms", 0.0))
        elif "fraction" in d:
            print(f"{name}: {short(d['form'])} | {d['slots']} slots | {d['us']:.1f} us | "
                  f"{100 * d['fraction']:.1f} %")
        elif "link_us" in d and "form" in d:
            cyc = " ".join(f"{k.replace('_cycles', '')} {d[k]:g}" for k in CYCLES if k in d)
            print(f"{name}: {short(d['form'])} | {d['slots']} slots | us: {split_text(d)}"
                  + (f" | {cyc}" if cyc else ""))
        elif "copy_gb_s" in d:
            print(f"{name}: {d.get('gpu')} | {d.get('sms')} SMs | copy {d['copy_gb_s']} GB/s"
                  + (f" | {d['consumer_warps']} consumer warps" if "consumer_warps" in d else "")
                  + (" | generic kernel" if d.get("generic") else ""))
    if checks:
        print(f"{name}: checks {checks}, failed {bad}, rotated forms' worst rms error {100 * worst_rel:.2f} %, "
              f"worst row {100 * worst_row:.1f} % of the rms")
    return bad


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1:] == ["--compare"]:
        sys.exit(__doc__)
    if sys.argv[1] == "--compare":
        failed = compare(sys.argv[2:])
    else:
        failed = sum(summarise(p) for p in sys.argv[1:])
    sys.exit(1 if failed else 0)
