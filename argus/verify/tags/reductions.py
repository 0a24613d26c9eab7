"""Row reductions (row_max, row_min, row_sum): which elements each register of the result combines,
and what of their tags it keeps.

The lowering convention (stated here, the twin of the interpreter's exact mode): a thread
first combines its own registers of a row, then exchanges with the lanes t ^ 1 and t ^ 2
(a butterfly over the quad of lanes that share a row in the wgmma accumulator and
register-A layouts), leaving the row's value in every thread of the quad. For the
fragment's layout and shape this is proved by ENUMERATION of the thread-value table
(every thread, every row it holds): the partners reach every column of the row, and for
a sum each column exactly once (a duplicate would be added twice). A layout whose rows
are spread over other lanes (blocked, ldmatrix tiles) is not modelled (a warning).

The result keeps the tag fields that all the combined elements share: a field is kept
when it is the same at every column of the row (z3, for every row, block and step); the
column is dropped. A reduction whose elements of one row carry different row tags loses
the row: that is an error at the reduction.

The result's meaning (meaning.py): the row max of a score tile is a max Stat of one
block; the row sum of p = exp2(x - m) is a sum Stat relative to m; a row sum of the scores
themselves is a plain sum."""

from __future__ import annotations

from functools import lru_cache

import z3

from argus.ir.nodes import Op
from argus.layout.hopper import get_atom
from argus.layout.hopper.tv import TVLayoutError
from argus.verify.finding import Finding
from argus.verify.smt import bv, holds, value

from . import mask
from .meaning import Exp, Series, Span, Stat
from .values import FragTag, Fragment
from .violations import refute

QUAD_MASKS = (1, 2)


def holders(layout: str, shape: tuple[int, int]):
    """{thread: [(row, col), ...]} of a fragment of `layout` over `shape` (a TV atom
    repeated over the tile keeps each element's thread), or None if not an atom tiling."""
    try:
        atom = get_atom(layout)
    except TVLayoutError:
        return None
    rows, cols = atom.coord_table()
    tr, tc = atom.tile
    if len(shape) != 2 or shape[0] % tr or shape[1] % tc:
        return None
    out: dict[int, list] = {}
    for t in range(atom.threads):
        held = []
        for i in range(shape[0] // tr):
            for j in range(shape[1] // tc):
                held += [(int(r) + i * tr, int(c) + j * tc) for r, c in zip(rows[t], cols[t])]
        out[t] = held
    return out


@lru_cache(maxsize=None)
def partner_gap(layout: str, shape: tuple[int, int], kind: str,
                masks: tuple[int, ...] = QUAD_MASKS):
    """None when the butterfly over `masks` combines exactly the elements of each row;
    'layout' when the layout is not a tiling of a TV atom; else the first problem:
      ("mixes", thread, row, partner, partner_row): the butterfly exchanges the register
          of a row with a partner's register of another row (the rows get mixed);
      ("misses", thread, row, column): no partner holds that column of the row;
      ("twice", thread, row, column, n): a sum would add that column n times."""
    table = holders(layout, shape)
    if table is None:
        return "layout"
    group = {0}
    for m in masks:
        group |= {g ^ m for g in group}
    slots = {t: list(dict.fromkeys(r for r, _ in held)) for t, held in table.items()}
    for t in sorted(table):
        for i, r in enumerate(slots[t]):
            count = [0] * shape[1]
            for p in sorted({t ^ g for g in group}):
                theirs = slots.get(p, [])
                if i >= len(theirs) or theirs[i] != r:
                    return ("mixes", t, r, p, theirs[i] if i < len(theirs) else None)
                for rr, c in table[p]:
                    if rr == r:
                        count[c] += 1
            for c, n in enumerate(count):
                if n == 0:
                    return ("misses", t, r, c)
                if kind == "sum" and n > 1:
                    return ("twice", t, r, c, n)
    return None


def reduce_row(w, op: Op) -> None:
    x = w.value(op.arg("x"))
    t = op.result.type
    kind = op.attrs.get("kind", "max")
    if w.phase != "check" or not isinstance(x, Fragment):
        w.env[op.result] = None if not isinstance(x, Fragment) else _unknown(op, "")
        return
    gap = partner_gap(x.layout, tuple(x.shape), kind)
    if gap == "layout":
        w.not_modelled(op, f"row reductions of a {x.layout} fragment (modelled: the wgmma "
                           f"accumulator and register-A layouts, whose rows one quad holds)")
        w.env[op.result] = _unknown(op, "a row reduction of a layout that is not modelled")
        return
    if gap is not None:
        w.report(Finding(
            "tag.reduction", "error", f"row_{kind} over {x.layout}: {_gap_text(gap)}",
            op.loc, f"row_{kind}",
            "reduce a fragment in a wgmma accumulator or register-A layout"))
        w.env[op.result] = _unknown(op, "a row reduction over the wrong lanes")
        return
    if x.tag.state != "data":
        w.env[op.result] = Fragment(tuple(t.shape), t.layout, x.tag.copy(), op.loc)
        return
    from .softmax import consume, series_of, stat_fields
    consume(w, x, op, _label(op))
    pr, pc = w.pos["pr"], w.pos["pc"]
    rows, cols = x.shape
    kept = {}
    for name, term in x.tag.fields.items():
        at0 = z3.substitute(bv(term), (pc, z3.BitVecVal(0, 64)))
        step = z3.simplify(z3.substitute(bv(term), (pc, z3.BitVecVal(1, 64))) - at0)
        if z3.is_bv_value(step) and step.as_long() != 0:
            continue                           # differs between columns 0 and 1
        if at0.eq(bv(term)) or holds(w.ctx, bv(term) == at0,
                                     [*w.path, z3.ULT(pr, rows), z3.ULT(pc, cols)]):
            kept[name] = at0
    if "row" in x.tag.fields and "row" not in kept:
        row = x.tag.fields["row"]
        refute(w, op, "tag.reduction", bv(row) != z3.substitute(bv(row), (pc, z3.BitVecVal(0, 64))),
               layout=x.layout, rows=rows, cols=cols,
               message=lambda m, inst: (f"row_{kind} combines elements of different rows: row "
                                        f"tag {value(m, inst(bv(row)))} with the row of its "
                                        f"column 0: the reduction runs over the wrong axis"),
               hint="reduce along the key axis of the score tile (S = Q K^T: the columns)")
        w.env[op.result] = _unknown(op, "a row reduction that lost the row tag")
        return
    m = x.tag.meaning
    if kind not in ("max", "sum"):   # row_min: no softmax meaning, the kept fields only
        kept.pop("col", None)
        w.env[op.result] = Fragment(tuple(t.shape), t.layout, FragTag(
            "data", kept, x.tag.source, [], x.tag.reset_scope), op.loc)
        return
    meaning = None
    if isinstance(m, Exp):
        meaning = Stat("sum" if kind == "sum" else "max-exp", m.series, _block_span(m.series),
                       kept["row"], m.ref, op.loc)
    elif m is None or isinstance(m, Series):
        series = series_of(w, x, op, _label(op), op.arg("x"))
        if series is not None and mask.real_keys(w, op, series):
            meaning = Stat(kind, series, _block_span(series), kept["row"], None, op.loc)
    if meaning is None:
        w.not_modelled(op, f"row_{kind} of this value (modelled: the row max of a score tile, "
                           f"the row sums of a score tile and of exp2(x - m))")
        w.env[op.result] = _unknown(op, "a row reduction of a value that is not modelled")
        return
    fields = dict(kept)
    fields.pop("col", None)
    fields.update(stat_fields(w, meaning))
    w.env[op.result] = Fragment(tuple(t.shape), t.layout, FragTag(
        "data", fields, x.tag.source, [], x.tag.reset_scope, meaning=meaning), op.loc)


def _gap_text(gap) -> str:
    what, thread, row = gap[:3]
    if what == "mixes":
        return (f"the shuffle exchanges thread {thread}'s register of row {row} with lane "
                f"{gap[3]}, which holds row {gap[4]} there: the reduction mixes rows")
    if what == "misses":
        return (f"no lane the shuffle reaches from thread {thread} holds column {gap[3]} of "
                f"row {row}: the reduction misses it")
    return (f"the shuffle of thread {thread} adds column {gap[3]} of row {row} {gap[4]} "
            f"times (once is right)")


def _block_span(series: Series) -> Span:
    if series.loop is None:
        return Span(None, 0, 1)
    return Span(series.loop, series.block, bv(series.block) + 1)


def _label(op: Op) -> str:
    from .violations import label
    return label(op.arg("x"))


def _unknown(op: Op, why: str) -> Fragment:
    t = op.result.type
    return Fragment(tuple(t.shape), t.layout, FragTag("unknown", why_unknown=why), op.loc)
