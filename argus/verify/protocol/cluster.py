"""Blocks of a cluster that signal each other step by step must run the same steps.

A remote arrive (`arrive(bar, cta=r)`) or a TMA multicast (`tma_load(..., multicast=m)`)
inside a loop completes a phase of a *peer's* barrier at every step. The ring checks
(ring.py: arrivals and transaction bytes per receiving block) count the signals of every
block of the cluster at the same step, which is right only when all blocks of the cluster
run the same number of steps: otherwise a block waits for a peer that has already left
its loop (a deadlock), or a peer's multicast lands in a stage of another step.

So every loop around such a signal must have the same trip count in every block of the
cluster: a persistent schedule must walk cluster tiles (`schedule(..., by="cluster")`,
where both blocks visit the same steps; `by="block"` gives each block its own share of
the tiles, and the last blocks get one tile fewer), and a `for` loop's bounds must not
depend on the block id or the cluster rank (checked on the terms: a bound that mentions
either is reported). This is `protocol.cluster-steps`.
"""

from __future__ import annotations

import z3

from .model import Model
from .report import counterexample, finding


def signals_peers(e) -> bool:
    op = e.op
    return ((op.opcode == "mbarrier.arrive" and len(op.operands) > 1)
            or (op.opcode == "tma.load" and len(op.operands) > 3))


def _block_vars(m: Model) -> list:
    out = []
    for e in m.opcode("block_id", "cluster_rank"):
        t = m.terms.env.get(e.op.result)
        if t is not None and z3.is_expr(t):
            out.append(t)
    return out


def _mentions(term, variables) -> bool:
    if not z3.is_expr(term):
        return False
    ids = {v.get_id() for v in variables}
    todo = [term]
    while todo:
        t = todo.pop()
        if t.get_id() in ids:
            return True
        todo.extend(t.children())
    return False


def _term(m: Model, operand):
    try:
        return m.terms.of(operand)
    except Exception:       # a bound the model could not express: nothing to compare
        return None


def check(m: Model) -> list:
    if m.cluster_size == 1:
        return []
    ids = _block_vars(m)
    for e in m.events:
        if not signals_peers(e):
            continue
        for loop in e.where.loops:
            op = loop.op
            what = "remote arrive" if e.op.opcode == "mbarrier.arrive" else "TMA multicast"
            if op.opcode == "schedule" and op.attrs.get("by") != "cluster":
                return [finding(
                    "protocol.cluster-steps", op,
                    f"this schedule gives every block of the cluster its own tiles (by="
                    f"\"block\"), but the {what} at line {e.op.loc.line} signals the peer "
                    "blocks at every step: the blocks of a cluster walk different tiles and "
                    "may run different numbers of steps (a block waits for a peer that has "
                    "finished, or a peer's data lands in another tile's stage)",
                    "walk cluster tiles: schedule(..., by=\"cluster\"), and take each "
                    "block's tile from its cluster_rank()",
                    counterexample(m, None, e.where, block=(0,)))]
            if op.opcode == "for" and any(_mentions(_term(m, o), ids) for o in op.operands):
                return [finding(
                    "protocol.cluster-steps", op,
                    f"this loop's trip count depends on the block, but the {what} at line "
                    f"{e.op.loc.line} inside it signals the peer blocks of the cluster at "
                    "every step: the blocks may run different numbers of steps",
                    "give every block of the cluster the same loop bounds",
                    counterexample(m, None, e.where, block=(0,)))]
    return []
