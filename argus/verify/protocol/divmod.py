"""Lemmas about x % c and x // c of neighbouring steps, handed to the solver with a query.

A ring of S barriers indexes step g by g % S and its phase by g // S; the release of the
previous step uses (g - 1) % S. Asking whether (g - 1) % S can equal g % S makes z3
bit-blast two 32-bit dividers and search them, which takes seconds when S is not a
power of two (a ring of 5, 9 or 12 stages: the deepest ring that fits BN = 128 or 64).
The arithmetic fact that decides it is simple: when a = b + d with a constant d (and
b + d does not wrap, i.e. a >= d),

    a % c == (b % c + d % c) - (c if b % c + d % c >= c else 0)
    a // c == b // c + d // c + (1 if b % c + d % c >= c else 0)

`lemmas(terms)` states this, as an implication guarded by a >= d, for every pair of
x % c (or x // c) in the query whose arguments differ by a constant. They are valid for
all values, so adding them changes no answer (sat stays sat, unsat stays unsat); they
only give the solver the shortcut.
"""

from __future__ import annotations

import z3

URem = (z3.Z3_OP_BUREM, z3.Z3_OP_BUREM_I)
UDiv = (z3.Z3_OP_BUDIV, z3.Z3_OP_BUDIV_I)


def _divisions(terms) -> dict:
    """{(c, width): {x sexpr: (x, has rem, has div)}} for every x % c and x // c."""
    found: dict = {}
    seen: set = set()
    todo = [t for t in terms if z3.is_expr(t)]
    while todo:
        t = todo.pop()
        if t.get_id() in seen:
            continue
        seen.add(t.get_id())
        if z3.is_app(t):
            kind = t.decl().kind()
            if kind in URem + UDiv and z3.is_bv_value(t.arg(1)) and t.arg(1).as_long() > 1:
                c = t.arg(1).as_long()
                x = t.arg(0)
                slot = found.setdefault((c, x.size()), {}).setdefault(x.sexpr(), [x, False, False])
                slot[1 if kind in URem else 2] = True
            todo.extend(t.children())
    return found


def lemmas(terms, limit: int = 64) -> list:
    """Valid facts relating x % c, x // c of arguments that differ by a constant."""
    out = []
    for (c, width), args in _divisions(terms).items():
        items = list(args.values())
        for i, (a, a_rem, a_div) in enumerate(items):
            for b, b_rem, b_div in items[i + 1:]:
                d = z3.simplify(a - b)
                if not z3.is_bv_value(d):
                    continue
                d = d.as_long()
                if d >= 1 << (width - 1):          # b is the larger one: b = a + (2^w - d)
                    a, b, a_rem, b_rem, a_div, b_div = b, a, b_rem, a_rem, b_div, a_div
                    d = (1 << width) - d
                out.append(_lemma(a, b, d, c, a_rem or b_rem, a_div or b_div))
                if len(out) >= limit:
                    return out
    return out


def _lemma(a, b, d: int, c: int, rem: bool, div: bool):
    w = a.size()
    cv = lambda v: z3.BitVecVal(v, w)
    s = z3.URem(b, cv(c)) + cv(d % c)
    carry = z3.UGE(s, cv(c))
    facts = []
    if rem:
        facts.append(z3.URem(a, cv(c)) == z3.If(carry, s - cv(c), s))
    if div:
        facts.append(z3.UDiv(a, cv(c)) == z3.UDiv(b, cv(c)) + cv(d // c)
                     + z3.If(carry, cv(1), cv(0)))
    return z3.Implies(z3.UGE(a, cv(d)), z3.And(*facts))
