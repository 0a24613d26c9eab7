"""Int-or-bit-vector arithmetic: agrees with ints, is unsigned, and reports overflow."""

import pytest
import z3
from hypothesis import given, settings
from hypothesis import strategies as st

from argus.layout import symbolic as sym

FAST = settings(max_examples=50, deadline=None)


def value(term) -> int:
    return z3.simplify(term).as_long()


@pytest.mark.parametrize("bound,width", [(1, 1), (2, 1), (3, 2), (256, 8), (257, 9), (1024, 10)])
def test_width_for_holds_every_value_below_the_bound(bound, width):
    assert sym.width_for(bound) == width
    assert (bound - 1) < (1 << width)


def test_width_for_rejects_a_non_positive_bound():
    with pytest.raises(sym.SymbolicError, match="positive"):
        sym.width_for(0)


def test_sym_var_and_const_like():
    x = sym.sym_var("x", 100)
    assert x.size() == 7
    assert sym.const_like(99, x).size() == 7
    with pytest.raises(sym.SymbolicError, match="does not fit"):
        sym.const_like(200, x)
    with pytest.raises(sym.SymbolicError, match="negative"):
        sym.const_like(-1, x)


OPS = [("add", lambda a, b: a + b), ("mul", lambda a, b: a * b),
       ("udiv", lambda a, b: a // b), ("umod", lambda a, b: a % b),
       ("xor", lambda a, b: a ^ b), ("band", lambda a, b: a & b)]


@FAST
@given(st.sampled_from(OPS), st.integers(0, 255), st.integers(1, 255))
def test_helpers_agree_with_int_arithmetic_on_constants(op, a, b):
    name, reference = op
    f = getattr(sym, name)
    assert f(a, b) == reference(a, b)
    wide = 17 if name in ("add", "mul") else 8  # wide enough for the exact result
    got = f(z3.BitVecVal(a, wide), b)
    assert value(got) == reference(a, b)


@FAST
@given(st.integers(128, 255), st.integers(2, 127))
def test_division_is_unsigned_above_the_sign_bit(a, b):
    # a has its top bit set in 8 bits: signed division (z3's `/`) would see a negative
    x = z3.BitVec("x", 8)
    q = z3.substitute(sym.udiv(x, b), (x, z3.BitVecVal(a, 8)))
    r = z3.substitute(sym.umod(x, b), (x, z3.BitVecVal(a, 8)))
    assert value(q) == a // b and value(r) == a % b
    assert value(z3.substitute(sym.lshr(x, 3), (x, z3.BitVecVal(a, 8)))) == a >> 3
    signed = z3.simplify(z3.BitVecVal(a, 8) / b).as_long()
    assert signed != a // b  # the trap the helpers avoid is real


def test_a_constant_wider_than_the_term_widens_the_term():
    x = z3.BitVec("x", 4)
    t = sym.udiv(x, 100)  # 100 needs 7 bits
    assert t.size() >= 7
    assert value(z3.substitute(sym.umod(x, 100), (x, z3.BitVecVal(15, 4)))) == 15


def test_symbolic_times_symbolic_is_refused():
    x, y = z3.BitVecs("x y", 8)
    with pytest.raises(sym.SymbolicError, match="symbolic x symbolic"):
        sym.mul(x, y)


def test_negative_constants_are_refused_on_terms():
    x = z3.BitVec("x", 8)
    with pytest.raises(sym.SymbolicError, match="negative"):
        sym.mul(x, -2)


def test_shl_keeps_every_bit():
    x = z3.BitVec("x", 4)
    t = sym.shl(x, 4)
    assert value(z3.substitute(t, (x, z3.BitVecVal(15, 4)))) == 240


def test_no_overflow_is_empty_when_widths_suffice():
    x = z3.BitVec("x", 8)
    assert sym.no_overflow("mul", x, 1) == []
    assert sym.no_overflow("add", 3, 4) == []


def test_no_overflow_conditions_rule_out_exactly_the_wrapping_values():
    x = z3.BitVec("x", 8)
    (cond,) = sym.no_overflow("mul", x, 3)
    s = z3.Solver()
    s.add(z3.Not(cond), z3.ULT(x, 86))  # 85 * 3 = 255 fits, 86 * 3 wraps
    assert s.check() == z3.unsat
    s = z3.Solver()
    s.add(z3.Not(cond))
    assert s.check() == z3.sat and s.model()[x].as_long() * 3 > 255
    (cond,) = sym.no_overflow("add", x, 200)
    s = z3.Solver()
    s.add(cond, z3.UGT(x, 55))
    assert s.check() == z3.unsat


def test_in_range():
    x = z3.BitVec("x", 8)
    s = z3.Solver()
    s.add(sym.in_range(x, 10), x == 10)
    assert s.check() == z3.unsat
    assert sym.in_range(3, 4) is True
