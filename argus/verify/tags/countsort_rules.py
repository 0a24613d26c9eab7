"""The counting-sort idiom pack's transfers: count meanings (countsort.py) moved through the
ops of 1-D plain vectors, after the rule of the packs before gave each result its tags.

  load of an int tile                  Read: X(base + pr) inside the tile's window, else 0
  row_of(x), constants, scalars        their integer terms (scalars read from a count
                                       vector: the entry's term, countsort.resolve)
  +, -, *, casts                       exact on the terms
  comparisons, select                  Bool terms, if-then-else
  prefix_sum(indicator of X == x)      Cnt(x, min(base + pr, end)) - Cnt(x, min(base, end))
  prefix_sum(indicator of X < x)       the same in Below (countsort.py)
  element(v, i)                        v's term at i (recorded for the scalar)
  prefix_sum(load_indices(C)) of a whole count vector C, and its entries: the *offsets*
  of C (recorded: the first slot of each key, countsort_scatter.py)
  element(v, i) whose term is Below(x, N), the entries of the whole key array below x:
  key x's first slot, counted from the keys (recorded likewise)

Anything else gives no meaning."""

from __future__ import annotations

import math

import z3

from argus.ir.nodes import Op
from argus.verify.smt import WIDTH, bv, concrete

from . import countsort as C
from . import countsort_lanes
from . import segments
from .routing import IndexVector
from .packs import meaning_rule
from .values import Fragment, GlobalTile
from .vectors import plain


def _frag1(x) -> bool:
    return isinstance(x, Fragment) and plain(x) and len(x.shape) == 1


def _operand(w, operand):
    """An operand's meaning: a Val/Pred/Read of a fragment, a term for a scalar, None."""
    v = w.value(operand)
    if isinstance(v, Fragment):
        return C.meaning(v)
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return C.Val(z3.BitVecVal(v, WIDTH))
    if isinstance(v, float):
        return C.Val(z3.BitVecVal(int(v), WIDTH)) if math.isfinite(v) and v == int(v) \
            else None
    if z3.is_expr(v) and not z3.is_bool(v):
        return C.Val(bv(C.resolve(w, v)))
    return None


def _term(m):
    return m.term if isinstance(m, (C.Val, C.Read)) else None


def _set(w, op: Op, m) -> None:
    out = w.env.get(op.result) if op.results else None
    if isinstance(out, Fragment):
        out.counted = m if _frag1(out) else None


def frag_assign(w, op: Op, base) -> None:
    base(w, op)
    dst, src = w.value(op.arg("dst")), w.value(op.arg("src"))
    if isinstance(dst, Fragment):
        m = _operand(w, op.arg("src"))
        dst.counted = m if _frag1(dst) and isinstance(m, C.Val) and \
            (isinstance(src, Fragment) or not C.mentions(m.term, w.pos["pr"])) else None


def frag_alloc(w, op: Op, base) -> None:
    base(w, op)
    init = op.attrs.get("init")
    out = w.env.get(op.result)
    if _frag1(out) and isinstance(init, (int, float)) and math.isfinite(init) \
            and init == int(init):
        out.counted = C.Val(z3.BitVecVal(int(init), WIDTH))


def _load(w, op: Op):
    src, out = w.value(op.arg("src")), w.env.get(op.result)
    if not (isinstance(src, GlobalTile) and _frag1(out) and len(src.box) == 1
            and str(getattr(op.result.type, "dtype", "")).startswith(("int", "i"))):
        return None
    q = bv(src.origin[0]) + w.pos["pr"]
    inside = segments.inside(src, [q], w)
    end = src.window.end if src.window is not None else src.extents[0]
    x = C.entry_fn(w, src.tensor)(q)
    return C.Read(z3.If(inside, x, z3.BitVecVal(0, WIDTH)), src.tensor, bv(src.origin[0]),
                  bv(end))


def _coord(w, op: Op):
    x = w.value(op.arg("x"))
    return C.Val(w.pos["pr"]) if _frag1(x) and op.attrs.get("axis") == 0 else None


def _cast(w, op: Op):
    m = _operand(w, op.arg("x"))
    return m if isinstance(m, (C.Val, C.Read)) else None


def _binary(fn):
    def rule(w, op: Op):
        a, b = _operand(w, op.arg("lhs")), _operand(w, op.arg("rhs"))
        if _term(a) is None or _term(b) is None:
            return None
        return C.Val(z3.simplify(fn(bv(_term(a)), bv(_term(b)))))
    return rule


CMP = {"eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "lt": lambda a, b: a < b,
       "le": lambda a, b: a <= b, "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b}


def _cmp(w, op: Op):
    fn = CMP.get(op.attrs.get("pred"))
    a, b = _operand(w, op.arg("lhs")), _operand(w, op.arg("rhs"))
    if fn is None or _term(a) is None or _term(b) is None:
        return None
    key = None
    # an indicator of the keys: X == x (Cnt's) or X < x, x > X (Below's), x uniform
    for x, y, preds, kind in ((a, b, ("eq",), "count"), (b, a, ("eq",), "count"),
                              (a, b, ("lt",), "below"), (b, a, ("gt",), "below")):
        if op.attrs.get("pred") in preds and isinstance(x, C.Read) and \
                isinstance(y, C.Val) and not C.mentions(y.term, w.pos["pr"]):
            key = (x.tensor, x.base, x.end, y.term, kind)
    return C.Pred(fn(bv(_term(a)), bv(_term(b))), key)


def _select(w, op: Op):
    c, a, b = (_operand(w, op.arg(n)) for n in ("cond", "a", "b"))
    if not isinstance(c, C.Pred) or _term(a) is None or _term(b) is None:
        return None
    keys = [k for k in (c.key, getattr(a, "key", None), getattr(b, "key", None)) if k]
    key = keys[0] if keys and all(k is keys[0] for k in keys) else None
    return C.Val(z3.If(c.term, bv(_term(a)), bv(_term(b))), key)


def _prefix_sum(w, op: Op):
    x = w.value(op.arg("x"))
    m = C.meaning(x) if isinstance(x, Fragment) else None
    if not (_frag1(x) and isinstance(m, C.Val)) or w.phase != "check":
        return None
    lanes = _lanes(w, m.term)
    if lanes is not None:                   # a count per lane: the lanes before (lanes.py)
        kind, tensor, s = lanes
        a = bv(m.term)
        return C.Val(countsort_lanes.sum_fn(w, tensor, s)(a.arg(0), a.arg(1), a.arg(2),
                                                          a.arg(3)))
    if m.key is None:
        return None
    tensor, base, end, key, kind = m.key
    pr, n = w.pos["pr"], x.shape[0]
    q = base + pr
    one, zero = z3.BitVecVal(1, WIDTH), z3.BitVecVal(0, WIDTH)
    entry = C.entry_fn(w, tensor)
    indicator = z3.If(z3.And(C.KINDS[kind](entry(q), key), z3.ULT(q, end)), one, zero)
    if not C.proves(w, bv(m.term) == indicator, [*w.path, z3.ULT(pr, n)]):
        return None
    cnt = C.count_fn(w, tensor, kind)
    run = cnt(key, C.umin(q, end)) - cnt(key, C.umin(base, end))
    record = {"tensor": tensor, "base": base, "end": end, "key": key, "n": n, "kind": kind,
              "depth": len(w.frames),
              "tile": cnt(key, C.umin(base + n, end)) - cnt(key, C.umin(base, end))}
    w.__dict__.setdefault("_countsort_prefix", []).append(record)
    return C.Val(run)


def _lanes(w, term):
    """(kind, tensor, stride) when `term` is SC(x, pr, n, end), a count per lane."""
    t = bv(term)
    if not (z3.is_app(t) and t.num_args() == 4):
        return None
    got = countsort_lanes.kind_of(w, t.decl())
    return got if got is not None and got[0] == "lanes" and t.arg(1).eq(w.pos["pr"]) \
        else None


def prefix_sum(w, op: Op, base) -> None:
    base(w, op)
    x, out = w.value(op.arg("x")), w.env.get(op.result)
    if isinstance(x, IndexVector) and isinstance(out, IndexVector) and x.source and \
            concrete(bv(x.origin)) == 0 and concrete(bv(x.extent)) == x.length and \
            x.segment is None:
        w.__dict__.setdefault("_countsort_offsets", {})[id(out)] = (out, x.source)
        return
    try:
        m = _prefix_sum(w, op)
    except (TypeError, ValueError, ArithmeticError, z3.Z3Exception):
        m = None
    _set(w, op, m)


def element(w, op: Op, base) -> None:
    base(w, op)
    v, i, out = w.value(op.arg("v")), w.value(op.arg("i")), w.env.get(op.result)
    offsets = w.__dict__.get("_countsort_offsets", {}).get(id(v))
    if offsets is not None and offsets[0] is v and z3.is_expr(out):
        w.__dict__.setdefault("_countsort_first", []).append((bv(out), offsets[1], i, None))
        return
    m = C.meaning(v) if isinstance(v, Fragment) else None
    if not (isinstance(m, C.Val) and z3.is_expr(out) and z3.is_const(out)
            and i is not None and not isinstance(i, float) and _frag1(v)):
        return
    if not (0 <= i < v.shape[0] if isinstance(i, int) else
            C.proves(w, z3.ULT(bv(i), v.shape[0]), list(w.path))):
        return                                   # an entry past the vector: not its term
    term = z3.simplify(z3.substitute(bv(m.term), (w.pos["pr"], bv(i))))
    below = _whole_below(w, term)
    if below is not None:        # a first slot: a free name in what is computed from it
        key, tensor = below
        w.__dict__.setdefault("_countsort_first", []).append((bv(out), None, key, tensor))
        return
    w.__dict__.setdefault("_countsort_scalars", {})[out.get_id()] = (out, term)


def _whole_below(w, term):
    """(x, the key array) when `term` is Below(x, N), the entries below x of the whole key
    array (N its length), with x uniform; else None. A term naming the counter of a loop
    around it (a tile's count inside the counting loop) is not asked: it is not the whole
    array's."""
    counters = [w.ctx.vars[n].term for n in w.scope_vars() if n in w.ctx.vars]
    if any(C.mentions(term, bv(c)) for c in counters if z3.is_expr(c)):
        return None
    for app in C.count_apps(term):
        family = C.family_of(w, app.decl())
        if family is None or family[0] != "below" or family[1] not in w.tensors or \
                C.mentions(app.arg(0), w.pos["pr"]):
            continue
        want = app.decl()(app.arg(0), bv(w.tensors[family[1]][0]))
        if C.proves(w, term == want, [*w.path, *countsort_lanes.facts(w, [term, want])]):
            return app.arg(0), family[1]
    return None


STEPS = {"load": _load, "frag.coord": _coord, "math.cast": _cast,
         "math.add": _binary(lambda a, b: a + b), "math.sub": _binary(lambda a, b: a - b),
         "math.mul": _binary(lambda a, b: a * b), "math.cmp": _cmp, "math.select": _select}
# the rule of the packs before, then this pack's meaning of the result
follow = meaning_rule(STEPS, _set, (TypeError, ValueError, ArithmeticError, z3.Z3Exception))
