"""The verifier: every pass over one kernel, findings sorted and deduplicated.

Passes: the tag pass (argus.verify.tags: data-flow invariants, GEMM invariants, stores,
tag_assert), the protocol pass (argus.verify.protocol) and the resource pass
(argus.verify.resources), the last two when they are installed, and the vacuity pass
(argus.verify.vacuity: satisfiable assumptions, loops that run). A pass that crashes is
reported as a warning finding naming it, never as a clean result. Every error whose
counterexample names a concrete point is replayed (argus.verify.replay) before it is
reported; one that does not replay becomes a `verify.replay` warning, a defect of the
verifier, never the user's bug.

The verdict of a kernel: "failed" when a finding is an error; "unverified" when a
warning leaves something unproved (`Finding.unproved`: not modelled, undecided, a crashed
pass, a counterexample that did not replay) or a pass is not installed; "verified"
otherwise. `Report.ok` is true only for "verified".
"""

from __future__ import annotations

import importlib
import time
from dataclasses import dataclass, field

from argus.ir.nodes import Kernel, Loc
from argus.verify.finding import Finding

PASSES = ("argus.verify.tags", "argus.verify.protocol", "argus.verify.resources",
          "argus.verify.barriers", "argus.verify.vacuity")
SEVERITY_ORDER = {"error": 0, "warning": 1}
VERIFIED, UNVERIFIED, FAILED = "verified", "unverified", "failed"
REPLAY_AFTER_DEADLINE_S = 10.0    # the finished passes' errors are replayed within this
COLLECT_AFTER_DEADLINE_S = 1.0    # and the forked passes' answer waited for this long


@dataclass
class Report:
    kernel: str
    findings: list[Finding]
    passes: list[str] = field(default_factory=list)        # the passes that ran
    missing: list[str] = field(default_factory=list)       # passes not installed
    seconds: float = 0.0

    @property
    def verdict(self) -> str:
        if any(f.severity == "error" for f in self.findings):
            return FAILED
        if self.missing or any(f.unproved for f in self.findings):
            return UNVERIFIED
        return VERIFIED

    @property
    def ok(self) -> bool:
        """Everything proved: no error, nothing left unverified, every pass ran."""
        return self.verdict == VERIFIED

    @property
    def unverified_reasons(self) -> list[str]:
        """Why the result is not "verified" though nothing failed: one line each."""
        out = [f"{f.loc}: {f.check}: {f.message}" for f in self.findings if f.unproved]
        out += [f"the {name} pass is not installed (pip install z3-solver)"
                for name in self.missing]
        return out


def verify(kernel: Kernel) -> list[Finding]:
    """Every finding of every available pass, sorted by place and deduplicated."""
    return run(kernel).findings


def run(kernel: Kernel, jobs: int = 1, seconds: float | None = None) -> Report:
    """Every pass over `kernel`. jobs > 1 (argus check passes forked.jobs()): the passes
    after the tag pass run in a forked child while this process runs the tag pass, and
    the tag pass splits its whole-kernel store checks the same way (tags.check); the
    findings are those of the serial run. `seconds`: a wall-clock bound (deadline.py); past
    it the work stops, the passes that finished keep their findings and a `verify.deadline`
    warning makes the kernel unverified (never verified by not looking)."""
    from argus.verify import deadline, forked
    start = time.perf_counter()
    findings: list[Finding] = []
    ran, missing = [], []
    beside: list = []                    # the forked passes' handle, while running
    try:
        with deadline.bound(seconds):
            _run(kernel, jobs, findings, ran, missing, beside)
    except deadline.Expired:
        _collect_finished(beside, ran, missing, findings)
        forked.abandon_all()
        # what the finished passes found is reported as the full run would: each error
        # replayed (under a bound of its own), else dropped, never shown unconfirmed
        try:
            with deadline.bound(min(seconds, REPLAY_AFTER_DEADLINE_S)):
                findings[:] = replayed(kernel, findings)
        except deadline.Expired:
            forked.abandon_all()
            findings[:] = [f for f in findings if f.severity != "error"]
        findings.append(Finding(
            "verify.deadline", "warning", f"the checks did not finish within {seconds:g} s "
            f"of wall clock (some solver queries are slow on this kernel); what they would "
            f"have proved is not verified", kernel.loc, "kernel",
            f"give it longer (argus check --deadline {4 * seconds:g}, or "
            "ARGUS_VERIFY_DEADLINE; 0: no bound), or simplify the index arithmetic the "
            "slow checks meet"))
        return Report(kernel.name, dedupe(findings), ran, missing,
                      time.perf_counter() - start)
    return Report(kernel.name, dedupe(findings), ran, missing, time.perf_counter() - start)


def _collect_finished(beside: list, ran: list, missing: list, findings: list) -> None:
    """After a deadline: the forked passes' findings when they have finished (asked for
    within a moment), else nothing (the caller kills the child)."""
    from argus.verify import deadline, forked
    if not beside:
        return
    try:
        with deadline.bound(COLLECT_AFTER_DEADLINE_S):
            got = beside[0].result()
    except (deadline.Expired, forked.ChildFailed):
        return
    ran += got[0]
    missing += got[1]
    findings += got[2]


def _run(kernel: Kernel, jobs: int, findings: list, ran: list, missing: list,
         beside: list) -> None:
    """run()'s passes and replay, adding to its lists (so that a deadline keeps what the
    finished passes found; `beside` holds the forked passes' handle until collected)."""
    from argus.verify import forked
    first, rest = PASSES[:1], PASSES[1:]
    side = None
    if jobs > 1:
        side = forked.start(lambda: _passes(kernel, rest, 1))
        beside.append(side)
    for names in (first, rest) if side is None else (first,):
        got = _passes(kernel, names, jobs)
        ran += got[0]
        missing += got[1]
        findings += got[2]
    if side is not None:
        try:
            beside.clear()
            got = side.result()
            ran += got[0]
            missing += got[1]
            findings += got[2]
        except forked.ChildFailed as why:
            findings.append(Finding(
                "verify.internal-error", "warning", f"the passes run beside the tag pass "
                f"({', '.join(n.rsplit('.', 1)[1] for n in rest)}) failed in their process "
                f"({why}); their checks did not run", kernel.loc, "kernel",
                "report this verifier bug with the kernel; ARGUS_VERIFY_JOBS=1 runs them "
                "in one process"))
    findings[:] = replayed(kernel, findings)


def _passes(kernel: Kernel, names, jobs: int):
    """(passes that ran, passes not installed, findings) of the named passes, in order."""
    findings: list[Finding] = []
    ran, missing = [], []
    for name in names:
        short = name.rsplit(".", 1)[1]
        try:
            module = importlib.import_module(name)
        except ImportError:
            missing.append(short)
            continue
        except Exception as err:  # noqa: BLE001 - a pass that cannot load did not run
            findings.append(Finding(
                f"{short}.internal-error", "warning",
                f"the {short} pass could not be loaded ({type(err).__name__}: "
                f"{err}); its checks did not run", kernel.loc, "kernel",
                "report this verifier bug with the kernel"))
            continue
        ran.append(short)
        try:
            findings += module.check(kernel, jobs=jobs) if short == "tags" and jobs > 1 else \
                module.check(kernel)
        except Exception as err:  # a broken pass must not pass for a clean kernel
            findings.append(Finding(
                f"{short}.internal-error", "warning",
                f"the {short} pass failed ({type(err).__name__}: {err}); "
                "its checks did not run", kernel.loc, "kernel",
                "report this verifier bug with the kernel"))
    return ran, missing, findings


def replayed(kernel: Kernel, findings: list[Finding]) -> list[Finding]:
    """The findings with every error's counterexample replayed concretely; a replay that
    itself crashes is a verifier defect too, said so, and leaves the findings as they are."""
    try:
        from argus.verify import replay
        return replay.confirm(kernel, findings)
    except Exception as err:  # noqa: BLE001 - never a traceback, never a silent pass
        return findings + [Finding(
            "verify.replay", "warning", f"replaying the counterexamples failed "
            f"({type(err).__name__}: {err}); they are reported unconfirmed", kernel.loc,
            "kernel", "report this verifier bug with the kernel")]


def dedupe(findings: list[Finding]) -> list[Finding]:
    """One finding per (check, location): the first, i.e. the smallest counterexample in
    walk order (warpgroups are walked in increasing order)."""
    seen, out = set(), []
    for f in findings:
        key = (f.check, f.loc.file, f.loc.line, f.loc.col)
        if key in seen:
            continue
        seen.add(key)
        out.append(f)
    return sorted(out, key=sort_key)


def sort_key(f: Finding):
    loc: Loc = f.loc
    return (loc.file, loc.line, loc.col, SEVERITY_ORDER.get(f.severity, 2), f.check)
