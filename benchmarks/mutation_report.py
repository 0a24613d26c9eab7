"""Mutation testing of the verifier: mutate the correct kernels, run the frontend, the
verifier and the interpreter on every mutant, and report what was caught and what not.

    python benchmarks/mutation_report.py                 # every target, 2 processes
    python benchmarks/mutation_report.py --targets copy gemm --jobs 1
    python benchmarks/mutation_report.py --markdown-only # re-explain the JSON, re-render the .md

Writes benchmarks/results/mutation-report.json (every mutant: id, operator, file:line,
the one-line diff, what each tool said, its class) and docs/mutation-report.md (tables per
kernel and operator; every missed bug and every flagged-but-correct mutant with the
explanation of tools/mutation/explain.py). Exit 1 when a missed bug is unexplained.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import multiprocessing
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

JSON_OUT = ROOT / "benchmarks" / "results" / "mutation-report.json"
MD_OUT = ROOT / "docs" / "mutation-report.md"
SCHEMA = "argus.mutation/1"

_mutants: dict[str, list] = {}


def _mutants_of(name: str):
    from tools.mutation import generate_mutants
    from tools.mutation.targets import TARGETS
    if name not in _mutants:
        _mutants[name] = generate_mutants(TARGETS[name])
    return _mutants[name]


def _run_one(job: tuple[str, int]) -> dict:
    from tools.mutation import classify
    from tools.mutation.runner import observe
    from tools.mutation.targets import TARGETS

    name, index = job
    mutant = _mutants_of(name)[index]
    start = time.perf_counter()
    obs = observe(TARGETS[name], mutant.source)
    row = mutant.to_json()
    row.update({"class": classify(obs), "frontend": obs.frontend,
                "frontend_message": obs.frontend_message,
                "verifier_errors": obs.verifier_errors,
                "verifier_warnings": obs.verifier_warnings,
                "verifier_crash": obs.verifier_crash,
                "runs": [r.to_json() for r in obs.runs],
                "seconds": round(time.perf_counter() - start, 2)})
    return row


def run(targets: list[str], jobs: int, limit: int | None, stream: Path | None = None) -> dict:
    from tools.mutation.runner import observe
    from tools.mutation.targets import TARGETS
    from tools.mutation import classify

    baseline, warnings = {}, {}
    for name in targets:   # the unmutated kernels must verify clean and run correctly
        obs = observe(TARGETS[name], TARGETS[name].source())
        baseline[name], warnings[name] = classify(obs), obs.verifier_warnings
        if baseline[name] != "equivalent":
            raise SystemExit(f"{TARGETS[name].path}::{TARGETS[name].kernel} itself is "
                             f"{baseline[name]}: {obs.verifier_errors or obs.runs}; fix it "
                             f"before mutating it")
    work = [(name, i) for name in targets
            for i in range(len(_mutants_of(name)))][:limit]
    start = time.perf_counter()
    rows = []
    sink = stream.open("w") if stream else contextlib.nullcontext()
    with sink, multiprocessing.get_context("fork").Pool(jobs, maxtasksperchild=50) as pool:
        for n, row in enumerate(pool.imap(_run_one, work, chunksize=2), 1):
            rows.append(row)
            if stream:
                sink.write(json.dumps(row) + "\n")
                sink.flush()
            if n % 25 == 0 or n == len(work):
                print(f"{n}/{len(work)} mutants, {time.perf_counter() - start:.0f} s",
                      flush=True)
    return {"schema": SCHEMA,
            "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "commit": _commit(), "jobs": jobs, "seconds": round(time.perf_counter() - start),
            "targets": {name: {"file": TARGETS[name].path, "kernel": TARGETS[name].kernel,
                               "shapes": TARGETS[name].shapes,
                               "overrides": TARGETS[name].overrides,
                               "baseline": baseline[name],
                               "baseline_warnings": warnings[name]} for name in targets},
            "runs_per_mutant": ["value seed 0", "value seed 1", "exact seed 2"],
            "mutants": rows}


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
    from tools.mutation.report import annotate, render_markdown, unexplained_missed
    from tools.mutation.targets import TARGETS

    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--targets", nargs="+", default=list(TARGETS), choices=list(TARGETS))
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--limit", type=int, default=None, help="run only the first N")
    parser.add_argument("--json", type=Path, default=JSON_OUT)
    parser.add_argument("--markdown", type=Path, default=MD_OUT)
    parser.add_argument("--stream", type=Path, default=None,
                        help="also append each mutant's row to this JSON-lines file as it ends")
    parser.add_argument("--markdown-only", action="store_true",
                        help="run nothing: re-explain the JSON's rows, rewrite it and the "
                             "markdown")
    args = parser.parse_args(argv)
    if args.markdown_only:     # re-explain the rows of an earlier run (explain.py changed)
        report = json.loads(args.json.read_text())
    else:
        report = run(args.targets, args.jobs, args.limit, args.stream)
    annotate(report)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=1) + "\n")
    print(f"wrote {_shown(args.json)}")
    args.markdown.write_text(render_markdown(report))
    print(f"wrote {_shown(args.markdown)}")
    missing = unexplained_missed(report)
    for row in missing:
        print(f"UNEXPLAINED missed bug: {row['id']} {row['file']}:{row['line']}: {row['after']}")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
