"""What the values of a counting sort stand for: the integers a placement kernel computes
from a key array (the router's `experts`), as exact terms.

A 1-D plain vector (and a uniform scalar read from one) gets a *count meaning*: its value
at element pr as an integer term over pr, the scope, and two families of functions of the
key array X (`tensor`):

  X(q)          its entry q (`<tensor>#entry`, free: nothing is known of the keys);
  Cnt(x, q)     the number of entries q' < q with X(q') == x (`<tensor>#count`, free but
                for the facts of its definition below);
  Below(x, q)   the number of entries q' < q with X(q') < x (`<tensor>#below`, likewise):
                Below(x, N) is key x's first slot in the sorted order, counted from the
                keys themselves (a placement that needs no count vector).

Loads of an int tensor read X (0 outside the tile's tensor and segment); coordinates,
constants, +, -, *, comparisons and selects are exact on the terms; an exclusive prefix
sum of an indicator [X(base + pr) == x and base + pr < end] is Cnt(x, min(base + pr, end))
- Cnt(x, min(base, end)), and of [X(base + pr) < x and ...] the same in Below
(countsort_rules.py checks the indicator's form with z3). The
values are assumed exact in the kernel's arithmetic: every count and position is below
2^24 (the sizes are, as everywhere in the tag pass), so fp32 and int32 hold them exactly,
and a key cast to fp32 compares equal to a small integer exactly when it is that integer.

`lemmas(term)` gives the facts of Cnt's definition at the arguments a query names:
Cnt(x, 0) = 0 and Cnt(x, a) = Cnt(x, a - 1) + [X(a - 1) == x] for a >= 1 (Below's with
X(a - 1) < x, the signed order the kernel's comparison of small integers has). They are
true of the real count for every key array, so adding them only removes impossible models.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import z3

from argus.verify.smt import WIDTH, bv


@dataclass(frozen=True)
class Val:
    """An integer per element: `term` over pr. `key`: (tensor, base, end, x) when the value
    is computed from a comparison of the keys X(base + pr) with x (an indicator)."""
    term: Any
    key: Optional[tuple] = None


@dataclass(frozen=True)
class Pred:
    term: Any                     # z3 Bool over pr
    key: Optional[tuple] = None


@dataclass(frozen=True)
class Read:
    """The keys of a loaded tile: element pr is X(base + pr) where it is inside (else 0)."""
    term: Any
    tensor: str
    base: Any
    end: Any


def meaning(frag) -> Any:
    return getattr(frag, "counted", None)


def entry_fn(w, tensor: str):
    return _fns(w).setdefault(("entry", tensor), z3.Function(
        f"{tensor}#entry", z3.BitVecSort(WIDTH), z3.BitVecSort(WIDTH)))


# what an entry must satisfy to be counted, per count family: the key equal to x (Cnt), or
# below it (Below); comparisons are the kernel's (countsort_rules.CMP)
KINDS = {"count": lambda key, x: key == x, "below": lambda key, x: key < x}


def count_fn(w, tensor: str, kind: str = "count"):
    """Cnt (kind "count") or Below (kind "below") of a key array."""
    assert kind in KINDS
    return _fns(w).setdefault((kind, tensor), z3.Function(
        f"{tensor}#{kind}", z3.BitVecSort(WIDTH), z3.BitVecSort(WIDTH), z3.BitVecSort(WIDTH)))


def _fns(w) -> dict:
    return w.__dict__.setdefault("_countsort_fns", {})


def tensor_of_count(w, f) -> Optional[str]:
    """The key array a Cnt or Below function counts."""
    got = family_of(w, f)
    return got[1] if got is not None else None


def family_of(w, f) -> Optional[tuple]:
    """(kind, tensor) of a Cnt or Below function, else None."""
    for (kind, tensor), g in _fns(w).items():
        if kind in KINDS and g.eq(f):
            return kind, tensor
    return None


def umin(a, b):
    return z3.If(z3.ULE(bv(a), bv(b)), bv(a), bv(b))


def function_apps(term) -> tuple:
    """The applications of uninterpreted functions (arity > 0) in a term, each once,
    remembered by the term (queries name the same terms again and again)."""
    key = term.get_id()
    got = _APPS.get(key)
    if got is not None and got[0].eq(term):
        return got[1]
    out, seen, todo = [], set(), [term]
    while todo:
        t = todo.pop()
        i = t.get_id()
        if i in seen:
            continue
        seen.add(i)
        if z3.is_app(t):
            if t.num_args() and t.decl().kind() == z3.Z3_OP_UNINTERPRETED:
                out.append(t)
            todo.extend(t.children())
    if len(_APPS) > 4096:
        _APPS.clear()
    _APPS[key] = (term, tuple(out))        # the term kept alive: its id stays its own
    return _APPS[key][1]


_APPS: dict = {}


def count_apps(term) -> list:
    """The applications of a `#count` or `#below` function in a term (each once)."""
    return [t for t in function_apps(term)
            if t.decl().name().endswith(tuple(f"#{kind}" for kind in KINDS))]


def lemmas(w, terms) -> list:
    """Cnt's and Below's definitions at every application in `terms`."""
    facts = []
    for t in terms:
        for app in count_apps(t):
            family = family_of(w, app.decl())
            if family is None:
                continue
            kind, tensor = family
            x, a = app.arg(0), app.arg(1)
            cnt, entry = count_fn(w, tensor, kind), entry_fn(w, tensor)
            one = z3.BitVecVal(1, WIDTH)
            facts.append(cnt(x, z3.BitVecVal(0, WIDTH)) == 0)
            facts.append(z3.Implies(z3.UGE(a, one), app == cnt(x, a - one) + z3.If(
                KINDS[kind](entry(a - one), x), one, z3.BitVecVal(0, WIDTH))))
            facts.append(z3.ULE(app, a))
    return facts


def resolve(w, x):
    """A walker scalar with the entries of count vectors it was read from replaced by
    their terms (countsort_rules.element records them)."""
    if not z3.is_expr(x):
        return x
    table = w.__dict__.get("_countsort_scalars", {})
    if not table:
        return x
    pairs = [(v, t) for v, t in table.values()]
    return z3.substitute(bv(x), *pairs)


def mentions(term, var) -> bool:
    """`var` (a constant, or any term) occurs in `term` (termscan's cached walk for a
    constant; a substitution, done in z3's C code, for a compound term)."""
    from argus.verify import termscan
    if z3.is_const(var) and not z3.is_bv_value(var):
        return var.get_id() in termscan.scan(term).variables
    return not z3.substitute(term, (var, z3.FreshConst(var.sort()))).eq(term)


def proves(w, claim, extra=()) -> bool:
    """`claim` holds under the facts: first with the facts of its own variables only, in
    integers (integers.py: exact), then bit-blasted (a
    claim about one tile's counts needs the bounds of its sizes and counters, not the
    routing facts of every expert's count, which slow the solver 10x at 128 experts),
    then as smt.holds asks it. Fewer facts can only make a proof harder, never wrong."""
    from argus.verify import integers, smt
    asked = [*extra, z3.Not(claim)]
    small = smt.confined(w.ctx.facts, asked)
    try:                                   # linear: exact in integers, and fast
        if integers.unsat_in(w.ctx, [*small, *extra], z3.Not(claim)):
            return True
    except integers.Untranslatable:
        pass
    if smt.solve([*small, *asked], timeout_ms=2000)[0] == z3.unsat:
        return True
    return smt.holds(w.ctx, claim, list(extra))
