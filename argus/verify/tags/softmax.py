"""The online softmax (flash attention) in elementwise math: the dispatch of every math op,
and the running max, p = exp2(x - m) and m_old - m_new (the rescale, the running sum and
o / l are in rescale.py). Each rule checks the invariant its step needs (meaning.py says
what the values stand for) and reports where it breaks:

  maximum(m_old, row_max(x))   the same score tile and row, and adjacent blocks
  x - m                        m is the running max of x itself, of the same row, and
                               covers x's block (so p <= 1 and p is relative to the max
                               the row sum and the accumulator will be relative to)
  m_old - m_new                the same tile and row; m_new includes m_old's blocks

Any other math falls back to the core pack's rule (memory.elementwise: tags kept when all operands agree); a
fallback that loses the tags is reported as not modelled, never silently."""

from __future__ import annotations

import math
from dataclasses import replace

import z3

from argus.ir.nodes import Op, Value
from argus.verify.smt import bv, holds, value

from . import indices, kcoverage, mask
from .meet import LIVE
from .meaning import (Alpha, Diff, Exp, Gap, Series, Span, Stat, empty, eq, has_key, resolve,
                      row_differs, same_series, span_text, state, subst)
from .values import FragTag, Fragment
from .violations import atom_of, label, locate, refute



# -- dispatch ----------------------------------------------------------------------------
def math_op(w, op: Op, base) -> None:
    """The softmax idioms of an elementwise op (the attention pack's refinement of the
    core rule `base`, which gets every op these idioms do not give a meaning)."""
    if w.phase != "check":
        base(w, op)
        return
    name = op.opcode.split(".", 1)[1]
    if name == "cmp":
        indices.cmp(w, op)
        return
    if name == "select":
        if not mask.select(w, op):
            fallback(w, op, base)
        return
    if indices.arith(w, op):
        return
    args = [w.value(o) for o in op.operands]
    if any(isinstance(a, Fragment) and a.tag.state == "unknown" for a in args):
        fallback(w, op, base)
        return
    from . import rescale
    handler = {"max": _max, "sub": _sub, "exp2": _exp2, "mul": rescale.mul,
               "add": rescale.add, "div": rescale.div}.get(name)
    if handler is None or not handler(w, op, args):
        fallback(w, op, base)


def fallback(w, op: Op, base) -> None:
    """The core rule `base`; the result is a new number (no softmax meaning), and a join that
    loses known tags is reported as not modelled."""
    args = [w.value(o) for o in op.operands]
    frags = [a for a in args if isinstance(a, Fragment)]
    if any(indices.index_fragment(f) for f in frags):
        w.not_modelled(op, "index or predicate fragments other than in masks and index sums")
        w.env[op.result] = failed(op, "an index fragment used as data")
        return
    base(w, op)
    out = w.env.get(op.result)
    if isinstance(out, Fragment):
        out.tag.meaning = None
        if out.tag.state == "unknown" and not any(f.tag.state == "unknown" for f in frags):
            w.not_modelled(op, f"{op.opcode} of fragments whose tags differ")


def failed(op: Op, why: str) -> Fragment:
    """The result of an op whose check failed (or that the pass cannot follow): unknown."""
    t = op.result.type
    return Fragment(tuple(t.shape), t.layout, FragTag("unknown", why_unknown=why), op.loc)


# -- helpers -----------------------------------------------------------------------------
def meaning(x):
    return x.tag.meaning if isinstance(x, Fragment) else None


def is_rows(x) -> bool:
    return isinstance(x, Fragment) and len(x.shape) == 1


def is_tile(x) -> bool:
    return isinstance(x, Fragment) and len(x.shape) == 2


def constant(x, c) -> bool:
    """x is a fragment that still holds the constant c everywhere (its init)."""
    if not (isinstance(x, Fragment) and x.tag.state == "empty"):
        return False
    init = x.tag.init
    return isinstance(init, (int, float)) and (init == c or (math.isinf(c) and init == c))


def innermost_loop(w):
    """(name, term) of the innermost loop counter in scope, or (None, 0)."""
    for name in reversed(w.scope_vars()):
        if name in w.trip and name not in w.schedules:
            return name, w.ctx.vars[name].term
    return None, 0


def recipe(w, value, depth: int = 0):
    """How `value` is computed: its op (opcode, attributes) over the recipes of its
    operands, down to the ops that are not elementwise math (the fragment a wgmma
    accumulates into, a load): those by identity. Scalars by their term (a split loop's
    parts share their counter, so `j` of either part is one term), constants by value."""
    if not isinstance(value, Value):
        return ("const", repr(value))
    op = w.defs.get(value)
    if op is None or depth > 32:
        term = w.env.get(value)
        return ("value", term.sexpr() if hasattr(term, "sexpr") else id(value))
    if not hasattr(value.type, "layout"):          # a scalar: its term
        term = w.env.get(value)
        if hasattr(term, "sexpr"):
            return ("term", z3.simplify(bv(term)).sexpr())
        if isinstance(term, (int, float)):
            return ("const", repr(term))
    if not op.opcode.startswith(("math.", "tag.add", "frag.convert", "frag.cast")):
        return ("root", id(op))
    attrs = tuple(sorted((k, repr(v)) for k, v in op.attrs.items()))
    return (op.opcode, attrs, tuple(recipe(w, o, depth + 1) for o in op.operands))


def series_of(w, x: Fragment, op: Op, name: str, value=None) -> Series | None:
    """The Series a score tile stands for, made on first use (identity matters); `value`
    is the IR value of x (for its recipe)."""
    m = x.tag.meaning
    if isinstance(m, Series):
        return m
    if m is not None or x.tag.state != "data" or "row" not in x.tag.fields:
        return None
    consume(w, x, op, name)
    loop, block = innermost_loop(w)
    s = Series(name, op.loc, loop, block, dict(x.tag.fields), x.shape[0], x.shape[1], x.layout,
               None, *real_of(x), recipe(w, value) if value is not None else None)
    x.tag.meaning = s
    x.tag.contributions = []
    return s


def real_of(x: Fragment) -> tuple:
    """(real row, real column) of a product's elements (Contribution.real_row/real_col of
    its first site), (None, None) when it has none."""
    contribs = x.tag.contributions
    if not contribs:
        return None, None
    return contribs[0].real_row, contribs[0].real_col


def consume(w, x: Fragment, op: Op, name: str = "") -> None:
    """A finished accumulator is read (masked, reduced, exponentiated): every k must have
    been accumulated exactly once into it (the S = Q K^T head-dim check)."""
    contribs = x.tag.contributions
    key = tuple(id(c) for c in contribs)
    st = state(w)
    if not contribs or key in st.consumed:
        return
    st.consumed.add(key)
    # over element positions; a counterexample's thread is then looked up in the atom
    pr, pc = w.pos["pr"], w.pos["pc"]
    bounds = [z3.ULT(pr, x.shape[0]), z3.ULT(pc, x.shape[1])]
    live = x.tag.fields.get(LIVE)
    if live is not None:
        # padding rows of a segment (past a head's last query) are computed but never
        # stored (padding.check at the store): the head dim must cover the real rows
        bounds.append(bv(live) == 1)
    # an element that is not a product of real rows (a query past the head, a key past
    # the head's keys: the next head's rows or TMA zeros) is not a score: a store drops
    # its row (padding.py), and a key column must be masked before it is reduced
    # (mask.real_keys); the head dim must cover the real ones
    bounds += [r for r in real_of(x) if r is not None]
    wg = w.role.warpgroup if w.role else None
    base = wg * 128 if wg is not None else 0
    before = len(w.findings)
    kcoverage.k_coverage(w, op, x.tag, bv, bounds, w.scope_vars(), x, wg, base,
                         (name or x.tag.source or "the accumulator", (pr, pc)),
                         k_range=_head_dim(w, contribs))
    atom = atom_of(x.layout)
    for i in range(before, len(w.findings)):
        f = w.findings[i]
        cex = f.counterexample
        if atom is None or cex is None or not cex.elements:
            continue
        r, c = cex.elements[0].index
        t, v, cell = locate(atom, r, c, x.shape[0])
        base = cex.warpgroup * 128 if cex.warpgroup is not None else 0
        w.findings[i] = replace(f, counterexample=replace(
            cex, thread=base + t, warp=(base + t) // 32, lane=(base + t) % 32, register=v,
            layout=atom, cell=cell))


def _head_dim(w, contribs):
    """The k a score tile must meet when it is one product (no counter accumulated since
    its reset: S = Q K^T of one block): (lo, width), the columns its instructions read,
    from the first's k at kk = 0 (a head's column block of a wider Q, layout bshd), each of
    which must be a column of the tensor; None (every k of the tensor) otherwise."""
    if len(contribs) != 1 or contribs[0].accumulated:
        return None
    c = contribs[0]
    lo = z3.substitute(bv(c.k[0]), (w.pos["kk"], z3.BitVecVal(0, 64)))
    return lo, c.kinstr * len(c.k)


def stat_fields(w, stat: Stat) -> dict:
    """The user-visible tag of a statistic: its row, and the series' other row-constant
    fields (e.g. iteration) of its last block."""
    out = {}
    row = resolve(stat.row)
    if not hasattr(row, "sinks"):
        out["row"] = bv(row)
    series = resolve(stat.series)
    if isinstance(series, Series):
        pairs = []
        if series.loop is not None and not isinstance(series.block, int):
            pairs = [(bv(series.block), bv(stat.span.hi) - 1)]
        for f, t in series.fields.items():
            if f in ("row", "col") or _mentions(t, w.pos["pc"]):
                continue
            out[f] = subst(t, pairs)
    return out


def _mentions(expr, var) -> bool:
    if isinstance(expr, int):
        return False
    if expr.eq(var):
        return True
    return any(_mentions(c, var) for c in expr.children())


def rows_frag(w, op: Op, stat_or_meaning, row) -> Fragment:
    t = op.result.type
    fields = stat_fields(w, stat_or_meaning) if isinstance(stat_or_meaning, Stat) else (
        {"row": bv(resolve(row))} if not hasattr(resolve(row), "sinks") else {})
    return Fragment(tuple(t.shape), t.layout, FragTag("data", fields, meaning=stat_or_meaning),
                    op.loc)


def tile_frag(op: Op, like: Fragment, meaning_, contributions=None) -> Fragment:
    t = op.result.type
    tag = like.tag.copy()
    tag.meaning = meaning_
    tag.contributions = list(contributions) if contributions is not None else []
    return Fragment(tuple(t.shape), t.layout, tag, op.loc)


def row_check(w, op, rowvec_row, tile_row, layout, rows, cols, what: str) -> bool:
    """The row vector's row equals the tile's row at every element (broadcast)."""
    bad = row_differs(rowvec_row, tile_row)
    model = refute(
        w, op, "tag.softmax-row", bad, layout=layout, rows=rows, cols=cols,
        message=lambda m, inst: (f"{what}: the tile's row {value(m, inst(bv(resolve(tile_row))))}"
                                 f" meets the statistic of row "
                                 f"{value(m, inst(bv(resolve(rowvec_row))))}"),
        hint="combine a row statistic only with the tile it was reduced from (same rows, "
             "same warpgroup)")
    return model is None


# -- maximum -----------------------------------------------------------------------------
def _max(w, op: Op, args) -> bool:
    a, b = args
    ma, mb = meaning(a), meaning(b)
    stats = [m for m in (ma, mb) if isinstance(m, Stat) and m.kind == "max"]
    if not stats or not (is_rows(a) and is_rows(b)):
        return False
    if constant(a, -math.inf) or constant(b, -math.inf):
        stat = mb if constant(a, -math.inf) else ma
        w.env[op.result] = rows_frag(w, op, stat, stat.row)
        return True
    if len(stats) == 1:
        other, name = (mb, label(op.arg("rhs"))) if isinstance(ma, Stat) and ma.kind == "max" \
            else (ma, label(op.arg("lhs")))
        what = other.kind_text if isinstance(other, Stat) else "not a row max"
        refute(w, op, "tag.softmax-max", True,
               message=lambda m, inst: (f"maximum combines a running row max with {name}, "
                                        f"which is {what}"),
               hint="the running max is maximum(m_i, row_max(x)) of the masked score tile x")
        w.env[op.result] = failed(op, "a running max combined with another statistic")
        return True
    return _combine_max(w, op, ma, mb)


def _combine_max(w, op, A: Stat, B: Stat) -> bool:
    if not same_series(A.series, B.series):
        sa, sb = resolve(A.series), resolve(B.series)
        refute(w, op, "tag.softmax-max", True,
               message=lambda m, inst: (f"maximum combines the row max of {sa.name} (line "
                                        f"{sa.loc.line}) with the row max of {sb.name} (line "
                                        f"{sb.loc.line})"),
               hint="take the running max of the one tile the softmax exponentiates")
        w.env[op.result] = failed(op, "maxima of different tiles")
        return True
    series = resolve(A.series)
    if not row_check(w, op, A.row, B.row, f"rows({series.layout})", series.rows, None,
                      "maximum"):
        w.env[op.result] = failed(op, "maxima of different rows")
        return True
    span = span_union(w, A.span, B.span)
    if span is None:
        refute(w, op, "tag.softmax-max", z3.BoolVal(True),
               layout=f"rows({series.layout})",
               message=lambda m, inst: (f"maximum combines the max over "
                                        f"{span_text(A.span, m)} with the max over "
                                        f"{span_text(B.span, m)}: the blocks are not "
                                        f"adjacent, so the running max misses blocks"),
               hint="update the running max once per block: m_new = maximum(m_i, "
                    "row_max(x)) with m_i the max of every earlier block")
        w.env[op.result] = failed(op, "a running max over non-adjacent blocks")
        return True
    row = B.row if not hasattr(resolve(B.row), "sinks") else A.row
    stat = Stat("max", series, span, resolve(row), None, op.loc)
    w.env[op.result] = rows_frag(w, op, stat, stat.row)
    return True


def span_union(w, a: Span, b: Span) -> Span | None:
    """The union of two adjacent (or equal) spans of one loop, else None."""
    if a.loop != b.loop:
        return None
    facts = list(w.path)
    if holds(w.ctx, z3.And(eq(a.lo, b.lo), eq(a.hi, b.hi)), facts):
        return a
    if holds(w.ctx, eq(a.hi, b.lo), facts):
        return Span(a.loop, a.lo, b.hi)
    if holds(w.ctx, eq(b.hi, a.lo), facts):
        return Span(a.loop, b.lo, a.hi)
    return None


# -- x - m and m_old - m_new ---------------------------------------------------------------
def _sub(w, op: Op, args) -> bool:
    a, b = args
    ma, mb = meaning(a), meaning(b)
    if is_tile(a) and is_rows(b) and isinstance(mb, Stat) and mb.kind == "max":
        return _diff(w, op, a, mb)
    if is_rows(a) and is_rows(b) and isinstance(mb, Stat) and mb.kind == "max":
        if constant(a, -math.inf):
            src = Stat("max", mb.series, Span(mb.span.loop, mb.span.lo, mb.span.lo), mb.row)
            w.env[op.result] = rows_frag(w, op, Gap(src, mb), mb.row)
            return True
        if isinstance(ma, Stat) and ma.kind == "max":
            return _gap(w, op, ma, mb)
    return False


def _diff(w, op, x: Fragment, m: Stat) -> bool:
    series = series_of(w, x, op, label(op.arg("lhs")), op.arg("lhs"))
    if series is None:
        return False
    if not same_series(m.series, series):
        other = resolve(m.series)
        refute(w, op, "tag.softmax-exp", True, layout=x.layout,
               message=lambda mod, inst: (
                   f"x - m subtracts the running max of {other.name} (line {other.loc.line}) "
                   f"from {series.name}: p is not relative to the max of the values it "
                   f"exponentiates (p can exceed 1, and masked keys are not zero)"),
               hint="take the row max of the tile you exponentiate: m_new = maximum(m_i, "
                    "row_max(x)); p = exp2(x - m_new)")
        w.env[op.result] = failed(op, "exp2 relative to another tile's max")
        return True
    if not row_check(w, op, m.row, series.fields["row"], x.layout, x.shape[0], x.shape[1],
                      "x - m"):
        w.env[op.result] = failed(op, "a max of another row")
        return True
    if m.span.loop == series.loop:
        inside = z3.And(z3.ULE(bv(m.span.lo), bv(series.block)),
                        z3.ULT(bv(series.block), bv(m.span.hi)))
        bad = z3.And(z3.Not(inside), has_key(w, series, w.pos["pr"], series.block))
    else:
        bad = z3.BoolVal(True)
    model = refute(
        w, op, "tag.softmax-exp", bad, layout=x.layout, rows=x.shape[0], cols=x.shape[1],
        message=lambda mod, inst: (
            f"p = exp2(x - m) with m = {m.describe(mod)}: it does not include block "
            f"{value(mod, series.block)} of {series.name}, so p can exceed 1 and is "
            f"relative to another max than the row sum and the accumulator of this step"),
        hint="subtract the max that includes this block: m_new = maximum(m_i, row_max(x)), "
             "then p = exp2(x - m_new)")
    if model is not None:
        w.env[op.result] = failed(op, "exp2 relative to a max without this block")
        return True
    w.env[op.result] = tile_frag(op, x, Diff(series, m))
    return True


def _gap(w, op, src: Stat, dst: Stat) -> bool:
    if not same_series(src.series, dst.series):
        refute(w, op, "tag.softmax-rescale", True,
               message=lambda m, inst: "m_old - m_new subtracts row maxima of different tiles",
               hint="alpha = exp2(m_i - m_new) with both maxima of the same score tile")
        w.env[op.result] = failed(op, "maxima of different tiles")
        return True
    series = resolve(dst.series)
    if not row_check(w, op, src.row, dst.row, f"rows({series.layout})", series.rows, None,
                      "m_old - m_new"):
        w.env[op.result] = failed(op, "maxima of different rows")
        return True
    covers = z3.And(z3.ULE(bv(dst.span.lo), bv(src.span.lo)),
                    z3.ULE(bv(src.span.hi), bv(dst.span.hi))) if src.span.loop == dst.span.loop \
        else z3.BoolVal(False)
    bad = z3.And(z3.Not(empty(src.span)), z3.Not(covers))
    model = refute(
        w, op, "tag.softmax-rescale", bad, layout=f"rows({series.layout})", rows=series.rows,
        message=lambda m, inst: (
            f"exp2(m_old - m_new) with m_old = {src.describe(m)} and m_new = "
            f"{dst.describe(m)}: m_new does not include m_old's blocks, so the factor "
            f"can exceed 1 and the running max is not carried"),
        hint="m_new = maximum(m_i, row_max(x)) includes every block of m_i")
    if model is not None:
        w.env[op.result] = failed(op, "a rescale between unrelated maxima")
        return True
    w.env[op.result] = rows_frag(w, op, Gap(src, dst), dst.row)
    return True


# -- exp2 --------------------------------------------------------------------------------
def _exp2(w, op: Op, args) -> bool:
    (x,) = args
    m = meaning(x)
    if isinstance(m, Diff):
        mask.first_block(w, op, x, m.series, m.ref)
        w.env[op.result] = tile_frag(op, x, Exp(m.series, m.ref))
        return True
    if isinstance(m, Gap):
        w.env[op.result] = rows_frag(w, op, Alpha(m.src, m.dst), m.dst.row)
        return True
    return False
