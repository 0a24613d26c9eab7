"""The online softmax, continued: rescaling by alpha, the running row sum, and o / l.

  l * alpha, o * alpha         alpha starts from the max l (o) is relative to, same row
  x * c (c > 0 constant)       the scale folded into the exponent (scaled.py)
  l * alpha + row_sum(p)       both relative to the same max, over adjacent blocks
  o / l                        the same max, the same blocks, the same row; the keys
                               accumulated are exactly the unmasked ones (keys.py)
  o * (1 / l)                  the same checks as o / l, at the multiply (one reciprocal a
                               row and a multiply an element instead of a division each);
                               o times another row statistic is an error, times a row
                               vector of no known meaning not modelled (unverified)
"""

from __future__ import annotations

import z3

from argus.ir.nodes import Op
from argus.verify.smt import holds

from .meaning import (Alpha, Normalised, Reciprocal, Series, SoftAcc, Stat, differs, empty, eq,
                      resolve, same_series, span_same, span_text)
from .softmax import (constant, failed, is_rows, is_tile, meaning, row_check, rows_frag,
                      span_union, tile_frag)
from .values import FragTag, Fragment
from .violations import label, refute


def mul(w, op: Op, args) -> bool:
    a, b = args
    ma, mb = meaning(a), meaning(b)
    if isinstance(mb, Alpha) or isinstance(ma, Alpha):
        x, alpha, xi = (a, mb, "lhs") if isinstance(mb, Alpha) else (b, ma, "rhs")
        return _rescale(w, op, x, alpha, op.arg(xi))
    for o, other, oi in ((a, b, "rhs"), (b, a, "lhs")):
        if is_tile(o) and isinstance(meaning(o), SoftAcc) and is_rows(other):
            r = meaning(other)
            if isinstance(r, Reciprocal):
                return _normalise(w, op, o, r.frag, label(r.operand), "*")
            if r is None:            # a row vector the pass gives no meaning: not proved
                w.not_modelled(op, "the accumulator times a row vector that is neither "
                                   "alpha nor 1 / l")
                w.env[op.result] = failed(op, "the accumulator times an unknown row vector")
                return True
            name = label(op.arg(oi))
            refute(w, op, "tag.softmax-normalise", True, layout=o.layout,
                   message=lambda m, inst: (f"the attention accumulator is multiplied by "
                                            f"{name}, which is neither the rescale factor "
                                            f"exp2(m_old - m_new) nor 1 / the row sum"),
                   hint="normalise with o / l (or o * (1.0 / l)), l the running row sum")
            w.env[op.result] = failed(op, "the accumulator times another row vector")
            return True
    from . import scaled
    return scaled.mul(w, op, args)


def _rescale(w, op, x, alpha: Alpha, operand) -> bool:
    mx = meaning(x)
    name = label(operand)
    if constant(x, 0) or constant(x, 0.0):
        w.env[op.result] = Fragment(x.shape, op.result.type.layout, x.tag.copy(), op.loc)
        return True
    if isinstance(mx, Alpha):
        if not may_differ(w, mx.dst, alpha.src):
            w.env[op.result] = rows_frag(w, op, Alpha(mx.src, alpha.dst), alpha.dst.row)
        else:
            w.env[op.result] = rows_frag(w, op, None, alpha.dst.row)
        return True
    carried = (isinstance(mx, Stat) and mx.exp_sum) or isinstance(mx, SoftAcc)
    if not carried:
        what = mx.kind_text if isinstance(mx, Stat) else "not a row sum or an accumulator"
        refute(w, op, "tag.softmax-rescale", True,
               message=lambda m, inst: (f"{name} is multiplied by the rescale factor "
                                        f"exp2(m_old - m_new) but is {what}"),
               hint="rescale only the row sum l and the accumulator o, which are relative "
                    "to the previous max")
        w.env[op.result] = failed(op, "a rescale of a value that is not relative to a max")
        return True
    series = resolve(alpha.dst.series)
    layout = x.layout if is_tile(x) else f"rows({series.layout})"
    rows, cols = x.shape[0], (x.shape[1] if is_tile(x) else None)
    if not row_check(w, op, alpha.dst.row, mx.row, layout, rows, cols, f"{name} * alpha"):
        w.env[op.result] = failed(op, "a rescale of another row")
        return True
    bad = z3.And(z3.Not(empty(mx.span)), differs(w, mx.ref, alpha.src))
    model = refute(
        w, op, "tag.softmax-rescale", bad, layout=layout, rows=rows, cols=cols,
        message=lambda m, inst: (
            f"{name} holds {_holds(mx, m)} relative to m = {mx.ref.describe(m)}, but is "
            f"rescaled by exp2(m_old - m_new) with m_old = {alpha.src.describe(m)}: the "
            f"factor must start from the max {name} is relative to"),
        hint="compute alpha = exp2(m_i - m_new) from the running max before this block "
             "(before m_i is updated) and rescale l and o with it")
    if model is not None:
        w.env[op.result] = failed(op, "a rescale from the wrong max")
        return True
    if isinstance(mx, Stat):
        new = Stat("sum", mx.series, mx.span, resolve(mx.row), alpha.dst, op.loc)
        w.env[op.result] = rows_frag(w, op, new, new.row)
    else:
        new = SoftAcc(alpha.dst, mx.span, mx.series, mx.row, mx.col)
        w.env[op.result] = tile_frag(op, x, new, x.tag.contributions)
    return True


def may_differ(w, a: Stat, b: Stat) -> bool:
    return not holds(w.ctx, z3.Not(differs(w, a, b)), [*w.path])


def _holds(mx, m) -> str:
    what = "the row sums" if isinstance(mx, Stat) else "the products P V"
    return f"{what} of {span_text(mx.span, m)}"


def add(w, op: Op, args) -> bool:
    a, b = args
    ma, mb = meaning(a), meaning(b)
    sums = [m for m in (ma, mb) if isinstance(m, Stat) and m.exp_sum]
    if not sums or not (is_rows(a) and is_rows(b)):
        return False
    if constant(a, 0) or constant(b, 0):
        s = mb if constant(a, 0) else ma
        if isinstance(s, Stat) and s.exp_sum:
            w.env[op.result] = rows_frag(w, op, s, s.row)
            return True
    if len(sums) == 1:
        other, name = (mb, label(op.arg("rhs"))) if isinstance(ma, Stat) and ma.exp_sum \
            else (ma, label(op.arg("lhs")))
        what = other.kind_text if isinstance(other, Stat) else "not a row sum of exp2(x - m)"
        refute(w, op, "tag.softmax-sum", True,
               message=lambda m, inst: (f"the row sum adds {name}, which is {what}"),
               hint="the running sum is l_i * alpha + row_sum(p) with p = exp2(x - m_new)")
        w.env[op.result] = failed(op, "a row sum plus something else")
        return True
    A, B = ma, mb
    series = resolve(A.series) if not hasattr(resolve(A.series), "sinks") else resolve(B.series)
    if not same_series(A.series, B.series):
        refute(w, op, "tag.softmax-sum", True,
               message=lambda m, inst: "adds row sums of different score tiles",
               hint="sum exp2(x - m) of the one tile the softmax is over")
        w.env[op.result] = failed(op, "sums of different tiles")
        return True
    layout = f"rows({series.layout})"
    if not row_check(w, op, A.row, B.row, layout, series.rows, None, "row sum + row sum"):
        w.env[op.result] = failed(op, "sums of different rows")
        return True
    bad = z3.And(z3.Not(empty(A.span)), z3.Not(empty(B.span)), differs(w, A.ref, B.ref))
    model = refute(
        w, op, "tag.softmax-sum", bad, layout=layout, rows=series.rows,
        message=lambda m, inst: (
            f"adds the row sum over {span_text(A.span, m)} relative to m = "
            f"{A.ref.describe(m)} and the row sum over {span_text(B.span, m)} relative to "
            f"m = {B.ref.describe(m)}: they are relative to different maxima"),
        hint="rescale the old sum to the new max first: l_i * exp2(m_i - m_new) + "
             "row_sum(exp2(x - m_new))")
    if model is not None:
        w.env[op.result] = failed(op, "sums relative to different maxima")
        return True
    span = span_union(w, A.span, B.span)
    if span is None:
        refute(w, op, "tag.softmax-sum", True, layout=layout, rows=series.rows,
               message=lambda m, inst: (f"adds the row sum over {span_text(A.span, m)} and "
                                        f"the row sum over {span_text(B.span, m)}: not "
                                        f"adjacent blocks (a block is missing or counted "
                                        f"twice)"),
               hint="add each block's row_sum(p) once to the running sum of the earlier "
                    "blocks")
        w.env[op.result] = failed(op, "sums over non-adjacent blocks")
        return True
    newer = B if holds(w.ctx, eq(span.hi, B.span.hi), w.path) else A
    row = B.row if not hasattr(resolve(B.row), "sinks") else A.row
    new = Stat("sum", series, span, resolve(row), newer.ref, op.loc)
    w.env[op.result] = rows_frag(w, op, new, new.row)
    return True


def div(w, op: Op, args) -> bool:
    o, l = args
    if o in (1, 1.0) and not isinstance(o, bool) and is_rows(l) and isinstance(l, Fragment):
        # 1 / l: checked where it multiplies the accumulator; keeps l's row tags
        # (l as it is now: a later assign to l must not change what was inverted)
        snapshot = Fragment(l.shape, l.layout, l.tag.copy(), l.loc, l.origin)
        tag = l.tag.copy()
        tag.meaning = Reciprocal(snapshot, op.arg("rhs"))
        t = op.result.type
        w.env[op.result] = Fragment(tuple(t.shape), t.layout, tag, op.loc)
        return True
    if not (is_tile(o) and is_rows(l) and isinstance(meaning(o), SoftAcc)):
        return False
    return _normalise(w, op, o, l, label(op.arg("rhs")), "/")


def _normalise(w, op: Op, o, l, lname: str, how: str) -> bool:
    """o / l (how "/") or o * (1 / l) (how "*"): l the row sum of o's softmax, of the same
    max, blocks and row; the keys accumulated are exactly the unmasked ones."""
    mo, ml = meaning(o), meaning(l)
    expr = f"o / {lname}" if how == "/" else f"o * (1 / {lname})"
    if isinstance(l, Fragment) and l.tag.state == "empty":
        refute(w, op, "tag.softmax-normalise", True, layout=o.layout,
               message=lambda m, inst: (f"{expr}: {lname} still holds its initial "
                                        f"{l.tag.init}: no row sum is accumulated into it"),
               hint=f"accumulate the row sum in the key loop: assign({lname}, {lname} * "
                    f"alpha + row_sum(p))")
        w.env[op.result] = failed(op, "normalised by a constant")
        return True
    if not (isinstance(ml, Stat) and ml.exp_sum):
        what = ml.kind_text if isinstance(ml, Stat) else "not a row sum of exp2(x - m)"
        refute(w, op, "tag.softmax-normalise", True, layout=o.layout,
               message=lambda m, inst: f"{expr}: {lname} is {what}",
               hint="divide the accumulator by the running row sum l of the same softmax")
        w.env[op.result] = failed(op, "normalised by another statistic")
        return True
    series = resolve(mo.series)
    if not same_series(mo.series, ml.series) or not isinstance(series, Series):
        refute(w, op, "tag.softmax-normalise", True,
               message=lambda m, inst: f"{expr}: the sum is of another score tile",
               hint="divide by the row sum of the tile whose exp2 was accumulated")
        w.env[op.result] = failed(op, "normalised by another tile's sum")
        return True
    if not row_check(w, op, ml.row, mo.row, o.layout, o.shape[0], o.shape[1], f"{expr}"):
        w.env[op.result] = failed(op, "normalised by another row's sum")
        return True
    bad = z3.Or(differs(w, mo.ref, ml.ref), z3.Not(span_same(w, mo.span, ml.span, series)))
    model = refute(
        w, op, "tag.softmax-normalise", bad, layout=o.layout, rows=o.shape[0], cols=o.shape[1],
        message=lambda m, inst: (
            f"{expr}: o holds the products P V of {span_text(mo.span, m)} relative to "
            f"m = {mo.ref.describe(m)}, but {lname} is {ml.describe(m)}: the final "
            f"normalisation must use the same row's sum of the last iteration"),
        hint=f"divide by the row sum updated in the same iteration as o (assign({lname}, "
             f"{lname} * alpha + row_sum(p)) in every iteration)")
    if model is not None:
        w.env[op.result] = failed(op, "normalised by a stale sum")
        return True
    refute(w, op, "tag.softmax-normalise", empty(mo.span), layout=o.layout, rows=o.shape[0],
           cols=o.shape[1],
           message=lambda m, inst: "the key loop can run no iteration: o / l is 0 / 0 (NaN)",
           hint="make sure every block visits at least one key block")
    from . import keys
    keys.check(w, op, o, series)
    fields = {k: v for k, v in o.tag.fields.items()}
    t = op.result.type
    w.env[op.result] = Fragment(tuple(t.shape), t.layout, FragTag(
        "data", fields, o.tag.source, [], o.tag.reset_scope, meaning=Normalised(series)),
        op.loc)
    return True
