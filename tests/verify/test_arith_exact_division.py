"""argus/verify/arith.py: (c * v + d) // c and % c of one base variable v are v and d, without
a divider circuit, exactly when nothing can wrap; every other division stays UDiv / URem.
Checked against z3 itself on the bounded variables both passes use."""

import z3

from argus.verify import arith
VAR_LIMIT = 1 << 24       # what the protocol pass bounds its counters below


def BOUND(v):
    return VAR_LIMIT


def _same_for_bounded(width, expr, rendered, v):
    s = z3.Solver()
    s.add(z3.ULT(v, VAR_LIMIT), expr != rendered)      # v < BOUND(v), as the caller says
    return s.check() == z3.unsat


def test_a_strided_loops_counter_comes_back_exactly():
    for width in (32, 64):
        c, bid = z3.BitVec("c", width), z3.BitVec("bid", width)
        w = bid + 132 * c                       # for w in range(bid, NT, 132)
        assert arith.binary("floordiv", arith.binary("sub", w, bid, width, None, BOUND), 132, width,
                            None, BOUND).eq(c)
        for d in (0, 5, 131):
            q = arith.binary("floordiv", 132 * c + d, 132, width, None, BOUND)
            r = arith.binary("mod", 132 * c + d, 132, width, None, BOUND)
            assert q.eq(c) and z3.simplify(r).as_long() == d
            assert _same_for_bounded(width, z3.UDiv(132 * c + d, 132), q, c)
            assert _same_for_bounded(width, z3.URem(132 * c + d, 132), r, c)


def test_divisions_that_are_not_exact_multiples_keep_their_divider():
    c, bid = z3.BitVec("c", 32), z3.BitVec("bid", 32)
    # ((c + c) // 2 is c, rightly: z3 simplifies c + c to 2 * c)
    for a, b in ((132 * c + bid, 132), (132 * c + 132, 132), (128 * c, 132), (3 * c, 2)):
        out = arith.binary("floordiv", a, b, 32, None, BOUND)
        assert z3.is_app_of(out, z3.Z3_OP_BUDIV), (a, out)
    # a multiplier so large that c * 2^8 * VAR_LIMIT could wrap 32 bits: not rewritten
    assert z3.is_app_of(arith.binary("floordiv", 512 * c, 512, 32, None, BOUND), z3.Z3_OP_BUDIV)
    c64 = z3.BitVec("c", 64)
    assert arith.binary("floordiv", 512 * c64, 512, 64, None, BOUND).eq(c64)      # 64 bits: room


def test_no_rewrite_without_a_bound_or_with_one_that_could_wrap():
    c = z3.BitVec("c", 32)
    assert z3.is_app_of(arith.binary("floordiv", 132 * c, 132, 32, None), z3.Z3_OP_BUDIV)
    assert z3.is_app_of(arith.binary("floordiv", 132 * c, 132, 32, None, lambda v: None),
                        z3.Z3_OP_BUDIV)
    # a size bounded by 2^31 (the protocol pass's sizes): 132 * 2^31 wraps 32 bits
    assert z3.is_app_of(arith.binary("floordiv", 132 * c, 132, 32, None, lambda v: 1 << 31),
                        z3.Z3_OP_BUDIV)
