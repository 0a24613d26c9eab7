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

A remote arrive must also name a block of the cluster: `arrive(bar, cta=t)` with t
outside 0 .. cluster size - 1 (e.g. a fan-out loop `for r in range(CM + 1)`) signals no
block the kernel launched (the hardware's behaviour is undefined; the interpreter faults).
Checked for every issuing block and fan-out counter value, under the arrive's branch
conditions: `protocol.cluster-rank`.
"""

from __future__ import annotations

import z3

from . import fanout, smt
from .model import Model
from .report import counterexample, finding


def signals_peers(e) -> bool:
    op = e.op
    return ((op.opcode == "mbarrier.arrive" and op.arg("cta") is not None)
            or (op.opcode == "tma.load" and op.arg("multicast") is not None))


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
    out = _ranks(m)
    if m.cluster_size == 1 or out:
        return out
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


def _ranks(m: Model) -> list:
    """protocol.cluster-rank: every remote arrive targets a block of the cluster."""
    n = m.cluster_size
    for e in m.opcode("mbarrier.arrive"):
        if e.op.arg("cta") is None:
            continue
        target = _term(m, e.op.arg("cta"))
        if target is None:
            continue
        for b in range(n):
            for counters in fanout.iterations(e.where):
                pairs = fanout.issued_by(m, b, counters)
                t = fanout.at(target, pairs)
                conds = [fanout.at(smt.bool_of(c), pairs) for c in e.where.conds]
                outside = z3.Not(smt.lt(t, n)) if z3.is_expr(t) else not (0 <= t < n)
                if outside is False:
                    continue
                model = smt.find([*m.constraints, *conds], outside if z3.is_expr(outside)
                                 else z3.BoolVal(True), prefer=m.first_iteration(e.where))
                if model is None:
                    continue
                value = smt.value(model, t) if z3.is_expr(t) else t
                shown = value if value < 2 ** 31 else value - 2 ** 32
                at_counter = ", ".join(f"{loop.name} = {v}" for loop, (_, v)
                                       in zip(e.where.fanout, counters))
                return [finding(
                    "protocol.cluster-rank", e.op,
                    f"this arrive signals block {shown} of the cluster"
                    f"{f' (at {at_counter})' if at_counter else ''}, but the cluster has "
                    f"{n} block{'s' if n > 1 else ''} (ranks 0..{n - 1}): no such block "
                    "exists to receive it",
                    f"keep the cta= rank in 0..{n - 1} (a fan-out loop over the cluster is "
                    "`for r in range(CM)`)" if n > 1 else
                    "drop cta= (this kernel runs without clusters), or launch with a cluster",
                    counterexample(m, model, e.where, block=(b,)))]
    return []
