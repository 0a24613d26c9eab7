"""Differential soundness fuzz of the verifier: every mutant of every example and library
kernel that `argus check` accepts runs on the interpreter (value mode) on each of its
target's shapes, tails included; one that computes a wrong answer, NaN, deadlocks or
errors is a failure (tools/mutation/differential.py, soundness.py).

    nice -n 10 python benchmarks/soundness_report.py          # every target, ~30-45 min
    python benchmarks/soundness_report.py --targets copy moe_combine
    python benchmarks/soundness_report.py --sample            # the CI sample only
    python benchmarks/soundness_report.py --markdown-only     # re-render from the JSON

Writes benchmarks/results/soundness-report.json (every mutant: key, operator, file:line,
the one-line change, the verdict, the findings, each run; for a failure its diff, its
evidence and its cause) and docs/soundness-report.md. Exit 1 when a verified mutant is
wrong, 0 when none is. One process: the interpreter runs are small and each is bounded.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

JSON_OUT = ROOT / "benchmarks" / "results" / "soundness-report.json"
MD_OUT = ROOT / "docs" / "soundness-report.md"


def _commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, text=True,
                              capture_output=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def _shown(path: Path) -> str:
    path = path.resolve()
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def main(argv=None) -> int:
    from tools.mutation.soundness import BaselineError, annotate, failures, fuzz
    from tools.mutation.soundness_md import render
    from tools.mutation.targets import TARGETS

    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--targets", nargs="+", default=list(TARGETS), choices=list(TARGETS))
    parser.add_argument("--sample", action="store_true",
                        help="only the CI sample (tests/tools/test_soundness_sample.py)")
    parser.add_argument("--json", type=Path, default=JSON_OUT)
    parser.add_argument("--markdown", type=Path, default=MD_OUT)
    parser.add_argument("--stream", type=Path, default=None,
                        help="also append each mutant's row to this JSON-lines file")
    parser.add_argument("--markdown-only", action="store_true",
                        help="run nothing: re-render the markdown from the JSON")
    parser.add_argument("--from-stream", type=Path, nargs="+", default=None, metavar="JSONL",
                        help="run nothing: the report of the --stream rows of one or more "
                             "runs (interrupted, or side by side on different targets); "
                             "marked partial unless every mutant has a row")
    parser.add_argument("--note", default=None, help="a sentence for the report's header "
                        "(how it was run)")
    args = parser.parse_args(argv)
    if args.markdown_only:
        report = json.loads(args.json.read_text())
    elif args.from_stream:
        from tools.mutation.soundness import from_rows
        streams = [[json.loads(line) for line in path.read_text().splitlines()]
                   for path in args.from_stream]
        report = from_rows(streams)
        report.update(date=dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
                      commit=_commit(), processes=len(streams), sample=False,
                      seconds=round(sum(r["seconds"] for r in report["mutants"])))
    else:
        select = None
        if args.sample:
            from tools.mutation.sample import SAMPLE_SIZE, seeded_sample
            from tools.mutation.soundness import keyed_mutants
            chosen = set(seeded_sample(keyed_mutants(args.targets), SAMPLE_SIZE))
            select = chosen.__contains__
        sink = args.stream.open("w") if args.stream else None
        start, count = time.perf_counter(), [0]

        def progress(row):
            count[0] += 1
            if sink:
                sink.write(json.dumps(row) + "\n")
                sink.flush()
            if count[0] % 50 == 0:
                print(f"{count[0]} mutants, {time.perf_counter() - start:.0f} s", flush=True)

        stamp = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
        commit = _commit()      # the code this run imports now, not what lands while it runs
        try:
            report = fuzz(args.targets, select, progress)
        except BaselineError as err:
            print(f"soundness_report: {err}", file=sys.stderr)
            return 2
        finally:
            if sink:
                sink.close()
        report.update(date=stamp, commit=commit, processes=1,
                      seconds=round(time.perf_counter() - start), sample=args.sample)
        args.json.parent.mkdir(parents=True, exist_ok=True)
    if args.note:
        report["note"] = args.note
    annotate(report)
    args.json.write_text(json.dumps(report, indent=1) + "\n")
    args.markdown.write_text(render(report))
    print(f"wrote {_shown(args.json)}\nwrote {_shown(args.markdown)}")
    bad = failures(report)
    for row in bad:
        print(f"VERIFIED BUT WRONG: {row['id']} {row['file']}:{row['line']}: {row['after']} "
              f"({row['evidence']})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
