"""Units of the MoE modelling: the routing abstraction (it only ever proves what is true), tag assumptions as field definitions, routing values in
index vectors and prefix sums, segments' windows."""

from __future__ import annotations

import random

import pytest
import z3

from argus.verify.smt import Context
from argus.verify.tags import abstraction
from argus.verify.tags.segments import Window, in_window

W = 64


def _ctx_with_routing():
    ctx = Context()
    e = ctx.var("e", "iteration", upper=4)        # four experts
    ctx.small[e.sexpr()] = 4
    n = ctx.var("N", "size", lower=1)
    counts = z3.Function("counts", z3.BitVecSort(W), z3.BitVecSort(W))
    for i in range(8):
        ctx.facts.append(z3.ULT(counts(z3.BitVecVal(i, W)), 1 << 24))
    entries = [counts(z3.BitVecVal(i, W)) for i in range(8)]
    offs = [sum(entries[:i], z3.BitVecVal(0, W)) for i in range(8)]
    pick = lambda v: z3.If(e == 0, v[0], z3.If(e == 1, v[1], z3.If(e == 2, v[2], v[3])))
    return ctx, e, n, counts, pick(offs), pick(entries)


def test_the_abstraction_proves_claims_with_equal_routing_sums_and_never_a_false_one():
    ctx, e, n, counts, start, rows = _ctx_with_routing()
    a = abstraction.install(ctx)
    x = z3.BitVec("x", W)
    ctx.facts.append(z3.ULT(x, 1 << 20))
    assert a.proves(start + x - start == x, [])                   # the sum cancels
    assert a.proves(z3.ULT(start + x, start + x + 1), [])
    assert not a.proves(start == rows, [])                         # false: never proved
    assert not a.proves(z3.ULT(start, 5), [])                      # false: never proved


def test_segment_windows_of_a_prefix_sum_never_overlap_in_integers():
    ctx, e, n, counts, start, rows = _ctx_with_routing()
    a = abstraction.install(ctx)
    e2 = z3.BitVec("e2", W)
    ctx.facts.append(z3.ULT(e2, 4))
    start2, rows2 = (z3.substitute(t, (e, e2)) for t in (start, rows))
    row = z3.BitVec("row", W)
    w1, w2 = Window(start, rows, start + rows), Window(start2, rows2, start2 + rows2)
    overlap = z3.And(z3.ULT(row, 1 << 30), e != e2, in_window(w1, row), in_window(w2, row))
    assert a.refutes([overlap], abstract=False)
    # one expert's window overlaps itself shifted by a row: found, not refuted
    shifted = Window(start + 1, rows, start + 1 + rows)
    assert not a.refutes([z3.ULT(row, 1 << 30), in_window(w1, row), in_window(shifted, row)],
                         abstract=False)


def test_an_integer_model_is_a_real_bit_vector_model():
    ctx, e, n, counts, start, rows = _ctx_with_routing()
    abstraction.install(ctx)
    goal = z3.And(rows == 3, start == 5, e == 2)
    m = abstraction.integer_model(ctx, goal, [e], [])
    assert m is not None and m is not abstraction.IMPOSSIBLE
    assert z3.is_true(m.eval(goal, model_completion=True))
    assert abstraction.integer_model(ctx, z3.And(e == 0, start == 1), [e], []) \
        is abstraction.IMPOSSIBLE                                  # offs[0] is 0


def test_an_integer_model_is_the_least_with_real_products():
    """The integers see a product atom as a free integer: the search gives every model
    its products, so the minimum is that of the real query (x * y >= 6 with x least: 1,
    and then y is 6, not the 1 a free atom would allow)."""
    ctx, e, n, counts, start, rows = _ctx_with_routing()
    abstraction.install(ctx)
    x, y = ctx.var("x", "iteration", upper=100), ctx.var("y", "iteration", upper=100)
    goal = z3.UGE(ctx.mul(x, y), 6)
    m = abstraction.integer_model(ctx, goal, [x, y], [])
    assert (m.eval(x).as_long(), m.eval(y).as_long()) == (1, 6)


def test_a_confirmed_integer_model_only_for_what_can_happen():
    ctx, e, n, counts, start, rows = _ctx_with_routing()
    assert abstraction.confirmed_model(ctx, [start == 5]) is None      # no routing data yet
    abstraction.install(ctx)
    m = abstraction.confirmed_model(ctx, [start == 5, e == 2])
    assert m is not None and z3.is_true(m.eval(z3.And(start == 5, e == 2), True))
    assert abstraction.confirmed_model(ctx, [start == 1, e == 0]) is None   # offs[0] is 0


def test_small_loop_counters_multiply_exactly():
    ctx = Context()
    e = ctx.var("e", "iteration", upper=8)
    n = ctx.var("N", "size", lower=1)
    ctx.small[e.sexpr()] = 8
    prod = ctx.mul(e, n)
    for v in range(8):
        assert z3.simplify(z3.substitute(prod, (e, z3.BitVecVal(v, W)),
                                         (n, z3.BitVecVal(1000, W)))).as_long() == 1000 * v
    assert not ctx.atoms                                           # no product atom


def test_copies_of_variables_copy_their_product_atoms():
    """What the race checks of filtered loops rely on (smt.copy_with_products): the copy of
    a product over a copied counter is another product, not the original's value."""
    ctx = Context()
    i = ctx.var("i", "iteration")
    k = ctx.var("KT", "size", lower=1)
    atom = ctx.mul(i, k)
    pairs, _ = ctx.copy_with_products(["i"], "~")
    copied = dict((str(a), b) for a, b in pairs)
    assert str(atom) in copied and not copied[str(atom)].eq(atom)
