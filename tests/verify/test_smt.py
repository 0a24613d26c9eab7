"""The verifier's z3 context: bounded variables, product atoms instead of nonlinear
terms (checked against the real products before a model is reported), minimisation."""

from __future__ import annotations

import z3

from argus.verify.smt import Context, bv, first_model, holds, value


def test_products_of_two_symbols_become_one_shared_atom():
    ctx = Context()
    i, kt = ctx.var("i", "iteration"), ctx.var("KT", "size", lower=1)
    p, q = ctx.mul(i, kt), ctx.mul(kt, i)
    assert p.eq(q) and len(ctx.atoms) == 1
    assert ctx.mul(i, 4).eq(z3.simplify(i * 4)) or holds(ctx, ctx.mul(i, 4) == i * 4)


def test_products_of_deep_factors_that_print_alike_are_distinct_atoms():
    # z3's pretty printer elides deep terms ("..."): two factors that differ only in
    # their innermost variable print alike, and an atom named by str() was one z3 constant
    # for both products, so `u' * y == v' * y` was "proved"
    ctx = Context()
    x, y, u, v = (ctx.var(n, "size", lower=1) for n in "xyuv")
    a, b = u, v
    for _ in range(30):
        a, b = z3.UDiv(a + x, 3), z3.UDiv(b + x, 3)
    assert str(z3.simplify(a)) == str(z3.simplify(b))
    pa, pb = ctx.mul(a, y), ctx.mul(b, y)
    assert not pa.eq(pb) and len(ctx.atoms) == 2
    assert not holds(ctx, pa == pb)


def test_atoms_over_approximate_so_unsat_is_sound():
    ctx = Context()
    i, kt, k = ctx.var("i", "iteration"), ctx.var("KT", "size", lower=1), ctx.var("k", "iteration")
    g = ctx.mul(i, kt) + k
    assert holds(ctx, z3.URem(g, 4) == z3.URem(bv(ctx.mul(i, kt)) + k, 4))
    assert not holds(ctx, z3.URem(g, 4) == z3.URem(g + 1, 4))


def test_models_are_minimised_and_checked_with_real_products():
    ctx = Context()
    i, kt = ctx.var("i", "iteration"), ctx.var("KT", "size", lower=1)
    goal = z3.UGE(bv(ctx.mul(i, kt)), 6)
    model = first_model(ctx, goal, [i, kt])
    assert value(model, i) * value(model, kt) >= 6
    assert (value(model, i), value(model, kt)) == (1, 6)


def test_unsatisfiable_goal_has_no_model():
    ctx = Context()
    x = ctx.var("x", "thread", upper=128)
    assert first_model(ctx, z3.UGE(x, 128), [x]) is None
