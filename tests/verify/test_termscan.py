"""termscan: one walk over a z3 term for its variables, remainders and divisions, checked
against a plain recursive walk over the Python wrappers on terms of every shape the tag
pass builds (nested, shared subterms, quantifiers, routing values)."""

from __future__ import annotations

import random

import z3

from argus.verify import termscan


def _reference(t):
    variables, remainders, divisions, routed = set(), set(), set(), False
    seen = set()

    def visit(x):
        nonlocal routed
        if x.get_id() in seen:
            return
        seen.add(x.get_id())
        if z3.is_quantifier(x):
            visit(x.body())
            return
        if not z3.is_app(x):
            return
        k = x.decl().kind()
        if x.num_args() == 0:
            if k == z3.Z3_OP_UNINTERPRETED:
                variables.add(x.get_id())
            return
        routed = routed or k == z3.Z3_OP_UNINTERPRETED
        if k in (z3.Z3_OP_BUDIV, z3.Z3_OP_BUDIV_I, z3.Z3_OP_BUREM, z3.Z3_OP_BUREM_I):
            d = x.arg(1)
            power = z3.is_bv_value(d) and d.as_long() > 0 and not d.as_long() & (d.as_long() - 1)
            if not power:
                divisions.add((x.arg(0).get_id(), d.get_id()))
                if k in (z3.Z3_OP_BUREM, z3.Z3_OP_BUREM_I) and z3.is_bv_value(d) and d.as_long() > 1:
                    remainders.add(x.get_id())
        for c in x.children():
            visit(c)

    visit(t)
    return variables, remainders, divisions, routed


def _random_term(rng, leaves, depth):
    if depth == 0 or rng.random() < 0.2:
        return rng.choice(leaves)
    a = _random_term(rng, leaves, depth - 1)
    b = _random_term(rng, leaves, depth - 1)
    op = rng.choice(["add", "mul", "udiv", "urem", "udiv_c", "urem_c", "shift"])
    if op == "add":
        return a + b
    if op == "mul":
        return a * b
    if op == "udiv":
        return z3.UDiv(a, b)
    if op == "urem":
        return z3.URem(a, b)
    c = z3.BitVecVal(rng.choice([1, 2, 3, 6, 64, 100, 128]), 64)
    if op == "udiv_c":
        return z3.UDiv(a, c)
    if op == "urem_c":
        return z3.URem(a, c)
    return z3.LShR(a, 3)


def test_the_scan_matches_a_plain_walk_on_random_terms():
    rng = random.Random(5)
    counts = z3.Function("counts", z3.BitVecSort(64), z3.BitVecSort(64))
    xs = list(z3.BitVecs("a b c d", 64))
    leaves = [*xs, z3.BitVecVal(7, 64), counts(xs[0]), counts(z3.BitVecVal(2, 64))]
    for _ in range(200):
        parts = [_random_term(rng, leaves, 4) for _ in range(3)]
        f = z3.And(z3.ULT(parts[0], parts[1]), z3.Or(parts[2] == xs[3], parts[0] == parts[2]))
        got = termscan.scan(f)
        variables, remainders, divisions, routed = _reference(f)
        assert set(got.variables) == variables
        assert set(got.remainders) == remainders
        assert set(got.divisions) == divisions
        assert got.routed == routed
        assert termscan.names(f) == {z3.Z3_get_symbol_string(f.ctx.ref(), z3.Z3_get_decl_name(
            f.ctx.ref(), z3.Z3_get_app_decl(f.ctx.ref(), z3.Z3_to_app(f.ctx.ref(), x.as_ast()))))
            for x in xs if x.get_id() in variables}


def test_a_division_keeps_its_quotient_and_remainder_together():
    x, d = z3.BitVecs("x d", 64)
    f = z3.And(z3.UDiv(x, d) == 1, z3.URem(x, d) == 2, z3.URem(x, 6) == 0, z3.UDiv(x, 8) == 0)
    got = termscan.scan(f)
    q, r = got.divisions[(x.get_id(), d.get_id())]
    assert q.eq(z3.UDiv(x, d)) and r.eq(z3.URem(x, d))
    assert [t.eq(z3.URem(x, 6)) for t in got.remainders.values()] == [True]
    assert (x.get_id(), z3.BitVecVal(8, 64).get_id()) not in got.divisions   # a power of two


def test_quantified_bodies_are_scanned_and_bound_variables_are_not_variables():
    x, y = z3.BitVecs("x y", 64)
    f = z3.ForAll([x], z3.ULT(z3.URem(x, 3), y))
    got = termscan.scan(f)
    assert set(got.variables) == {y.get_id()}
    assert len(got.remainders) == 1


def test_constants_have_no_variables():
    assert termscan.scan(z3.BoolVal(True)).variables == frozenset()
    assert termscan.scan(z3.BitVecVal(3, 64) + 4).variables == frozenset()
    assert termscan.scan(True).variables == frozenset()
