"""The exact translation of bit-vector terms to linear integer arithmetic (integers.py):
every operation keeps its modular meaning, signed comparisons included; what has no linear
meaning is refused; `unsat_in` proves only what is true, with its per-context memo."""

from __future__ import annotations

import random

import pytest
import z3

from argus.verify import integers
from argus.verify.smt import Context

W = 64


def _eval_int(expr, env):
    return z3.simplify(z3.substitute(expr, *[(z3.Int(f"{n}#int"), z3.IntVal(v))
                                            for n, v in env.items()]))


@pytest.mark.parametrize("seed", range(6))
def test_the_integer_translation_keeps_the_modular_meaning(seed):
    """Random terms over 64-bit unsigned arithmetic (wraps included) evaluate to the same
    number as bit-vectors and as integers."""
    rng = random.Random(seed)
    x, y = z3.BitVecs("x y", W)
    terms = [x + y, x - y, -x, x * 7, z3.UDiv(x, 3), z3.URem(x, 5), z3.LShR(x, 4), x << 3,
             z3.Extract(15, 4, x), z3.Concat(z3.Extract(7, 0, x), z3.Extract(7, 0, y)),
             z3.ZeroExt(8, z3.Extract(31, 0, y)), x & 255, z3.If(z3.ULT(x, y), x, y + 1)]
    tr = integers.Translator()
    for _ in range(20):
        env = {"x": rng.choice([0, 1, rng.randrange(2 ** 20), rng.randrange(2 ** 64), 2 ** 64 - 1]),
               "y": rng.choice([0, rng.randrange(2 ** 64), 2 ** 64 - 3])}
        for t in terms:
            want = z3.simplify(z3.substitute(t, (x, z3.BitVecVal(env["x"], W)),
                                             (y, z3.BitVecVal(env["y"], W)))).as_long()
            got = _eval_int(tr.term(t), env).as_long()
            assert got == want, (t, env)


def test_bounds_drop_the_modulo_only_where_nothing_wraps():
    x, y = z3.BitVecs("x y", W)
    tr = integers.Translator({"x": 100, "y": 5})
    assert "%" not in str(tr.term(x + y)) and "%" in str(integers.Translator().term(x + y))


def test_products_of_variables_and_xor_are_not_translated():
    x, y = z3.BitVecs("x y", W)
    for t in (x * y, x ^ y, z3.UDiv(x, y)):
        with pytest.raises(integers.Untranslatable):
            integers.Translator().term(t)


@pytest.mark.parametrize("seed", range(4))
def test_signed_comparisons_keep_their_meaning(seed):
    rng = random.Random(seed)
    x, y = z3.BitVecs("x y", W)
    tr = integers.Translator()
    comparisons = [x < y, x <= y, x > y, x >= y, x + 1 <= y - 2]
    values = [0, 1, 2 ** 63 - 1, 2 ** 63, 2 ** 64 - 1, rng.randrange(2 ** 64)]
    for a in values:
        for b in values:
            for c in comparisons:
                pin = [(x, z3.BitVecVal(a, W)), (y, z3.BitVecVal(b, W))]
                want = z3.is_true(z3.simplify(z3.substitute(c, *pin)))
                got = z3.is_true(_eval_int(tr.term(c), {"x": a, "y": b}))
                assert got == want, (c, a, b)


def test_a_bound_below_half_the_range_needs_no_sign_test():
    x, y = z3.BitVecs("x y", W)
    assert "If" not in str(integers.Translator({"x": 100, "y": 5}).term(x <= y))
    assert "If" in str(integers.Translator().term(x <= y))


def test_unsat_in_proves_what_holds_and_nothing_else():
    ctx = Context()
    j = ctx.var("j", "iteration", upper=64)
    n = ctx.var("SK", "size")
    tile = z3.UDiv(n + 127, 128)
    facts = [*ctx.facts, z3.ULT(j, tile)]
    # j < cdiv(SK, 128): block j starts below SK, and its last key may lie past it (a tail)
    assert integers.unsat_in(ctx, facts, z3.UGE(j * 128, n))
    assert not integers.unsat_in(ctx, facts, z3.UGE(j * 128 + 127, n))
    assert integers.unsat_in(ctx, facts, z3.UGE(j * 128, n))          # again, from the memo
    with pytest.raises(integers.Untranslatable):
        integers.unsat_in(ctx, facts, j * n == 3)
