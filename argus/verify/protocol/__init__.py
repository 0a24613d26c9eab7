"""Protocol checks of a kernel's asynchronous choreography: mbarrier stages, parities,
arrival counts and transaction bytes, init fences, stage reuse, wgmma ordering,
async-proxy fences, shared-memory races, bank conflicts and swizzle alignment.

`check(kernel) -> list[Finding]` is the entry point the verifier driver calls. What is
symbolic, enumerated and assumed is written down in docs/design/verifier-protocol.md.
"""

from __future__ import annotations

from argus.ir.nodes import Kernel
from argus.verify.finding import Finding

from . import alignment, banks, bounds, cluster, init, proxy, ring, stages, wgmma
from .model import build
from .report import finding
from .smt import SolverUnknown

PASSES = (init, bounds, ring, stages, wgmma, proxy, alignment, banks, cluster)


def check(kernel: Kernel) -> list[Finding]:
    model = build(kernel)
    out: list[Finding] = []
    for p in PASSES:
        try:
            out += p.check(model)
        except SolverUnknown as e:
            out.append(Finding(
                f"protocol.{p.__name__.rsplit('.', 1)[1]}", "warning",
                f"the solver gave up on this check ({e}); it is not discharged", kernel.loc,
                "kernel", "simplify the stage and parity expressions"))
    for op, what in model.unknown:
        out.append(finding(
            "protocol.unmodelled", op, f"the protocol model cannot express {what} here; "
            "checks that depend on it are skipped", "use index arithmetic on shape "
            "symbols, loop counters and ids", severity="warning"))
    return out
