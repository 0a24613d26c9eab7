"""Stores to global memory: record the writer (writers.py checks them against each other),
check that every k was accumulated exactly once (kcoverage.py) and that the value's tag
is the destination coordinate. A store drops the elements outside its tensor (the
backend guards it), so every check is about the elements inside.

Writers are told apart by their *identity*: tile coordinates (or block ids), loop
counters other than a schedule's step counter, warpgroup and (thread, register). That
the schedule visits each tile exactly once (so tile coordinates stand for the block and
its step) is proved separately (schedule.py)."""

from __future__ import annotations

import z3

from argus.ir.nodes import Op
from argus.verify.finding import Finding
from argus.verify.smt import bv, holds, value

from . import report
from .kcoverage import k_coverage
from .values import Fragment, GlobalTile, StoreRecord


def _instance(w, layout, shape):
    """(instantiate(term), bounds, has_thread) for the elements of a fragment."""
    sub = report.thread_vars(w, layout)
    if sub is not None:
        pairs, t, v, bounds = sub
        return (lambda x: z3.substitute(bv(x), *pairs)), bounds, True
    pr, pc = w.pos["pr"], w.pos["pc"]
    return (lambda x: bv(x)), [z3.ULT(pr, shape[0]), z3.ULT(pc, shape[1])], False


def store(w, op: Op) -> None:
    dst, src = w.value(op.operands[0]), w.value(op.operands[1])
    if w.phase != "check":
        return
    if not isinstance(dst, GlobalTile):
        w.not_modelled(op, "stores to shared memory")
        return
    if not isinstance(src, Fragment):
        return
    pr, pc = w.pos["pr"], w.pos["pc"]
    coords = (bv(dst.origin[0]) + pr, bv(dst.origin[1]) + pc)
    scope = w.scope_vars()
    # a persistent block is told apart by its tile (the schedule lemma), a plain one by
    # its block ids; the step counter of a schedule identifies nothing
    blocks = tuple(n for n in w.ctx.vars if n.startswith("block_"))
    identity = blocks + tuple(v for v in scope if v not in w.schedules)
    wg = w.role.warpgroup if w.role else None
    base = wg * 128 if wg is not None else 0
    w.stores.append(StoreRecord(dst.tensor, coords, dst.extents, identity, src.layout,
                                tuple(src.shape), wg, base, tuple(w.path), op.loc))
    inst, bounds, _ = _instance(w, src.layout, src.shape)
    cex_of = lambda model, elements=(): report.counterexample(
        w, model, scope, layout=src.layout, warpgroup=wg, thread_base=base, elements=elements)
    # elements outside the tensor are dropped by the store (a guarded store)
    inside = z3.And(z3.ULT(inst(coords[0]), bv(dst.extents[0])),
                    z3.ULT(inst(coords[1]), bv(dst.extents[1])))
    tag = src.tag
    if tag.state != "data":
        return
    k_coverage(w, op, tag, inst, [*bounds, inside], scope, src, wg, base, (dst.tensor, coords))
    if id(op.operands[1]) in w.asserted:
        return            # the user's tag_assert states what this value must satisfy
    for axis, field in enumerate(("row", "col")):
        if field not in tag.fields:
            continue
        claim = z3.Implies(inside, inst(tag.fields[field]) == inst(coords[axis]))
        if holds(w.ctx, claim, [*w.path, *bounds]):
            continue
        model = report.find(w, z3.Not(claim), scope, bounds)
        if model is None:
            continue
        idx = (inst(coords[0]), inst(coords[1]))
        actual = {f: inst(tag.fields[f]) for f in ("row", "col") if f in tag.fields}
        expected = {"row": idx[0], "col": idx[1]}
        cex = cex_of(model, (report.element(model, dst.tensor, idx, actual, expected),))
        w.report(Finding("tag.store-coordinate", "error",
                         f"the value stored at {dst.tensor}[{value(model, idx[0])}, "
                         f"{value(model, idx[1])}] carries {field} "
                         f"{value(model, actual[field])}",
                         op.loc, "store", "store the tile at the coordinates of its rows and "
                         "columns", cex))
        return


