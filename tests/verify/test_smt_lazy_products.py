"""The lazy products of first_model (argus/verify/smt.py): a model it returns as exact
gives every product atom its product, whatever the small-size search did first."""

from __future__ import annotations

import z3

from argus.verify import smt


def test_a_product_the_small_search_retired_stays_asserted():
    """_small_model's lazy check retires an atom after a few rounds (its product asserted
    instead, in the scope it pops): the search over every size must still know the
    product. Here x * y == 7 with x, y >= 2 takes those rounds among small sizes and has
    no solution there; a model the search over every size then finds must give the
    product its value (7 is prime: no model at all)."""
    ctx = smt.Context()
    x, y = ctx.var("x", "size"), ctx.var("y", "size")
    p = smt.bv(ctx.mul(x, y))
    m = smt.first_model(ctx, z3.And(z3.UGE(x, 2), z3.UGE(y, 2), p == 7), [x, y], exact_only=True)
    assert m is None or smt.value(m, p) == smt.value(m, x) * smt.value(m, y)
