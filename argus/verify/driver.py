"""The verifier: every pass over one kernel, findings sorted and deduplicated.

Passes: the tag pass (argus.verify.tags: data-flow invariants, GEMM invariants, stores,
tag_assert), the protocol pass (argus.verify.protocol) and the resource pass
(argus.verify.resources), the last two when they are installed. A pass that crashes is
reported as a warning finding naming it, never as a clean result.
"""

from __future__ import annotations

import importlib
import time
from dataclasses import dataclass, field

from argus.ir.nodes import Kernel, Loc
from argus.verify.finding import Finding

PASSES = ("argus.verify.tags", "argus.verify.protocol", "argus.verify.resources", "argus.verify.barriers")
SEVERITY_ORDER = {"error": 0, "warning": 1}


@dataclass
class Report:
    kernel: str
    findings: list[Finding]
    passes: list[str] = field(default_factory=list)        # the passes that ran
    missing: list[str] = field(default_factory=list)       # passes not installed
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not any(f.severity == "error" for f in self.findings)


def verify(kernel: Kernel) -> list[Finding]:
    """Every finding of every available pass, sorted by place and deduplicated."""
    return run(kernel).findings


def run(kernel: Kernel) -> Report:
    start = time.perf_counter()
    findings: list[Finding] = []
    ran, missing = [], []
    for name in PASSES:
        try:
            module = importlib.import_module(name)
        except ImportError:
            missing.append(name.rsplit(".", 1)[1])
            continue
        ran.append(name.rsplit(".", 1)[1])
        try:
            findings += module.check(kernel)
        except Exception as err:  # a broken pass must not pass for a clean kernel
            findings.append(Finding(
                f"{name.rsplit('.', 1)[1]}.internal-error", "warning",
                f"the {name.rsplit('.', 1)[1]} pass failed ({type(err).__name__}: {err}); "
                "its checks did not run", kernel.loc, "kernel",
                "report this verifier bug with the kernel"))
    return Report(kernel.name, dedupe(findings), ran, missing, time.perf_counter() - start)


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
