"""Row segments of a global tensor (`segment(X, start, rows)`: the rows one expert owns)
and what a tile of one means, plus the element helpers every rule uses for tiles that
are segments or gathers.

A tile of a segment is a GlobalTile of the base tensor whose origin counts rows from
`start` and whose `window` is [start, start + rows): rows of the box past the window read
zeros (TMA, loads) and are not written (stores), so they are the *padding* rows of a
group whose size is not a multiple of the tile. A gathered tile (gather.py) has an index
vector instead of a row origin: box row r is the tensor's row `rows.entry(r)`, a padding
row when that entry is not a real routing entry (`rows.live(r)`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import z3

from argus.ir.nodes import Op
from argus.verify import termscan
from argus.verify.smt import bv

from . import scalars
from .values import GlobalTile


@dataclass(frozen=True)
class Window:
    """The rows [start, end) of a segment, end = start + rows (terms)."""
    start: Any
    rows: Any
    end: Any
    memo: dict = field(default_factory=dict, compare=False, repr=False)  # row id -> test


@dataclass(frozen=True)
class Segment:
    """segment(X, start, rows): rows [start, start + rows) of tensor X."""
    tensor: str
    start: Any
    rows: Any
    extents: tuple            # X's shape as terms
    end: Any                  # start + rows

    @property
    def window(self) -> Window:
        return Window(self.start, self.rows, self.end)


def segment(w, op: Op) -> None:
    base, start, rows = (w.value(op.arg(n)) for n in ("tensor", "start", "rows"))
    if not (isinstance(base, tuple) and base[0] == "tensor") or start is None or rows is None:
        w.not_modelled(op, "a segment of anything but a kernel tensor, or bounds the pass "
                           "cannot express")
        w.env[op.result] = None
        return
    w.env[op.result] = Segment(base[1], start, rows, w.tensors[base[1]],
                               scalars.binary(w.ctx, "add", start, rows))


def tile(w, op: Op, base_rule) -> None:
    """A tile of a segment (its rows counted from the segment's start); any other tile is
    the packs-before rule's (`base_rule`: memory.tile)."""
    base = w.value(op.arg("tensor"))
    if not isinstance(base, Segment):
        base_rule(w, op)
        return
    coords = [w.value(c) for c in op.args("coords")]
    box = tuple(op.attrs["box"])
    if any(c is None for c in coords):
        w.env[op.result] = None
        return
    origin = [scalars.binary(w.ctx, "mul", c, b) for c, b in zip(coords, box)]
    origin[0] = scalars.binary(w.ctx, "add", base.start, origin[0])
    w.env[op.result] = GlobalTile(base.tensor, box, tuple(origin), base.extents, op.loc,
                                  window=base.window)


# -- elements of tiles (plain, segment, gather) ---------------------------------------------

def row_at(t: GlobalTile, r):
    """The tensor row of box row r."""
    if t.rows is not None:
        return bv(t.rows.entry(r))
    return bv(t.origin[0]) + bv(r)


def in_window(t, row):
    """Row `row` (a tensor row) is inside the segment of tile t (or of the segments.Window
    t itself); True without one."""
    window = t if isinstance(t, Window) else getattr(t, "window", None)
    if window is None:
        return z3.BoolVal(True)
    # a row written start + x is inside when x < rows: the start cancels and the solver
    # never sees the routing sum (the same meaning: nothing here reaches 2^63)
    row = bv(row)
    got = window.memo.get(row.get_id())
    if got is not None:
        return got[1]
    if "leaves" not in window.memo:
        start = z3.simplify(bv(window.start))
        window.memo["leaves"] = (start, None if z3.is_bv_value(start) else
                                  termscan.leaves(start))
    start, leaves = window.memo["leaves"]
    local = z3.simplify(row - start)
    if leaves is not None and leaves.isdisjoint(termscan.leaves(local)):   # start cancelled
        test = z3.ULT(local, bv(window.rows))
    else:
        test = z3.And(z3.UGE(row, bv(window.start)), z3.ULT(row, bv(window.end)))
    window.memo[row.get_id()] = (row, test)        # keeps row alive: its id stays its own
    return test


def inside(t, coords, w=None):
    """The element at tensor coordinates `coords` is inside the tensor and the segment:
    it reads as data (else a TMA/load zero) and a store writes it (else it is dropped).
    With the walker `w`, a segment proved inside its tensor (within.py) needs no test of
    the row against the tensor's rows: the window test implies it."""
    window = getattr(t, "window", None)
    skip_rows = w is not None and window is not None and _key(t.tensor, window)[0] in \
        w.__dict__.get("_segments_inside", ())
    tests = [z3.ULT(bv(c), bv(e)) for c, e in zip(coords, t.extents)]
    if skip_rows:
        tests = tests[1:]
    return z3.And(*tests, in_window(t, coords[0]))


def _key(tensor: str, window) -> tuple:
    """(tensor, start, rows) by the AST ids of the simplified terms, and those terms (the
    holder keeps them alive, so that their ids stay theirs): an s-expression of an expert's
    prefix sum over 128 counts took 10 ms to print."""
    start, rows = z3.simplify(bv(window.start)), z3.simplify(bv(window.rows))
    return (tensor, start.get_id(), rows.get_id()), (start, rows)


def mark_inside(w, seg: Segment) -> None:
    """Segment `seg` is proved inside its tensor (start + rows <= its rows)."""
    key, terms = _key(seg.tensor, seg.window)
    w.__dict__.setdefault("_segments_inside", {})[key] = terms


def live(t: GlobalTile, r, row):
    """Box row r (tensor row `row`) is a real routed row, not padding: inside the segment,
    or for a gather, its index entry is a real routing entry."""
    if t.rows is not None:
        return t.rows.live(r)
    return in_window(t, row)


def padded(t) -> bool:
    """Does this tile have padding rows at all (a segment or a gather)?"""
    return getattr(t, "window", None) is not None or getattr(t, "rows", None) is not None
