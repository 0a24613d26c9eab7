"""Tag propagation by abstract interpretation over the IR, discharged with z3.

`check(kernel)` walks the kernel (walker.py) applying each op family's transfer rule
(memory.py, tma.py, operands.py, wgmma.py, store.py, smem_store.py, tma_store.py,
reduction.py, kcoverage.py, asserts.py; flash attention: attention.py's table), then
checks what needs every warpgroup's walk: what each TMA store reads from shared memory
(tma_store.py), the atomic adds of a tensor together (reduction.py), all writers of a
tensor against each other (writers.py: races, coverage) and the blocks masked loops visit
(mask.py). What is symbolic, enumerated, assumed and not checked: docs/design/verifier.md
and docs/design/verifier-attention.md.
"""

from __future__ import annotations

from argus.ir.nodes import Kernel
from argus.verify.finding import Finding


def check(kernel: Kernel, jobs: int = 1) -> list[Finding]:
    from . import mask, reduction, tma_store, writers
    from .walker import Walker

    from .rules import PACKS

    w = Walker(kernel)
    w.run()
    for pack in PACKS:
        for finish in pack.finish:
            finish(w)
    here = (tma_store.check, reduction.check, writers.races)
    beside = (writers.coverage, mask.visited_blocks)
    if jobs > 1:         # coverage needs nothing of the races: a second process (forked.py)
        from argus.verify import forked
        before = len(w.findings)
        side = forked.start(lambda: _whole_kernel(w, beside) or w.findings[before:])
        _whole_kernel(w, here)
        try:
            w.findings += side.result()
        except forked.ChildFailed as why:
            w.findings.append(Finding(
                "tag.internal-error", "warning", f"the coverage checks of the stores failed "
                f"in their process ({why}); not verified", kernel.loc, "store",
                "report this verifier bug with the kernel; ARGUS_VERIFY_JOBS=1 runs them "
                "in one process"))
    else:
        _whole_kernel(w, here + beside)
    from . import origin
    origin.dead_loads(w)                 # every data input loaded reaches an output
    findings = list(w.findings)
    for opcode, (loc, why) in w.unmodelled.items():
        findings.append(Finding(
            "tag.not-modelled", "warning",
            f"the tag pass does not model {opcode}" + (f" ({why})" if why else "") +
            "; tags flowing through it are not verified", loc, opcode,
            "see docs/design/verifier.md for what is verified"))
    return findings


def _whole_kernel(w, checks) -> None:
    """The checks that need every warpgroup's walk, each's undecided query a warning."""
    from .report import Undecided
    for whole_kernel_check in checks:
        try:
            whole_kernel_check(w)
        except Undecided as why:
            w.findings.append(Finding(
                "tag.undecided", "warning", f"z3 could not decide the "
                f"{whole_kernel_check.__name__} check of the stores ({why}); not verified",
                w.kernel.loc, "store", "simplify the store coordinates"))
