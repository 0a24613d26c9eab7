"""The hottest SASS instructions of one kernel in an Nsight Compute source page exported as
CSV (`ncu --import REP --kernel-name K --page source --print-source sass --csv`): each line
the instruction's share of the warp-state samples, its address and its text.
    python3 scripts/ncu_sass_hot.py FILE.csv [N]      (N: how many, default 22)"""
import csv
import sys


def num(x: str) -> float:
    try:
        return float(x.replace(",", ""))
    except ValueError:
        return 0.0


def main() -> int:
    rows = list(csv.reader(open(sys.argv[1])))
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 22
    head = next((i for i, r in enumerate(rows) if any(c.startswith("Source") for c in r)), None)
    if head is None:                     # not a source page: show what ncu said instead
        print("\n".join(",".join(r)[:200] for r in rows[:8]))
        return 1
    cols = rows[head]
    samples = ([i for i, c in enumerate(cols) if "Sampling" in c and "All" in c]
               or [i for i, c in enumerate(cols) if "Sampling" in c])
    src = next(i for i, c in enumerate(cols) if c.startswith("Source"))
    body = [r for r in rows[head + 1:] if len(r) == len(cols)]
    total = sum(num(r[samples[0]]) for r in body) or 1
    for r in sorted(body, key=lambda r: -num(r[samples[0]]))[:count]:
        print(f"{num(r[samples[0]]) / total:6.1%}", r[0][:8], r[src][:100])
    return 0


if __name__ == "__main__":
    sys.exit(main())
