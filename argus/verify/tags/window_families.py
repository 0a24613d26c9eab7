"""Families of disjoint windows, known by construction rather than re-derived by z3: the
windows of an exclusive prefix sum, and the windows g * R .. g * R + R - 1 of a loop's
counter g.

`offs = prefix_sum(cnt)` inside the loop over experts gives expert e the slot window
[offs[e], offs[e] + cnt[e]). The tag pass spells `element(offs, e)` out exactly: an
if-then-else over every entry's sum, each a sum of up to E - 1 counts (routing.py). Every
query about the windows then carries O(E^2) terms, and z3 re-derives facts that hold of
any exclusive prefix sum by construction (64 experts: 5 s a check, 128: 15 s). Those facts
are stated here once, as lemmas, for windows whose start and row count are recognised as
`element(prefix_sum(x), a)` and `element(x, a)` of one registered sum:

1. **inside**: for a < n (the vector's length), S(a) + x(a) <= T, the sum of all entries;
2. **disjoint**: for a != b, both < n, the windows of a and b share no row;
3. **tiling**: the windows of a = 0 .. n - 1 together are exactly the rows [0, T).

Each holds of the real sums (the entries are routing counts below 2^24, so nothing wraps
in 64 bits), so a check that uses one instead of a query proves what the query would.
A window the lemmas do not fit (another start, a partial loop) is left to the query, and
every term stays the exact one: models and counterexamples are unchanged.

The windows g * R (`segment(W, e * F, F)`, expert e's rows of flattened weights) are
disjoint for different g by arithmetic, and inside a tensor of X rows for every g < n when
n * R <= X: `product_of` recognises their start as the context builds it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import z3

from argus.verify.smt import bv, concrete, holds


@dataclass(eq=False)
class Sum:
    """An exclusive prefix sum: `sums[c]` = parts[0] + ... + parts[c - 1], total T."""
    parts: tuple
    sums: tuple
    total: object

    @property
    def length(self) -> int:
        return len(self.parts)


@dataclass
class Registry:
    sums: list = field(default_factory=list)
    memo: dict = field(default_factory=dict)     # ast id -> (term, (Sum, kind, index) | None)
    entries: dict = field(default_factory=dict)  # ast id of an entry -> (Sum, kind, c)


def registry(ctx) -> Registry:
    got = ctx.__dict__.get("window_families")
    if got is None:
        got = ctx.__dict__["window_families"] = Registry()
    return got


def register(ctx, parts, sums, total) -> None:
    """Record the exclusive prefix sum `sums` of the entries `parts` (terms)."""
    reg = registry(ctx)
    s = Sum(tuple(bv(p) for p in parts), tuple(bv(x) for x in sums), bv(total))
    reg.sums.append(s)
    for kind, seq in (("sum", s.sums), ("part", s.parts)):
        for c, entry in enumerate(seq):
            reg.entries.setdefault(entry.get_id(), (s, kind, c))


def selected(ctx, term):
    """(Sum, "sum" or "part", index) when `term` is entry `index` of a registered sum or
    of its summed vector, spelt out as routing.IndexVector.entry spells it; else None."""
    reg = registry(ctx)
    if not reg.sums or term is None or isinstance(term, (int, float)):
        return None
    term = bv(term)
    got = reg.memo.get(term.get_id())
    if got is None:
        got = reg.memo[term.get_id()] = (term, _recognise(reg, term))
    return got[1]


def _recognise(reg, term):
    got = reg.entries.get(term.get_id())      # a constant index: the entry itself
    if got is not None:
        return got
    if not z3.is_app_of(term, z3.Z3_OP_ITE):
        return None
    first = term.children()[1]                # the chain's entry 0: which sequence
    for s in reg.sums:
        for kind, seq in (("sum", s.sums), ("part", s.parts)):
            if not first.eq(seq[0]):
                continue
            index = _chain_index(term, seq)
            if index is not None:
                return s, kind, index
    return None


def _chain_index(term, seq):
    """p when term is If(p == 0, seq[0], If(p == 1, seq[1], ... seq[n - 1]))."""
    if len(seq) < 2:
        return None
    p, t = None, term
    for i in range(len(seq) - 1):
        if not z3.is_app_of(t, z3.Z3_OP_ITE):
            return None
        cond, then, rest = t.children()
        if not z3.is_eq(cond) or not then.eq(seq[i]):
            return None
        lhs, rhs = cond.children()
        if concrete(rhs) != i:
            return None
        if p is None:
            p = lhs
        elif not lhs.eq(p):
            return None
        t = rest
    return p if t.eq(seq[-1]) else None


def window_of(ctx, start, rows):
    """(Sum, index) when the window [start, start + rows) is entry index's window of a
    registered prefix sum; else None."""
    a = selected(ctx, start)
    b = selected(ctx, rows)
    if a is None or b is None or a[0] is not b[0] or a[1] != "sum" or b[1] != "part":
        return None
    i, j = a[2], b[2]
    if isinstance(i, int) or isinstance(j, int):
        return (a[0], i) if isinstance(i, int) and i == j else None
    return (a[0], i) if i.eq(j) else None


def member_of(ctx, start, rows, counter):
    """The registered Sum whose entry `counter` (a loop's counter, a term) has the window
    [start, start + rows); else None."""
    got = window_of(ctx, start, rows)
    if got is None or isinstance(got[1], int) or not bv(got[1]).eq(bv(counter)):
        return None
    return got[0]


def below(ctx, index, n: int, path=()) -> bool:
    """index < n is proved: a constant, the counter of a short loop of at most n
    iterations (no query), or else by the solver."""
    if isinstance(index, int):
        return 0 <= index < n
    index = bv(index)
    bound = ctx.small.get(index.sexpr()) if z3.is_const(index) else None
    if bound is not None and bound <= n:
        return True
    return holds(ctx, z3.ULT(index, n), list(path))


def stated(ctx, claim) -> bool:
    """`x <= y` (unsigned) where a fact says x == y, e.g. the counts' total and the rows
    they are assumed to add up to: no query needed."""
    if not z3.is_app_of(claim, z3.Z3_OP_ULEQ):
        return False
    x, y = (z3.simplify(t) for t in claim.children())
    if x.eq(y):
        return True
    memo = ctx.__dict__.setdefault("_stated_equalities", {})
    if memo.get("n") != len(ctx.facts):
        pairs = {}
        for f in ctx.facts:
            if z3.is_eq(f):
                a, b = (z3.simplify(t) for t in f.children())
                pairs[(a.get_id(), b.get_id())] = pairs[(b.get_id(), a.get_id())] = (a, b)
        memo.update(n=len(ctx.facts), pairs=pairs)     # the terms kept: ids stay theirs
    return (x.get_id(), y.get_id()) in memo["pairs"]


def inside(ctx, claim, path=()) -> bool:
    """A window's end within its tensor's rows (a `<=` claim): stated, or proved in
    integers."""
    return stated(ctx, claim) or holds(ctx, claim, list(path), in_integers=True)


def product_of(ctx, start):
    """(a, R) when `start` is the product a * R as the context builds it (a product atom,
    or the exact if-then-else over a short loop's counter a), a a variable; else None."""
    start = bv(start)
    for x, y, product in ctx._small_products.values():    # a short loop's counter times R
        if product.eq(start):
            return bv(x), bv(y)
    for atom, a, b in ctx.atoms.values():
        if atom.eq(start):
            for x, y in ((bv(a), bv(b)), (bv(b), bv(a))):
                if z3.is_const(x) and not z3.is_bv_value(x):
                    return x, y
    return None
