"""Stores to global memory: record the writer (writers.py checks them against each other),
check that every k was accumulated exactly once (kcoverage.py) and that the value's tag
is the destination coordinate. A store drops the elements outside its tensor (the
backend guards it), so every check is about the elements inside. A store into shared
memory is recorded for the TMA stores that read it (smem_store.py, tma_store.py).

Writers are told apart by their *identity*: tile coordinates (or block ids), loop
counters other than a schedule's step counter, warpgroup and (thread, register). That
the schedule visits each tile exactly once (so tile coordinates stand for the block and
its step) is proved separately (schedule.py)."""

from __future__ import annotations

import z3

from argus.ir.nodes import Op
from argus.verify.finding import Finding
from argus.verify.smt import bv, holds, value

from . import cluster, heads, origin, report, segments, smem_store, storechecks
from .kcoverage import k_coverage
from .values import Fragment, GlobalTile, SmemView, StoreRecord


# the unknown tags memory.py makes without a finding of their own (elementwise joins of
# different tags, casts that change the layout); others were reported where they arose
SILENT = ("math.", "a cast that changes the layout")


def _instance(w, layout, shape):
    """(instantiate(term), bounds, has_thread) for the elements of a fragment."""
    sub = report.thread_vars(w, layout)
    if sub is not None:
        pairs, t, v, bounds = sub
        return (lambda x: z3.substitute(bv(x), *pairs)), bounds, True
    pr, pc = w.pos["pr"], w.pos["pc"]
    return (lambda x: bv(x)), [z3.ULT(pr, shape[0]), z3.ULT(pc, shape[1])], False


def scope_of(w, rec: StoreRecord):
    """The schedules' step counters, the walkers (block, cluster) and the cluster rank:
    each writer has its own (they identify nothing, or are in its identity anyway)."""
    return [n for n in w.schedules if n in w.ctx.vars] + list(cluster.per_writer(w))


def identity(w, extra=()) -> tuple[str, ...]:
    """The variables that tell two writers apart here: a persistent block is told apart by
    its tile (the schedule lemma), a plain one by its block ids; the step counter of a
    schedule identifies nothing."""
    blocks = tuple(n for n in w.ctx.vars if n.startswith("block_"))
    return (blocks + tuple(v for v in w.scope_vars() if v not in w.schedules)
            + cluster.identity(w) + tuple(extra))


def record(w, op: Op, dst: GlobalTile, layout: str, shape, extra_identity=()) -> StoreRecord:
    """The writer of the elements (pr, pc) of `dst` (not yet added to any list)."""
    pr, pc = w.pos["pr"], w.pos["pc"]
    coords = (bv(dst.origin[0]) + pr, bv(dst.origin[1]) + pc)
    wg = w.role.warpgroup if w.role else None
    base = wg * 128 if wg is not None else 0
    return StoreRecord(dst.tensor, coords, dst.extents, identity(w, extra_identity), layout,
                       tuple(shape), wg, base, tuple(w.path), op.loc, dst.window)


def inside(inst, rec: StoreRecord):
    """The element lies inside the tensor and its segment (the store drops the others)."""
    return z3.And(z3.ULT(inst(rec.dst[0]), bv(rec.extents[0])),
                  z3.ULT(inst(rec.dst[1]), bv(rec.extents[1])),
                  segments.in_window(rec, inst(rec.dst[0])))


def store(w, op: Op) -> None:
    dst, src = w.value(op.arg("dst")), w.value(op.arg("src"))
    if w.phase != "check":
        return
    if isinstance(dst, SmemView):
        smem_store.record(w, op, dst, src)
        return
    if not isinstance(dst, GlobalTile):
        w.not_modelled(op, "a store whose destination tile is not known")
        return
    if not isinstance(src, Fragment):
        return
    rec = record(w, op, dst, src.layout, src.shape)
    w.stores.append(rec)
    inst, bounds, _ = _instance(w, src.layout, src.shape)
    tensor_of_origin(w, op, rec, dst, src, inst, bounds)
    tag = src.tag
    if tag.state == "unknown" and tag.why_unknown.startswith(SILENT):
        # what it holds was lost on the way by a rule that reports nothing: say so here
        w.not_modelled(op, tag.why_unknown)
    if tag.state != "data":
        return
    scope = w.scope_vars()
    if not storechecks.check(w, op, dst, src, inst, bounds, inside(inst, rec), scope,
                             rec.warpgroup, rec.thread_base):
        return                                            # MoE: padding, combine (reported)
    k_coverage(w, op, tag, inst, [*bounds, inside(inst, rec)], scope, src, rec.warpgroup,
               rec.thread_base, (dst.tensor, rec.dst))
    if id(op.arg("src")) in w.asserted:
        return            # the user's tag_assert states what this value must satisfy
    coordinates(w, op, rec, src, inst, bounds)


def coordinates(w, op: Op, rec: StoreRecord, src: Fragment, inst, bounds, when=None) -> None:
    """The value's row/col tags equal the destination coordinate of every element inside
    (where `when` holds: an atomic add of a value that can only be zero changes nothing)."""
    tag, scope = src.tag, w.scope_vars()
    into = inside(inst, rec) if when is None else z3.And(inside(inst, rec), when)
    for axis, field in enumerate(("row", "col")):
        if field not in tag.fields:
            continue
        want = rec.dst[axis] if axis == 0 else heads.column(w, rec.tensor, rec.dst[axis])
        claim = z3.Implies(into, inst(tag.fields[field]) == inst(want))
        if holds(w.ctx, claim, [*w.path, *bounds]):
            continue
        model = report.find(w, z3.Not(claim), scope, bounds)
        if model is None:
            continue
        idx = (inst(rec.dst[0]), inst(rec.dst[1]))
        actual = {f: inst(tag.fields[f]) for f in ("row", "col") if f in tag.fields}
        expected = {"row": idx[0], "col": heads.column(w, rec.tensor, idx[1])}
        cex = report.counterexample(
            w, model, scope, layout=src.layout, warpgroup=rec.warpgroup,
            thread_base=rec.thread_base,
            elements=(report.element(model, rec.tensor, idx, actual, expected),))
        what = "added" if op.opcode == "atomic.add" else "stored"
        w.report(Finding("tag.store-coordinate", "error",
                         f"the value {what} at {rec.tensor}[{value(model, idx[0])}, "
                         f"{value(model, idx[1])}] carries {field} "
                         f"{value(model, actual[field])}",
                         op.loc, "atomic_add" if op.opcode == "atomic.add" else "store",
                         "store the tile at the coordinates of its rows and columns", cex))
        return


def tensor_of_origin(w, op: Op, rec: StoreRecord, dst: GlobalTile, src: Fragment, inst,
                     bounds) -> None:
    """The built-in contract on which tensors the stored value comes from (origin.py), its
    counterexample an element the store writes (inside the tensor)."""
    def model_of(actual: str, expected: str):
        model = report.find(w, inside(inst, rec), w.scope_vars(), bounds)
        if model is None:
            return None
        idx = (inst(rec.dst[0]), inst(rec.dst[1]))
        return report.counterexample(
            w, model, w.scope_vars(), layout=src.layout, warpgroup=rec.warpgroup,
            thread_base=rec.thread_base,
            elements=(origin.element(w, model, rec.tensor, idx, actual, expected),))
    origin.check_store(w, op, dst, src.origin, model_of)
    if src.origin is not None:           # None: no data (a constant), no head to check
        reads = src.origin.reads if isinstance(src.origin, origin.Origin) else None
        heads.check_store(w, op, dst, reads, rec.warpgroup)
