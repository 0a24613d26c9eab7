"""Counts kept per lane: a histogram kernel's vector of partial counts (moe_count), each
element r of a (S,) vector counting the entries r, r + S, r + 2S, ... of the key array X.

  SC(x, r, n, end)   the number of i < n with X(i*S + r) == x and i*S + r < end
                     (`<tensor>#lanes<S>`: one function per key array and stride S)
  LS(x, r, n, end)   SC(x, 0, ...) + ... + SC(x, r - 1, ...)   (`<tensor>#lanesum<S>`)

A loop over tiles that adds to a carried (S,) vector the indicator [X(j*S + pr) == x and
j*S + pr < end] (a tile of S entries) holds SC(x, pr, j, end) at iteration j, and SC(x,
pr, stop, end) after it (`close`, the carried vector a hole function of pr, as
countsort_loops.py does for a scalar count). The exclusive prefix sum of that vector is
LS(x, pr, n, end), and LS(x, S, n, end) = Cnt(x, min(n*S, end)): every entry below
min(n*S, end) lies in exactly one lane (r = q mod S, i = q div S). `lemmas` states these
facts, and the step facts SC(x, r, n) = SC(x, r, n - 1) + [...], LS(x, r + 1) = LS(x, r) +
SC(x, r), at the applications a query names; all of them hold of the real counts."""

from __future__ import annotations

import z3

from argus.verify.smt import WIDTH, bv

from . import countsort as C

BV = z3.BitVecSort(WIDTH)


def _fns(w) -> dict:
    return w.__dict__.setdefault("_countsort_lanes", {})


def lane_fn(w, tensor: str, stride: int):
    key = ("lanes", tensor, stride)
    if key not in _fns(w):
        _fns(w)[key] = z3.Function(f"{tensor}#lanes{stride}", BV, BV, BV, BV, BV)
    return _fns(w)[key]


def sum_fn(w, tensor: str, stride: int):
    key = ("lanesum", tensor, stride)
    if key not in _fns(w):
        _fns(w)[key] = z3.Function(f"{tensor}#lanesum{stride}", BV, BV, BV, BV, BV)
    return _fns(w)[key]


def kind_of(w, decl):
    """("lanes" | "lanesum", tensor, stride) of one of these functions, else None."""
    for key, f in _fns(w).items():
        if f.eq(decl):
            return key
    return None


def apps(w, term) -> list:
    """The applications of the lane functions in a term (each once)."""
    return [t for t in C.function_apps(term) if t.num_args() == 4 and
            kind_of(w, t.decl()) is not None]


def indicator(w, tensor: str, stride: int, x, r, n, end):
    """[X(n*S + r) == x and n*S + r < end]."""
    q = bv(n) * stride + bv(r)
    return z3.If(z3.And(C.entry_fn(w, tensor)(q) == x, z3.ULT(q, end)),
                 z3.BitVecVal(1, WIDTH), z3.BitVecVal(0, WIDTH))


def lemmas(w, terms) -> list:
    one, zero = z3.BitVecVal(1, WIDTH), z3.BitVecVal(0, WIDTH)
    facts = []
    for t in terms:
        for app in apps(w, t):
            kind, tensor, s = kind_of(w, app.decl())
            x, r, n, end = (app.arg(i) for i in range(4))
            sc, ls = lane_fn(w, tensor, s), sum_fn(w, tensor, s)
            if kind == "lanes":
                facts.append(sc(x, r, zero, end) == 0)
                facts.append(z3.Implies(z3.UGE(n, one), app == sc(x, r, n - one, end) +
                                        indicator(w, tensor, s, x, r, n - one, end)))
            else:
                facts.append(ls(x, zero, n, end) == 0)
                nxt = ls(x, r + one, n, end)
                facts.append(nxt == app + sc(x, r, n, end))
                facts.append(z3.Implies(z3.UGE(r, one), app == ls(x, r - one, n, end) +
                                        sc(x, r - one, n, end)))
                whole = ls(x, z3.BitVecVal(s, WIDTH), n, end)
                facts.append(whole == C.count_fn(w, tensor)(x, C.umin(bv(n) * s, end)))
    return facts


def close(w, hole_fn, d, pr, j, start, stop, before):
    """(the vector at iteration j, after the loop) for a per-lane count whose body adds
    d(pr) to the carried vector hole_fn(pr), or None: d must be the indicator of tile j of
    stride S (the vector's length) of one key array, the loop start at 0 and the vector
    at 0 before it."""
    if not (isinstance(start, int) and start == 0) or not z3.is_true(z3.simplify(before == 0)):
        return None
    for t in _entry_apps(w, d):
        tensor, q = t
        stride = z3.simplify(z3.substitute(q, (j, j + 1)) - q)
        if not z3.is_bv_value(stride) or not z3.is_true(z3.simplify(
                z3.substitute(q, (j, z3.BitVecVal(0, WIDTH))) == pr)):
            continue
        s = stride.as_long()
        for x in _keys(w, d, tensor, pr):
            end = bv(w.tensors[tensor][0])
            if not C.proves(w, d == indicator(w, tensor, s, x, pr, j, end), []):
                continue
            sc = lane_fn(w, tensor, s)
            return sc(x, pr, j, end), sc(x, pr, bv(stop), end), s
    return None


def _entry_apps(w, term):
    """(tensor, argument) of the key-array applications X(q) in a term."""
    out, seen, todo = [], set(), [term]
    while todo:
        t = todo.pop()
        if t.get_id() in seen:
            continue
        seen.add(t.get_id())
        if z3.is_app(t) and t.decl().kind() == z3.Z3_OP_UNINTERPRETED and \
                t.decl().name().endswith("#entry"):
            out.append((t.decl().name()[:-len("#entry")], t.arg(0)))
        todo.extend(t.children())
    return out


def _keys(w, term, tensor, pr):
    """Candidate keys x: the sides of equalities in `term` free of the position and of
    the key array (X(q) == x, or a load's if-then-else of it == x)."""
    out, seen, todo = [], set(), [term]
    while todo:
        t = todo.pop()
        if t.get_id() in seen:
            continue
        seen.add(t.get_id())
        if z3.is_eq(t):
            for side in t.children():
                if not C.mentions(side, pr) and not _entry_apps(w, side):
                    out.append(side)
        todo.extend(t.children())
    return out


def facts(w, terms) -> list:
    """Every definition fact of the counts a query names: Cnt's (countsort.lemmas) and the
    lane counts'."""
    return C.lemmas(w, terms) + lemmas(w, terms)
