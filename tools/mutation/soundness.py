"""The differential soundness fuzz over targets: every mutant (or a chosen few) through
differential.py, one report row each, with the per-kernel timing.

Mutants whose kernel IR (argus.ir.printer.format_kernel, without locations) is one
already seen share its result: an edit in code the target's specialisation does not
compile (the cluster branch of the library GEMM at CM = 1, say) gives the unmutated
kernel's IR, so it inherits the unmutated kernel's verdict and runs (`same_ir_as`).
Nothing is skipped otherwise: the verdict and the runs depend on the IR alone."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Callable, Iterable

from tools.mutation.causes import cause_of
from tools.mutation.differential import (CORRECT, FAILURES, RUN_SECONDS, SEED, UNVERIFIED,
                                         VERIFIED_CORRECT, Differential, ShapeRun,
                                         check_kernel_then_run, parse, run_once,
                                         unified_diff)
from tools.mutation.mutant import generate_mutants
from tools.mutation.sample import keys
from tools.mutation.targets import TARGETS

SCHEMA = "argus.soundness/1"


class BaselineError(Exception):
    pass


def keyed_mutants(names: Iterable[str]) -> dict:
    """{key: mutant} over the targets `names` (sample.py's stable keys)."""
    out = {}
    for name in names:
        out.update(keys(generate_mutants(TARGETS[name])))
    return out


def fuzz(names: Iterable[str], select: Callable[[str], bool] | None = None,
         progress: Callable[[dict], None] | None = None) -> dict:
    """The soundness report over targets `names`: each one's unmutated kernel must verify
    and run correctly (else BaselineError), then every mutant whose key `select` accepts
    (default all) gets a row."""
    from argus.ir.printer import format_kernel

    names = list(names)
    rows, targets = [], {}
    for name in names:
        target = TARGETS[name]
        source = target.source()
        start = time.perf_counter()
        base = baseline(name)
        seen = {format_kernel(parse(target, source)): ("unmutated", base)}
        baseline_warnings = set(base.warnings)
        for key, mutant in keys(generate_mutants(target)).items():
            if select is not None and not select(key):
                continue
            t0 = time.perf_counter()
            kernel = parse(target, mutant.source)
            same = None
            if isinstance(kernel, Differential):
                result = kernel
            else:
                ir = format_kernel(kernel)
                if ir in seen:
                    same, result = seen[ir]
                    result = replace(result, check_seconds=0.0, run_seconds=0.0)
                else:
                    result = check_kernel_then_run(target, kernel)
                    seen[ir] = (mutant.id, result)
            row = mutant.to_json()
            row.update(key=key, **result.to_json(), same_ir_as=same,
                       new_warnings=sorted(set(result.warnings) - baseline_warnings),
                       evidence=result.evidence, seconds=round(time.perf_counter() - t0, 3))
            if result.failed:
                cause = cause_of(row)
                row.update(cause=cause.label, issue_class=cause.issue_class,
                           diff=unified_diff(source, mutant.source, target.path))
            rows.append(row)
            if progress:
                progress(row)
        targets[name] = target_info(name, base, time.perf_counter() - start)
    return {"schema": SCHEMA, "targets": targets, "mutants": rows}


def baseline(name: str) -> Differential:
    """The unmutated kernel's result; BaselineError unless it runs correctly on every
    shape and verifies, or is unverified (a warning says what is not proved, no error):
    such a target's mutants are fuzzed all the same (one that loses the warnings and
    verifies runs on the interpreter like any other)."""
    target = TARGETS[name]
    kernel = parse(target, target.source())
    base = check_kernel_then_run(target, kernel)
    if base.cls == UNVERIFIED:
        for shapes in target.all_shapes:
            r = run_once(target, kernel, "value", SEED, shapes, RUN_SECONDS)
            base.runs.append(ShapeRun(shapes, r.outcome, r.detail))
        if all(r.outcome == CORRECT for r in base.runs):
            return base
        base.evidence = "; ".join(f"{r.outcome}: {r.detail}" for r in base.runs
                                  if r.outcome != CORRECT)
    if base.cls not in (VERIFIED_CORRECT, UNVERIFIED):
        raise BaselineError(f"{target.path}::{target.kernel} itself is {base.cls}: "
                            f"{base.errors or base.warnings or base.evidence}; fix it "
                            f"before fuzzing it")
    return base


def target_info(name: str, base: Differential, seconds: float) -> dict:
    target = TARGETS[name]
    return {"file": target.path, "kernel": target.kernel,
            "shapes": [dict(s) for s in target.all_shapes], "overrides": target.overrides,
            "baseline": base.cls, "baseline_warnings": base.warnings,
            "seconds": round(seconds, 1)}


def from_rows(streams: list[list[dict]]) -> dict:
    """A report from the streamed rows of one or more runs (interrupted, or run side by side
    on different targets): each target's rows from the stream holding most of them, each
    baseline re-checked; partial unless every target has a row for each of its mutants."""
    best: dict[str, list] = {}
    for rows in streams:
        for name in dict.fromkeys(r["target"] for r in rows):
            mine = [r for r in rows if r["target"] == name]
            if len(mine) > len(best.get(name, [])):
                best[name] = mine
    names = [n for n in TARGETS if n in best]
    targets = {n: target_info(n, baseline(n), sum(r["seconds"] for r in best[n]))
               for n in names}
    complete = set(names) == set(TARGETS) and all(
        len(best[n]) == len(generate_mutants(TARGETS[n])) for n in names)
    return {"schema": SCHEMA, "targets": targets,
            "mutants": [r for n in names for r in best[n]], "partial": not complete}


def annotate(report: dict) -> None:
    """(Re)compute every failure's cause from causes.py (it may have changed since the run);
    a row sharing an earlier mutant's IR ran nothing: no check or run seconds of its own."""
    for row in report["mutants"]:
        if row.get("same_ir_as"):
            row["check_seconds"] = row["run_seconds"] = 0.0
    for row in failures(report):
        cause = cause_of(row)
        row.update(cause=cause.label, issue_class=cause.issue_class)


def failures(report: dict) -> list[dict]:
    return [r for r in report["mutants"] if r["class"] in FAILURES]
