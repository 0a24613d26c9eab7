"""Indices that must stay inside what they index: an entry of a short vector
(`element(v, i)`: 0 <= i < len(v)) and a segment of a tensor (`segment(X, start, rows)`:
start + rows <= X's rows). The interpreter refuses either at run time ("element 8 of an
index vector of 8 entries", "segment rows [256, 384) of experts, which has 256 rows");
a loop one step too long (`range(E + 1)`, `range(TOPK + 1)`) around an element or an
assumed segment is the usual cause.

Proved for every instance on the op's path (index terms are unsigned: a negative index
is a huge one). When the claim fails and z3 finds an instance with the product atoms
given their meaning, it is an error; an instance z3 cannot confirm, or a query it cannot
decide, leaves the op unverified (a warning), never a silent pass."""

from __future__ import annotations

import z3

from argus.ir.nodes import Op
from argus.ir.types import FragmentType, IndexVectorType
from argus.verify.finding import Counterexample, Finding
from argus.verify.smt import bv, exact_solve, holds, relevant, value

from . import segments, window_families
from .segments import Segment

CONFIRM_MS = 1500      # confirming a violation with real products: short (else unverified)
SMALL = 4096           # the bound of the sizes and block ids of the first attempt


def check(w, op: Op) -> None:
    if w.phase != "check":
        return
    if op.opcode == "indices.element":
        _element(w, op)
    elif op.opcode == "segment":
        _segment(w, op)


def _length(t):
    if isinstance(t, IndexVectorType):
        return t.length
    if isinstance(t, FragmentType) and len(t.shape) == 1 and isinstance(t.shape[0], int):
        return t.shape[0]
    return None


def _element(w, op: Op) -> None:
    v, i = op.arg("v"), w.value(op.arg("i"))
    n = _length(getattr(v, "type", None))
    if n is None or i is None or isinstance(i, float):
        return
    if isinstance(i, int):
        if not 0 <= i < n:
            _report(w, op, "error", f"entry {i} of a vector of {n} entries",
                    f"the index must be in 0..{n - 1}")
        return
    _prove(w, op, z3.ULT(bv(i), n), f"this entry index can be outside 0..{n - 1} (the "
           f"vector has {n} entries)", "keep the index below the vector's length (a loop "
           f"over its entries is range({n}))")


def _segment(w, op: Op) -> None:
    seg = w.env.get(op.result)
    if not isinstance(seg, Segment) or not seg.extents:
        return
    rows = seg.extents[0]
    if _inside_by_lemma(w, seg, rows):
        segments.mark_inside(w, seg)
        return
    claim = z3.ULE(bv(seg.end), bv(rows)) if not isinstance(seg.end, int) or \
        not isinstance(rows, int) else z3.BoolVal(seg.end <= rows)
    if _prove(w, op, claim,
           f"this segment of {seg.tensor} can run past the tensor's last row (its start "
           f"plus its rows can exceed {seg.tensor}'s rows)", "keep every segment inside its "
           "tensor: the loop around it one step shorter, or its start and rows bounded by "
           "assume(...)"):
        # proved: a lemma for the rest of the walk (a row of the segment's window is a row
        # of the tensor, which the window test alone does not say linearly)
        # proved: a row of the segment's window is a row of the tensor (segments.inside
        # then needs no row-extent test, which the window test alone does not imply
        # linearly: b * SQ + x < RQ from x < SQ)
        segments.mark_inside(w, seg)


def _inside_by_lemma(w, seg, rows) -> bool:
    """A window of a family of disjoint windows (window_families.py) inside the tensor: entry
    a's window of an exclusive prefix sum ends by the sum of all entries, so a < n and that
    total <= the rows suffice; the window g * R of a short loop's counter g < n ends by
    n * R."""
    path = list(w.path)
    got = window_families.window_of(w.ctx, seg.start, seg.rows)
    try:
        if got is not None:
            s, index = got
            return window_families.below(w.ctx, index, s.length, path) and \
                window_families.inside(w.ctx, z3.ULE(s.total, bv(rows)), path)
        got = window_families.product_of(w.ctx, seg.start)
        n = None if got is None else w.ctx.small.get(got[0].sexpr())
        if n is None or not got[1].eq(bv(seg.rows)):
            return False
        return window_families.inside(w.ctx, z3.ULE(got[1] * n, bv(rows)), path)
    except (z3.Z3Exception, TypeError, ValueError):
        return False


def _prove(w, op: Op, claim, message: str, hint: str) -> bool:
    """True when the claim is proved; else a finding is reported (False)."""
    path = list(w.path)
    try:
        # a segment start b * SQ against the rows R == Q * SQ: the products' order facts
        if holds(w.ctx, claim, [*path, *w.ctx.order_facts([claim, *path])], in_integers=True):
            return True
        asked = [*path, z3.Not(claim)]
        products = w.ctx.product_facts()     # for what they connect; solved lazily
        real = {p.get_id() for p in products}
        facts = [f for f in relevant([*w.ctx.facts, *products], asked)
                 if f.get_id() not in real]
        # small sizes first: a violation is usually there, and z3 finds it much sooner
        # than over every size (a model found is a model either way); the product atoms
        # with their real products (exact_solve)
        small = [z3.ULE(v.term, SMALL) for v in w.ctx.vars.values()
                 if v.kind in ("size", "block")]
        found, solver = exact_solve(w.ctx, [*facts, *asked, *small], timeout_ms=CONFIRM_MS)
        if found != z3.sat:
            found, solver = exact_solve(w.ctx, [*facts, *asked], timeout_ms=CONFIRM_MS)
    except (z3.Z3Exception, TypeError, ValueError) as err:
        _report(w, op, "warning", message + f" is not decided ({type(err).__name__})", hint)
        return False
    if found == z3.sat:
        _report(w, op, "error", message, hint, _instance(w, solver.model()))
    elif found == z3.unknown:
        _report(w, op, "warning", message.replace(" can ", " may ") +
                "; z3 could not decide it, so this is not verified", hint)
    return found == z3.unsat


def _instance(w, model) -> Counterexample:
    """The sizes and the block of a violation (what replay.py checks is reached)."""
    sizes = {n: value(model, t) for n, t in w.sizes.items()}
    block = None
    ids = [w.loop_vars.get(("block_id", a)) for a in "xyz"[:len(w.grid)]]
    if any(i is not None for i in ids):
        block = tuple(value(model, i[0]) if i is not None else 0 for i in ids)
    shown = ", ".join(f"{k}={v}" for k, v in sizes.items())
    return Counterexample(block=block, sizes=sizes), shown


def _report(w, op: Op, severity: str, message: str, hint: str, instance=None) -> None:
    done = w.__dict__.setdefault("_within_reported", set())
    if (op.loc.line, op.loc.col) in done:
        return
    done.add((op.loc.line, op.loc.col))
    cex, shown = instance if instance is not None else (None, "")
    if cex is not None:
        where = f"block {','.join(map(str, cex.block))}, " if cex.block else ""
        message += f" (e.g. {where}{shown})"
    w.findings.append(Finding("tag.index-range", severity, message, op.loc,
                              op.opcode.split(".")[-1], hint, cex))
