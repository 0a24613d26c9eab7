"""Where routed data meets: the routing fields of a wgmma's two operands must agree, and a
consumer reads only the fills of a producer that runs under the same filter.

Routing fields are the tag fields that tag assumptions define (assumptions.py): the
expert a row was routed to, the token and choice of a routing entry. At a wgmma, for every
instruction, accumulator element (thread, register) and kk whose product can be non-zero
(both elements inside their tensors) and whose A row is a real routed row (not padding),
every routing field that A and B both carry is equal: the rows routed to expert e meet
expert e's weights (`tag.routing`). The accumulator keeps A's routing fields (taken at
the row, column 0) and, when A has padding rows, `live` (1 for a real row, 0 for a padding
row) for the store (padding.py).

Filtered loops (the MoE's `if w % BLOCKS == bid`): the stage check (operands.py) relates
a read to the producer's fill of the same loop counters, which is the fill the read meets
only if both roles skip the same iterations. So the conditions of the `if`s around the
TMA writer and around the read must be equivalent for all counters (`tag.stage`).
"""

from __future__ import annotations

from dataclasses import dataclass

import z3

from argus.verify.finding import ElementTag, Finding
from argus.verify.smt import bv, holds, value

from . import assumptions, report, segments

LIVE = "live"


@dataclass
class RowFields:
    """Routing fields of one operand element: at (row, col), and of its row (col 0)."""
    fields: dict
    row_fields: dict
    live: object            # z3 Bool: a real routed row (not padding)
    padded: bool            # the tile can have padding rows at all


def operand_fields(w, src, r, row, col) -> RowFields:
    """The routing fields of box row r of `src` (tensor row `row`, column `col`): the
    tensor's own, and for a gather those of the routing entry it was gathered by. On a
    segment whose rows all carry one value of a field (proved once per segment, in
    integers) the field of every real row is that value."""
    out, rows = {}, {}
    for name in assumptions.fields(w, src.tensor):
        one = assumptions.constant_on(w, src.tensor, name, src.window, 2)
        out[name] = one if one is not None else assumptions.field(w, src.tensor, name, (row, col))
        rows[name] = one if one is not None else assumptions.field(w, src.tensor, name, (row, 0))
    if src.rows is not None and src.rows.source is not None:
        entry = src.rows.coord(r)
        window = src.rows.segment
        for name in assumptions.fields(w, src.rows.source):
            one = assumptions.constant_on(w, src.rows.source, name, window, 1)
            out[name] = rows[name] = one if one is not None else \
                assumptions.field(w, src.rows.source, name, (entry,))
    return RowFields(out, rows, segments.live(src, r, row), segments.padded(src))


def kept(fields: dict) -> dict:
    """The fields of an accumulator's tag that are not its coordinates."""
    return {k: v for k, v in fields.items() if k not in ("row", "col")}


def wgmma(w, op, A, B, inst, bounds, scope, acc, wg, base):
    """Check the routing fields of A and B at every instruction; the accumulator's routing
    fields, or None when a check failed (reported)."""
    if not A.fields or not B.fields:
        return {}
    kk = w.pos["kk"]
    positions = [w.pos[n] for n in ("pr", "pc", "kk")]
    for j, (fa, fb) in enumerate(zip(A.fields, B.fields)):
        for name in [n for n in fa.fields if n in fb.fields]:
            same = bv(fa.fields[name]) == bv(fb.fields[name])
            if not any(_mentions(w, same, p) for p in positions) and _holds_once(w, same):
                continue       # one value per segment on both sides (the usual case): equal
            real = z3.And(fa.live, A.inside[j], B.inside[j])
            claim = inst(z3.Implies(real, bv(fa.fields[name]) == bv(fb.fields[name])))
            if holds(w.ctx, claim, [*w.path, *bounds]):
                continue
            model = report.find(w, z3.Not(claim), scope, bounds)
            if model is None:
                continue
            a_row, b_row = value(model, inst(A.mn[j])), value(model, inst(B.mn[j]))
            va, vb = value(model, inst(fa.fields[name])), value(model, inst(fb.fields[name]))
            pos = (value(model, inst(w.pos["pr"])), value(model, inst(w.pos["pc"])))
            cex = report.counterexample(
                w, model, scope, layout=acc.layout, warpgroup=wg, thread_base=base,
                elements=(ElementTag("acc", pos, {f"a.{name}": va, f"b.{name}": vb,
                                                  "a.row": a_row, "b.row": b_row},
                                     {f"a.{name} == b.{name}": va}),),
                extra_iter={"instruction": j, "kk": value(model, kk)})
            w.report(Finding(
                "tag.routing", "error",
                f"wgmma multiplies {A.tensor} row {a_row} ({name} {va}) with {B.tensor} row "
                f"{b_row} ({name} {vb}): rows routed to {name} {va} meet the weights of "
                f"{name} {vb}", op.loc, "wgmma",
                f"load the {B.tensor} tile of the {name} the {A.tensor} rows were routed to "
                f"(the same {name} counter in both segments, e.g. segment(W, e * N, N) for "
                f"the rows of segment e)", cex))
            return None
    first = A.fields[0]
    out = {name: z3.substitute(bv(t), (kk, z3.BitVecVal(0, 64)))
           for name, t in first.row_fields.items()}
    if first.padded:
        out[LIVE] = z3.If(z3.substitute(first.live, (kk, z3.BitVecVal(0, 64))),
                          z3.BitVecVal(1, 64), z3.BitVecVal(0, 64))
    return out


def same_filter(w, op, writer, name) -> bool:
    """The reader runs at exactly the iterations the writer fills (else reported). A
    multicast load's `if` says which block issues it, not which blocks it fills (the
    cluster rules, bands.py, relate those), so it is not compared."""
    if getattr(writer, "multicast", None) is not None:
        return True
    wpath, rpath = tuple(writer.path), tuple(w.path)
    if not wpath and not rpath:
        return True
    claim = z3.And(*wpath) == z3.And(*rpath)
    if holds(w.ctx, claim):
        return True
    scope = w.scope_vars()
    model = report.find(w, z3.Not(claim), scope)
    if model is None:
        return True
    fills = bool(model.eval(z3.And(*wpath), model_completion=True))
    cex = report.counterexample(w, model, scope, warpgroup=w.role.warpgroup if w.role else None)
    who = "the producer fills it but this read does not run" if fills else \
        "this read runs but the producer does not fill it"
    w.report(Finding(
        "tag.stage", "error",
        f"wgmma operand {name} reads {writer.view.buffer.name}, filled by the TMA load at line "
        f"{writer.loc.line} under other conditions: at {report.where(cex)} {who}, so the "
        f"reads meet the fills of other iterations", op.loc, "wgmma",
        "filter producer and consumer loops by the same condition (e.g. the same "
        "`if w % BLOCKS == bid`)", cex))
    return False


def _holds_once(w, claim) -> bool:
    """claim (about routing values only) holds, in integers; cached per claim."""
    from .abstraction import install
    cache = w.__dict__.setdefault("routing_claims", {})
    key = claim.get_id()
    if key not in cache:
        cache[key] = (claim, install(w.ctx).refutes([z3.Not(claim)], abstract=False)
                      or holds(w.ctx, claim))
    return cache[key][1]


def _mentions(w, expr, var) -> bool:
    from .abstraction import install
    return install(w.ctx).mentions(expr, var)
