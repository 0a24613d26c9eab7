"""Findings of the protocol checks: counterexamples read off a z3 model in the user's terms
(loop variables by their source names, barrier "full[1]", warpgroup, sizes)."""

from __future__ import annotations

from typing import Optional

from argus.ir.nodes import Op
from argus.verify.finding import Counterexample, Finding

from . import smt
from .model import Model, Where

# the DSL call an opcode comes from, for the finding's `op`
SURFACE = {"mbarrier.wait": "wait", "mbarrier.arrive": "arrive", "mbarrier.expect_tx":
           "expect_tx", "mbarrier.init": "mbarrier_init", "tma.load": "tma_load",
           "tma.store": "tma_store", "wgmma.mma": "wgmma", "wgmma.fence": "wgmma_fence",
           "wgmma.wait": "wgmma_wait", "wgmma.commit": "wgmma_commit",
           "fence.mbarrier_init": "fence_mbarrier_init", "fence.proxy_async":
           "fence_proxy_async", "barrier.block": "sync_block", "barrier.cluster":
           "cluster_sync", "smem.alloc": "smem", "smem.tile": "tile", "store": "store",
           "load": "load", "ldmatrix": "ldmatrix", "stmatrix": "stmatrix",
           "frag.assign": "assign", "role": "role"}


def surface(op: Op) -> str:
    return SURFACE.get(op.opcode, op.opcode)


def counterexample(m: Model, model, where: Optional[Where], barrier=None,
                   extra: Optional[dict] = None, block=None) -> Counterexample:
    iteration: dict[str, int] = {}
    if where is not None and model is not None:
        for loop in where.loops:
            iteration[loop.name] = smt.value(model, loop.counter)
        if len(where.loops) > 1:
            iteration["step"] = smt.value(model, m.step(where))
    if extra:
        iteration.update(extra)
    sizes = {}
    if model is not None:
        for s in m.kernel.symbols:
            sizes[s.name] = smt.value(model, m.terms.env[s])
    warpgroup = None
    if where is not None and where.role is not None:
        warpgroup = where.role.warpgroups[0]
        wg_var = m.terms.names.get("warpgroup")
        if wg_var is not None and model is not None and len(where.role.warpgroups) > 1:
            idx = smt.value(model, wg_var)
            if idx < len(where.role.warpgroups):
                warpgroup = where.role.warpgroups[idx]
    name = None
    if barrier is not None:
        array, index = barrier
        idx = smt.value(model, index) if model is not None else index
        name = f"{array.name}[{idx}]"
    return Counterexample(block=block, warpgroup=warpgroup, iteration=iteration,
                          sizes=sizes, barrier=name,
                          thread=None if warpgroup is None else warpgroup * 128,
                          warp=None if warpgroup is None else warpgroup * 4,
                          lane=None if warpgroup is None else 0)


def finding(check: str, op: Op, message: str, hint: str, cex=None,
            severity: str = "error") -> Finding:
    return Finding(check=check, severity=severity, message=message, loc=op.loc,
                   op=surface(op), hint=hint, counterexample=cex)


def first_run(m: Model, op: Op) -> Optional[Counterexample]:
    """Where `op` first runs: its warpgroup (the first of its role) at iteration 0."""
    e = next((e for e in m.events if e.op is op), None)
    if e is None:
        return None
    wg = e.where.role.warpgroups[0] if e.where.role is not None else 0
    return Counterexample(warpgroup=wg, thread=wg * 128, warp=wg * 4, lane=0,
                          iteration={l.name: 0 for l in e.where.loops})
