#!/usr/bin/env python3
"""Where one kernel launch's warps stall, from Nsight Compute's source page.

  ncu_stalls.py source.csv [--top N]

source.csv is `ncu -i REP --page source --csv --print-source sass` of a report with one launch
profiled with `--set full` (run.sh stalls writes it). Prints the SASS lines with the most warp
stall samples, each with its share of all samples and its main stall reasons, then the samples
summed by opcode (LDG, LDS, STS, WGMMA, BAR, SHFL, ...) so a phase of the kernel (staging,
tile loop, cross-slice sum) can be told by its instructions. Then the kernel by region: the
SASS between its block barriers (BAR.SYNC) and its wait for the kernel before (ACQBULK, the PDL
wait), each with its share of the executed instructions and of the samples, its main stall
reasons and opcodes, and its instructions a trip (its instructions over the most common count
of its lines: a loop's trips times the warps that ran it). Stall reasons are whichever
columns of the page hold per-reason sample counts; their names differ between ncu versions,
so the header is printed when no total column is found.
"""
import collections
import csv
import sys


def number(text):
    text = text.replace(",", "").strip()
    try:
        return float(text)
    except ValueError:
        return None


def read_rows(path):
    with open(path, newline="") as f:
        lines = [line for line in f if line.strip() and not line.startswith("==")]
    # The page may start with a kernel heading before the CSV header: take the first line that
    # names both an address and a source column as the header.
    start = next((i for i, line in enumerate(lines) if "Source" in line and "Address" in line), None)
    if start is None:
        sys.exit("no header with Address and Source columns; first lines:\n" + "".join(lines[:5]))
    reader = csv.reader(lines[start:])
    header = next(reader)
    return header, [row for row in reader if len(row) == len(header)]


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    top = 30
    if "--top" in args:
        top = int(args[args.index("--top") + 1])
    header, rows = read_rows(args[0])
    col = {name: i for i, name in enumerate(header)}
    total_col = next((n for n in header if n.startswith("Warp Stall Sampling (All")), None)
    if total_col is None:
        sys.exit("no 'Warp Stall Sampling (All Samples)' column; header:\n" + "\n".join(header))
    # Per-reason sample columns: numeric columns named for a stall, other than the totals.
    reasons = [n for n in header if ("stall" in n.lower() or n.startswith("smsp__pcsamp")) and
               not n.startswith("Warp Stall Sampling")]
    samples = [(number(r[col[total_col]]) or 0.0, r) for r in rows]
    total = sum(s for s, _ in samples) or 1.0
    print(f"{len(rows)} SASS lines, {total:.0f} warp stall samples; reason columns: {len(reasons)}")
    print(f"\n# the {top} lines with the most samples")
    for s, r in sorted(samples, key=lambda x: -x[0])[:top]:
        by_reason = sorted(((number(r[col[n]]) or 0.0, n) for n in reasons), reverse=True)
        main_reasons = ", ".join(f"{n} {v / s:.0%}" for v, n in by_reason[:3] if v > 0 and s > 0)
        print(f"{s / total:6.1%}  {r[col['Address']]:>8}  {r[col['Source']].strip()[:70]:70}  {main_reasons}")
    by_op = collections.Counter()
    for s, r in samples:
        by_op[opcode(r[col["Source"]])] += s
    print("\n# samples by opcode")
    for op, s in by_op.most_common(20):
        print(f"{s / total:6.1%}  {op}")
    if "Instructions Executed" in col:
        print_regions(rows, col, total_col, reasons)


def opcode(source):
    words = source.split()
    if words and words[0].startswith("@"):  # a predicate guard
        words = words[1:]
    return words[0].split(".")[0] if words else "?"


def print_regions(rows, col, total_col, reasons):
    """The kernel cut at its block barriers and its PDL wait (each ends the region it closes)."""
    regions, start = [], 0
    for i, r in enumerate(rows):
        if opcode(r[col["Source"]]) in ("BAR", "ACQBULK"):
            regions.append((start, i))
            start = i + 1
    regions.append((start, len(rows) - 1))
    executed = [number(r[col["Instructions Executed"]]) or 0.0 for r in rows]
    sampled = [number(r[col[total_col]]) or 0.0 for r in rows]
    all_executed, all_sampled = sum(executed) or 1.0, sum(sampled) or 1.0
    print(f"\n# by region (cut at BAR and ACQBULK): {all_executed:.0f} instructions executed")
    for first, last in regions:
        inst = sum(executed[first:last + 1])
        if inst == 0:
            continue
        samp = sum(sampled[first:last + 1])
        counts = collections.Counter(executed[i] for i in range(first, last + 1) if executed[i] > 0)
        trips = counts.most_common(1)[0][0]
        why = collections.Counter()
        ops = collections.Counter()
        for i in range(first, last + 1):
            for n in reasons:
                if "Not Issued" not in n:
                    why[n] += number(rows[i][col[n]]) or 0.0
            ops[opcode(rows[i][col["Source"]])] += executed[i]
        why_total = sum(why.values()) or 1.0
        print(f"lines {first}-{last}: instructions {inst / all_executed:5.1%}, samples {samp / all_sampled:5.1%}, "
              f"{inst / trips:.0f} a trip of {trips:.0f}")
        print("    stalls: " + ", ".join(f"{n} {v / why_total:.0%}" for n, v in why.most_common(4)))
        print("    opcodes: " + ", ".join(f"{o} {v / trips:.0f}" for o, v in ops.most_common(8)))


if __name__ == "__main__":
    main()
