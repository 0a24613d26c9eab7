"""Padding rows never reach the output.

A tile of a segment (or a gather by a segment of a routing array) has padding rows when
the group's size is not a multiple of the tile: rows past the segment read zeros (or, on
the GPU, the next group's rows, or the row of index 0 for a gather). The accumulator's
tag says which of its rows are real (`live`, meet.py). At a store, every element that
the store writes (inside the destination tensor and its segment) must come from a real
row (`tag.padding`). What the store drops is not checked: padding rows may be computed,
they just must not land anywhere."""

from __future__ import annotations

import z3

from argus.verify.finding import Finding
from argus.verify.smt import bv, holds, value

from . import report, segments
from .meet import LIVE


def check(w, op, dst, src, inst, bounds, inside, scope, wg, base) -> bool:
    """False when a padding row is stored (reported)."""
    live = src.tag.fields.get(LIVE)
    if live is None:
        return True
    # over element positions first (the fragment's layout maps threads onto every position
    # of the tile, so this is the same claim, with no layout arithmetic in it)
    pr, pc = w.pos["pr"], w.pos["pc"]
    shape = tuple(src.shape) + (1,) * (2 - len(src.shape))
    at_positions = z3.Implies(segments.inside(dst, (bv(dst.origin[0]) + pr,
                                                    bv(dst.origin[1]) + pc)), bv(live) == 1)
    if holds(w.ctx, at_positions, [*w.path, z3.ULT(pr, shape[0]), z3.ULT(pc, shape[1])],
             in_integers=True):
        return True
    claim = z3.Implies(inside, inst(bv(live)) == 1)
    if holds(w.ctx, claim, [*w.path, *bounds], in_integers=True):
        return True
    model = report.find(w, z3.Not(claim), scope, bounds)
    if model is None:
        return True
    pr, pc = w.pos["pr"], w.pos["pc"]
    idx = (inst(bv(dst.origin[0]) + pr), inst(bv(dst.origin[1]) + pc))
    fields = {k: inst(bv(v)) for k, v in src.tag.fields.items()}
    cex = report.counterexample(
        w, model, scope, layout=src.layout, warpgroup=wg, thread_base=base,
        elements=(report.element(model, dst.tensor, idx, fields, {LIVE: 1}),))
    at = f"{dst.tensor}[{value(model, idx[0])}, {value(model, idx[1])}]"
    came = f" (from row {value(model, fields['row'])})" if "row" in fields else ""
    w.report(Finding(
        "tag.padding", "error",
        f"a padding row reaches the output: the value stored at {at} comes from a row past "
        f"the end of its group{came}", op.loc, "store",
        "store through the segment of the group's real rows (segment(Y, first, rows) with "
        "the group's own row count), so the tail rows of the last tile are dropped", cex))
    return False
