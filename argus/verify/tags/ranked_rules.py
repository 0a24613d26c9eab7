"""The iterated arg-max (top-k) idiom pack: moves the selection meanings of ranked.py
through the ops, after the rule of the packs before has given each result its tags.

Each rule recognises one step of the idiom from its operands' meanings and gives the
result the step's meaning; anything else gives none (a result with no meaning is what it
was before this pack: its stored values are "not proved", origin.py). The recognised
steps, in the router's spelling (argus/kernels/moe_route.py):

  l = load(tile(X, (R, C), (t, 0)))              Keys(0): C is X's whole row
  -keys                                          Keys(0) of the other sign
  col = cast(col_of(l), fp32)                    Col
  mj = row_max(rest)                             Top(k)            of Keys(k)
  rest == mj                                     IsTop(k)
  select(IsTop(k), col, fill)                    Ties(k)
  -row_max(-Ties(k))   (fill >= C - 1)           Pick(k), ties low
  row_max(Ties(k))     (fill <= 0)               Pick(k), ties high
  select(col == Pick(k), -inf, Keys(k))          Keys(k + 1)
  Keys(k) == -inf                                Picked(k)
  (l - row_max(l)) * LOG2E, exp2                 Soft (the tile)
  (mj - row_max(l)) * LOG2E, exp2                Soft(k)
  row_sum(select(Picked(k), Soft, 0)), row_sum(Soft)   Denom(k), Denom(C)
  Soft(k) / Denom(n)                             Weight(k, n)
  cast(Pick(k), int32 or fp32)                   Pick(k) (column numbers are exact)

A loop that repeats a round carries Keys(j) by induction (ranked_loops.py)."""

from __future__ import annotations

import math

from argus.ir.nodes import Op

from . import ranked as R
from .packs import meaning_rule
from .values import Fragment, GlobalTile
from .vectors import plain


def _m(w, operand):
    v = w.value(operand)
    return R.meaning(v) if isinstance(v, Fragment) else v


def _set(w, op: Op, m) -> None:
    out = w.env.get(op.result) if op.results else None
    if isinstance(out, Fragment):
        out.ranked = m


def frag_assign(w, op: Op, base) -> None:
    base(w, op)
    dst, src = w.value(op.arg("dst")), w.value(op.arg("src"))
    if isinstance(dst, Fragment):
        dst.ranked = R.fresh(R.meaning(src)) if isinstance(src, Fragment) else None


def _load(w, op: Op):
    src, out = w.value(op.arg("src")), w.env.get(op.result)
    if not (isinstance(src, GlobalTile) and isinstance(out, Fragment) and plain(out)
            and len(src.box) == 2 and len(out.shape) == 2):
        return None
    cols = src.extents[1]
    if not (isinstance(cols, int) and cols == src.box[1] and _zero(src.origin[1])):
        return None                         # not whole rows: no rank over the row
    if cols > 1 << 24:
        return None
    return R.Keys(R.Row(src.tensor, cols, op.loc), 1, 0, R.Tie())


def _zero(x) -> bool:
    return (isinstance(x, int) and x == 0) or (not isinstance(x, (int, float)) and
                                               R.same(x, 0))


def _coord(w, op: Op):
    x = w.value(op.arg("x"))
    if op.attrs.get("axis") == 1 and isinstance(x, Fragment) and len(x.shape) == 2 \
            and plain(x):
        return R.Col(x.shape[1])
    return None


def _cast(w, op: Op):
    m = _m(w, op.arg("x"))
    if isinstance(m, R.Col) or (isinstance(m, R.Pick) and not m.negated):
        return m
    return None


def _neg(w, op: Op):
    m = _m(w, op.arg("x"))
    if isinstance(m, R.Ties) and not m.negated:
        return R.Ties(m.row, m.sign, m.k, m.tie, m.fill, True)
    if isinstance(m, R.Pick) and m.negated:
        return R.Pick(m.row, m.sign, m.k, m.tie, False)
    if isinstance(m, R.Keys) and R.same(m.k, 0):
        return R.Keys(m.row, -m.sign, 0, R.Tie())
    return None


def _row(w, op: Op):
    m, kind = _m(w, op.arg("x")), op.attrs.get("kind")
    if kind == "max" and isinstance(m, R.Keys):
        return R.Top(m.row, m.sign, m.k)
    if kind == "max" and isinstance(m, R.Ties):
        if m.negated and m.fill >= m.row.ncols - 1 and m.tie.bind("low"):
            return R.Pick(m.row, m.sign, m.k, "low", True)
        if not m.negated and m.fill <= 0 and m.tie.bind("high"):
            return R.Pick(m.row, m.sign, m.k, "high", False)
        return None
    if kind == "sum" and isinstance(m, R.SoftPicked):
        return R.Denom(m.row, m.k)
    if kind == "sum" and isinstance(m, R.Soft) and m.k is None:
        return R.Denom(m.row, m.row.ncols)
    return None


def _cmp(w, op: Op):
    if op.attrs.get("pred") != "eq":
        return None
    a, b = _m(w, op.arg("lhs")), _m(w, op.arg("rhs"))
    for x, y in ((a, b), (b, a)):
        if isinstance(x, R.Keys) and isinstance(y, R.Top) and x.row is y.row \
                and x.sign == y.sign and R.same(x.k, y.k):
            return R.IsTop(x.row, x.sign, x.k, x.tie)
        if isinstance(x, R.Col) and isinstance(y, R.Pick) and not y.negated \
                and x.ncols == y.row.ncols:
            return R.IsPick(y.row, y.sign, y.k, y.tie)
        if isinstance(x, R.Keys) and isinstance(y, float) and y == -math.inf:
            return R.Picked(x.row, x.sign, x.k, x.tie)
    return None


def _select(w, op: Op):
    c, a, b = (_m(w, op.arg(n)) for n in ("cond", "a", "b"))
    if isinstance(c, R.IsTop) and isinstance(a, R.Col) and a.ncols == c.row.ncols \
            and isinstance(b, float) and math.isfinite(b):
        return R.Ties(c.row, c.sign, c.k, c.tie, b, False)
    if isinstance(c, R.IsPick) and isinstance(a, float) and a == -math.inf \
            and isinstance(b, R.Keys) and b.row is c.row and b.sign == c.sign \
            and R.same(b.k, c.k) and b.tie.bind(c.tie):
        return R.Keys(b.row, b.sign, R.plus(b.k, 1), b.tie)
    if isinstance(c, R.Picked) and c.sign == 1 and isinstance(a, R.Soft) and a.k is None \
            and a.row is c.row and isinstance(b, float) and b == 0.0:
        return R.SoftPicked(c.row, c.k)
    return None


def _sub(w, op: Op):
    a, b = _m(w, op.arg("lhs")), _m(w, op.arg("rhs"))
    if not (isinstance(b, R.Top) and b.sign == 1 and R.same(b.k, 0)):
        return None                                    # minus the row max
    if isinstance(a, R.Keys) and a.row is b.row and a.sign == 1 and R.same(a.k, 0):
        return R.Centered(a.row, None)
    if isinstance(a, R.Top) and a.row is b.row and a.sign == 1:
        return R.Centered(a.row, a.k)
    return None


def _mul(w, op: Op):
    a, b = _m(w, op.arg("lhs")), _m(w, op.arg("rhs"))
    for x, y in ((a, b), (b, a)):
        if isinstance(x, R.Centered) and not x.scaled and isinstance(y, float) \
                and abs(y - R.LOG2E) <= 1e-12 * R.LOG2E:
            return R.Centered(x.row, x.k, True)
    return None


def _exp2(w, op: Op):
    m = _m(w, op.arg("x"))
    if isinstance(m, R.Centered) and m.scaled:
        return R.Soft(m.row, m.k)
    return None


def _div(w, op: Op):
    a, b = _m(w, op.arg("lhs")), _m(w, op.arg("rhs"))
    if isinstance(a, R.Soft) and a.k is not None and isinstance(b, R.Denom) \
            and a.row is b.row:
        return R.Weight(a.row, a.k, b.n)
    return None


STEPS = {"load": _load, "frag.coord": _coord, "math.cast": _cast, "math.neg": _neg,
         "reduce.row": _row, "math.cmp": _cmp, "math.select": _select, "math.sub": _sub,
         "math.mul": _mul, "math.exp2": _exp2, "math.div": _div}
# the rule of the packs before, then this pack's meaning of the result
follow = meaning_rule(STEPS, _set)
