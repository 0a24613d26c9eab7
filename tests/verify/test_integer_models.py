"""A false claim's counterexample found in integers (integer_models.py): made exact (every
product atom its product) and carried back to the bit-vectors, or nothing; never a proof
of a claim that fails, never a model that is not one."""

from __future__ import annotations

import z3

from argus.verify import integer_models
from argus.verify.smt import Context, holds


def _context():
    ctx = Context()
    e = ctx.var("e", "iteration", upper=8)
    f = ctx.var("F", "size", lower=1)
    return ctx, e, f, ctx.mul(e, f)


def test_a_false_claim_gets_a_model_in_which_the_product_is_real():
    ctx, e, f, ef = _context()
    goal = z3.Not(z3.Implies(z3.UGE(e, 1), z3.UGE(ef, f)))      # e >= 1: e * F >= F ...
    assert integer_models.decide(ctx, list(ctx.facts), goal)[0] == z3.unsat
    wrong = z3.Not(z3.Implies(z3.UGE(e, 1), z3.UGE(ef, 2 * f)))  # ... not 2 * F (e = 1)
    answer, model = integer_models.decide(ctx, list(ctx.facts), wrong)
    assert answer == z3.sat
    ve, vf, vef = (model.eval(t, model_completion=True).as_long() for t in (e, f, ef))
    assert vef == ve * vf and ve == 1
    assert z3.is_true(model.eval(wrong, model_completion=True))


def test_holds_answers_as_before_with_the_integer_models():
    ctx, e, f, ef = _context()
    assert holds(ctx, z3.Implies(z3.UGE(e, 1), z3.UGE(ef, f)), in_integers=True)
    assert not holds(ctx, z3.Implies(z3.UGE(e, 1), z3.UGE(ef, 2 * f)), in_integers=True)
    assert ctx.models                              # the counterexample is remembered


def test_an_untranslatable_query_is_left_to_the_bit_vectors():
    ctx, e, f, ef = _context()
    goal = z3.Not(z3.ULT(e * f, 5 * f))           # a product of two variables, not an atom
    assert integer_models.decide(ctx, list(ctx.facts), goal) == (z3.unknown, None)
