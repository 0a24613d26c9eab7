"""Swizzles: bijections on their span, inverses, units, Hopper modes, composed layouts."""

import pytest
import z3
from hypothesis import given, settings
from hypothesis import strategies as st

from argus.layout import (ComposedLayout, Layout, Swizzle, SwizzleError, hopper_swizzle, sym_var,
                          swizzle_128b, swizzle_32b, swizzle_64b, swizzle_none)

FAST = settings(max_examples=40, deadline=None)
SWIZZLES = st.builds(Swizzle, st.integers(0, 3), st.integers(0, 4), st.integers(-4, 4).filter(bool))


def bit(x, k):
    return (x >> k) & 1


@FAST
@given(SWIZZLES)
def test_swizzles_are_bijections_on_their_span(sw):
    span = sw.span()
    assert sorted(sw(x) for x in range(span)) == list(range(span))
    # and on every aligned block of the span: the high bits pass through
    assert all(sw(x + 3 * span) == sw(x) + 3 * span for x in range(span))


@FAST
@given(SWIZZLES)
def test_inverse_undoes_the_swizzle(sw):
    inv = sw.inverse()
    assert all(inv(sw(x)) == x and sw(inv(x)) == x for x in range(sw.span()))


def test_shift_zero_is_not_invertible():
    with pytest.raises(SwizzleError, match="not invertible"):
        Swizzle(2, 3, 0).inverse()
    assert Swizzle(0, 4, 0).is_identity() and Swizzle(0, 4, 0).inverse()(77) == 77


def test_hopper_modes_match_the_ptx_bit_description():
    # PTX: 128B swizzle XORs address bits [4:6] with [7:9]; 64B [4:5] with [7:8]; 32B bit 4 with 7
    for sw, n in ((swizzle_128b(), 3), (swizzle_64b(), 2), (swizzle_32b(), 1), (swizzle_none(), 0)):
        for x in range(0, 4096, 3):
            want = x
            for k in range(n):
                want ^= bit(x, 7 + k) << (4 + k)
            assert sw(x) == want
    assert hopper_swizzle("128B") == Swizzle(3, 4, 3) and swizzle_128b().span() == 1024
    with pytest.raises(SwizzleError, match="choose one of"):
        hopper_swizzle("256B")


def test_unit_conversion_byte_and_element_swizzles_agree():
    sw = swizzle_128b()
    half = sw.to_elements(2)
    assert half == Swizzle(3, 3, 3, "element")
    assert sw.to_elements(1) == Swizzle(3, 4, 3, "element")
    assert half.to_bytes(2) == sw
    for e in (1, 2, 4, 8, 16):  # element offset x is byte 2^k * x: same permutation
        el = sw.to_elements(e)
        assert all(sw(x * e) == el(x) * e for x in range(2048 // e))


def test_unit_conversion_errors():
    with pytest.raises(SwizzleError, match="do not divide the 16-byte chunk"):
        swizzle_128b().to_elements(32)
    with pytest.raises(SwizzleError, match="not a power of two"):
        swizzle_128b().to_elements(3)
    with pytest.raises(SwizzleError, match="already acts on elements"):
        swizzle_128b().to_elements(2).to_elements(2)
    with pytest.raises(SwizzleError, match="unit"):
        Swizzle(3, 4, 3, "bits")


def sub(term, var, x):
    return z3.simplify(z3.substitute(term, (var, z3.BitVecVal(x, var.size())))).as_long()


@pytest.mark.parametrize("sw", [swizzle_128b(), swizzle_64b(), Swizzle(2, 1, -3), Swizzle(3, 0, 1)])
def test_symbolic_swizzle_equals_concrete_on_every_point(sw):
    x = sym_var("x", 2 * sw.span())
    assert [sub(sw(x), x, v) for v in range(2 * sw.span())] == [sw(v) for v in range(2 * sw.span())]
    inv = sw.inverse()
    assert [sub(inv(x), x, v) for v in range(sw.span())] == [inv(v) for v in range(sw.span())]


def test_composed_layout_swizzles_offset_plus_layout():
    # the SW128 K-major bf16 atom: 8 rows of 64 elements (128 bytes), in element units
    atom = Layout((8, 64), (64, 1))
    sw = swizzle_128b().to_elements(2)
    c = ComposedLayout(sw, 0, atom)
    assert c.unit == "element" and c.size() == 512
    assert sorted(c(i) for i in range(512)) == list(range(512))
    for m in range(8):  # row m: its 16-byte chunk j lands in chunk j ^ m
        for k in range(64):
            assert c(m, k) // 8 == m * 8 + ((k // 8) ^ m)
    staged = ComposedLayout(sw, 512, atom)
    assert [staged(i) for i in range(512)] == [c(i) + 512 for i in range(512)]


def test_symbolic_composed_layout_with_symbolic_offset():
    atom = Layout((8, 64), (64, 1))
    sw = swizzle_128b().to_elements(2)
    i, base = sym_var("i", 512), sym_var("base", 1 << 14)
    term = ComposedLayout(sw, base, atom)(i)
    for b in (0, 512, 8192, 16383):
        concrete = ComposedLayout(sw, b, atom)
        for v in range(0, 512, 37):
            got = z3.simplify(z3.substitute(term, (i, z3.BitVecVal(v, i.size())),
                                            (base, z3.BitVecVal(b, base.size())))).as_long()
            assert got == concrete(v)


def test_composed_layout_tiles_through_compose():
    c = ComposedLayout(swizzle_128b().to_elements(2), 0, Layout((8, 64), (64, 1)))
    half = c.compose((Layout(8), Layout(32)))
    assert [half(m, k) for m in range(8) for k in range(32)] == \
        [c(m, k) for m in range(8) for k in range(32)]
