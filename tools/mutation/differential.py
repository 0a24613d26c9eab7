"""Differential soundness: a mutant that `argus check` accepts must compute what the
kernel's reference computes. Each mutant (mutant.py) goes through the frontend and the
verifier's driver (argus.verify.driver.run, what `argus check` runs: accepted when its
Report.ok); only an accepted one runs on the interpreter (value mode, one seed) on every
shape of its target (targets.Target.all_shapes, tails included), then once more on the
first shape with the blocks run in reverse order (the interpreter runs blocks one after
another; a kernel whose blocks read what other blocks write unsynchronised is right in at
most one of the two orders), and any run that is not correct (wrong values, NaN, deadlock, fault, race, an interpreter error or timeout) makes
it a failure: verified but wrong. The verifier and each run have a wall-clock limit and
the interpreter a step budget, so a hang costs seconds.

Classes:
- frontend-rejected: the DSL refused the mutant with a diagnostic;
- caught: `argus check` reports an error;
- unverified: no error, but `argus check` does not accept it (the driver's verdict
  "unverified", once the exit status distinguishes it);
- verified-correct: accepted, every run matched the reference (equivalent or harmless);
- verified-but-wrong: accepted, a run gave wrong values, NaN, a deadlock, fault or race;
- verified-interp-error: accepted, the interpreter raised or ran out of time;
- frontend-crash / check-timeout / check-crash: a Python exception escaped the frontend
  or the verifier's driver, or the verifier ran past its limit (tool bugs, listed apart).
"""

from __future__ import annotations

import difflib
import time
from dataclasses import dataclass, field
from pathlib import Path

from tools.mutation.classify import CORRECT
from tools.mutation.runner import StageTimeout, run_once, time_limit
from tools.mutation.targets import Target

REJECTED = "frontend-rejected"
CAUGHT = "caught"
UNVERIFIED = "unverified"
VERIFIED_CORRECT = "verified-correct"
VERIFIED_WRONG = "verified-but-wrong"
INTERP_ERROR = "verified-interp-error"
FRONTEND_CRASH = "frontend-crash"
CHECK_TIMEOUT = "check-timeout"
CHECK_CRASH = "check-crash"
CLASSES = (REJECTED, CAUGHT, UNVERIFIED, VERIFIED_CORRECT, VERIFIED_WRONG, INTERP_ERROR,
           FRONTEND_CRASH, CHECK_TIMEOUT, CHECK_CRASH)
TOOL_PROBLEMS = (FRONTEND_CRASH, CHECK_TIMEOUT, CHECK_CRASH)
FAILURES = (VERIFIED_WRONG, INTERP_ERROR)

CHECK_SECONDS = 30          # wall-clock limit of `argus check` on one mutant
RUN_SECONDS = 20            # ... and of one interpreter run
SEED = 0
INTERP_ERRORS = ("error", "timeout")   # run outcomes that are the interpreter's own


@dataclass
class ShapeRun:
    shapes: dict
    outcome: str            # tools.mutation.classify.RUN_OUTCOMES
    detail: str = ""

    def to_json(self) -> dict:
        return {"shapes": self.shapes, "outcome": self.outcome, "detail": self.detail}


@dataclass
class Differential:
    """What `argus check` and the interpreter said about one mutated source."""
    cls: str
    message: str = ""                                    # frontend message or crash
    verdict: str = ""                                    # the driver's verdict
    errors: list = field(default_factory=list)           # ["check at file:line: message"]
    warnings: list = field(default_factory=list)         # ["check at line N"]
    runs: list = field(default_factory=list)             # [ShapeRun]
    check_seconds: float = 0.0
    run_seconds: float = 0.0

    @property
    def failed(self) -> bool:
        return self.cls in FAILURES

    @property
    def evidence(self) -> str:
        """The first run that was not correct, in one line."""
        bad = next((r for r in self.runs if r.outcome != CORRECT), None)
        if bad is None:
            return ""
        shape = ",".join(f"{k}={v}" for k, v in bad.shapes.items())
        return f"{bad.outcome} at {shape}: {bad.detail}".rstrip(": ")

    def to_json(self) -> dict:
        return {"class": self.cls, "message": self.message, "verdict": self.verdict,
                "verifier_errors": self.errors, "verifier_warnings": self.warnings,
                "runs": [r.to_json() for r in self.runs],
                "check_seconds": round(self.check_seconds, 3),
                "run_seconds": round(self.run_seconds, 3)}


def parse(target: Target, source: str):
    """The mutated file's kernel, or the Differential of a mutant the frontend refused."""
    from argus.frontend import parse_source
    from argus.frontend.errors import DSLError

    try:
        return parse_source(source, str(Path(target.path)), target.overrides)[target.kernel]
    except DSLError as err:
        return Differential(REJECTED, f"{err.loc}: {err.message}")
    except Exception as err:  # a Python error escaping the frontend is a frontend bug
        return Differential(FRONTEND_CRASH, f"{type(err).__name__}: {err}")


def check_then_run(target: Target, source: str, check_seconds: int = CHECK_SECONDS,
                   run_seconds: int = RUN_SECONDS) -> Differential:
    """`argus check` on `source` (the whole mutated file of `target`); if it accepts,
    the interpreter on each of the target's shapes until one run is not correct."""
    kernel = parse(target, source)
    if isinstance(kernel, Differential):
        return kernel
    return check_kernel_then_run(target, kernel, check_seconds, run_seconds)


def check_kernel_then_run(target: Target, kernel, check_seconds: int = CHECK_SECONDS,
                          run_seconds: int = RUN_SECONDS) -> Differential:
    from argus.verify.driver import run as check

    start = time.perf_counter()
    try:
        with time_limit(check_seconds):
            report = check(kernel)
    except StageTimeout as err:
        return Differential(CHECK_TIMEOUT, f"argus check ran {err}",
                            check_seconds=time.perf_counter() - start)
    except Exception as err:  # the driver itself failed: a verifier bug, never a pass
        return Differential(CHECK_CRASH, f"{type(err).__name__}: {err}",
                            check_seconds=time.perf_counter() - start)
    out = Differential("", check_seconds=time.perf_counter() - start)
    out.errors = [f"{f.check} at {f.loc.file}:{f.loc.line}: {f.message}"
                  for f in report.findings if f.severity == "error"]
    out.warnings = sorted({f"{f.check} at line {f.loc.line}" for f in report.findings
                           if f.severity != "error"})
    out.verdict = getattr(report, "verdict", "verified" if report.ok else "failed")
    if out.errors:
        out.cls = CAUGHT
        return out
    if not report.ok:
        out.cls = UNVERIFIED
        return out
    start = time.perf_counter()
    for shapes in target.all_shapes:
        r = run_once(target, kernel, "value", SEED, shapes, run_seconds)
        out.runs.append(ShapeRun(shapes, r.outcome, r.detail))
        if r.outcome != CORRECT:
            break
    else:           # the blocks the other way round: a race between blocks shows
        shapes = target.all_shapes[0]
        r = run_once(target, kernel, "value", SEED, shapes, run_seconds, reverse_blocks=True)
        out.runs.append(ShapeRun({**shapes, "blocks": "reversed"}, r.outcome, r.detail))
    out.run_seconds = time.perf_counter() - start
    bad = [r for r in out.runs if r.outcome != CORRECT]
    out.cls = VERIFIED_CORRECT if not bad else \
        INTERP_ERROR if bad[0].outcome in INTERP_ERRORS else VERIFIED_WRONG
    return out


def unified_diff(original: str, mutated: str, path: str) -> str:
    """The mutant as a diff of its file (one line of context)."""
    return "".join(difflib.unified_diff(original.splitlines(keepends=True),
                                        mutated.splitlines(keepends=True),
                                        f"a/{path}", f"b/{path}", n=1))
