"""Layout basics, documented CuTe examples, symbolic evaluation, and the error messages."""

import pytest
import z3

from argus.layout import (Layout, LayoutError, blocked_product, coalesce, complement,
                          composition, left_inverse, logical_divide, make_layout, raked_product,
                          right_inverse, sym_var, zipped_divide)
from argus.layout import symbolic as sym


def test_size_cosize_rank_depth_and_modes():
    a = Layout(((2, 4), 3), ((1, 6), 2))
    assert a.size() == 24 and a.rank() == 2 and a.depth() == 2 and len(a) == 2
    assert a.cosize() == max(a(i) for i in range(24)) + 1
    assert a[0] == Layout((2, 4), (1, 6)) and a[1] == Layout(3, 2)
    assert repr(a) == "((2,4),3):((1,6),2)"
    assert Layout((4, 8)) == Layout((4, 8), (1, 4))  # compact column-major by default
    assert Layout((4, 8)) != Layout((4, 8), (8, 1))


def test_flat_index_and_hierarchical_coordinates_agree():
    a = Layout(((2, 4), 3), ((1, 6), 2))
    for i in range(24):
        i0, i1 = i % 8, i // 8
        assert a(i) == a((i0, i1)) == a(((i0 % 2, i0 // 2), i1)) == a(i0, i1)
    assert Layout((4, 8), (8, 1))(1, 2) == 10


def test_bad_layouts_are_refused():
    with pytest.raises(LayoutError, match="not congruent"):
        Layout((4, 8), (1, (4, 2)))
    with pytest.raises(LayoutError, match="at least 1"):
        Layout((4, 0))


# Examples from the CuTe docs (media/docs/cpp/cute/02_layout_algebra.md) and the reference
# notes: independent statements of what the operations return.
def test_documented_examples():
    assert complement(Layout(4, 2), 24) == Layout((2, 3), (1, 8))
    assert complement(Layout((2, 2), (1, 6)), 24) == Layout((3, 2), (2, 12))
    assert coalesce(Layout((2, (1, 6)), (1, (6, 2)))) == Layout(12, 1)
    assert composition(Layout((6, 2), (8, 2)), Layout((4, 3), (3, 1))) == \
        Layout(((2, 2), 3), ((24, 2), 8))
    assert logical_divide(Layout((4, 2, 3), (2, 1, 8)), Layout(4, 2)) == \
        Layout(((2, 2), (2, 3)), ((4, 1), (2, 8)))


def test_rank_sensitive_products_on_documented_shapes():
    block, tiles = Layout((2, 2), (1, 2)), Layout((3, 4))
    blocked = blocked_product(block, tiles)
    raked = raked_product(block, tiles)
    assert blocked.shape == ((2, 3), (2, 4)) and raked.shape == ((3, 2), (4, 2))
    # blocked: a 2x2 block is contiguous; raked: neighbouring elements come from other blocks
    assert sorted(blocked(i, j) for i in range(2) for j in range(2)) == [0, 1, 2, 3]
    assert sorted(raked(i, j) for i in (0, 3) for j in (0, 4)) == [0, 1, 2, 3]


def test_rank_one_products_stay_rank_one():
    assert blocked_product(Layout(4), Layout(3)).rank() == 1


def test_composition_divisibility_errors_name_the_mode():
    with pytest.raises(LayoutError, match=r"stride divisibility fails at mode 0 .*shape 3"):
        composition(Layout((3, 5), (1, 10)), Layout(2, 2))
    with pytest.raises(LayoutError, match=r"shape divisibility fails at mode 0 .*shape 6"):
        composition(Layout((6, 2), (1, 10)), Layout(4, 2))
    with pytest.raises(LayoutError, match=r"mode 1 .*shape 5"):
        composition(Layout((2, 5, 7), (1, 20, 200)), Layout(3, 4))


def test_overlapping_modes_of_b_are_refused_because_by_mode_would_be_wrong():
    a, b = Layout((2, 2), (0, 1)), Layout((2, 2), (1, 1))
    by_mode = [composition(a, b[0])(i % 2) + composition(a, b[1])(i // 2) for i in range(4)]
    assert by_mode != [a(b(i)) for i in range(4)]  # what composing mode by mode would give
    with pytest.raises(LayoutError, match="modes 0 .* and 1 .* overlap"):
        composition(a, b)


def test_complement_of_a_non_injective_layout_is_an_error():
    with pytest.raises(LayoutError, match="not injective"):
        complement(Layout((2, 2), (1, 1)))
    with pytest.raises(LayoutError, match="must be injective"):
        left_inverse(Layout((4, 2), (1, 2)))


def test_algebra_needs_static_layouts():
    n = sym_var("n", 1 << 16)
    with pytest.raises(LayoutError, match="symbolic leaf"):
        composition(Layout((4, 8), (1, n)), Layout(2, 1))


def test_right_inverse_follows_strides_past_broadcast_modes():
    a = Layout((2, 4), (0, 1))
    r = right_inverse(a)
    assert r.size() == 4 and [a(r(i)) for i in range(4)] == [0, 1, 2, 3]


def test_zipped_divide_groups_tiles_first():
    z = zipped_divide(Layout((8, 12)), (Layout(2), Layout(3)))
    assert z[0].size() == 6 and z[1].size() == 16


# -- symbolic evaluation -------------------------------------------------------------------

def points(term, var, domain):
    return [z3.simplify(z3.substitute(term, (var, z3.BitVecVal(i, var.size())))).as_long()
            for i in domain]


@pytest.mark.parametrize("layout", [
    Layout((4, 8), (8, 1)), Layout(((2, 4), (3, 5)), ((1, 6), (2, 30))),
    Layout((3, 1, 5), (7, 0, 2)), Layout(((4, 8, 4), (2, 2, 2)), ((128, 1, 16), (64, 8, 512))),
])
def test_symbolic_flat_index_equals_concrete_on_every_point(layout):
    i = sym_var("i", layout.size())
    assert points(layout(i), i, range(layout.size())) == layout.values()


def test_symbolic_coordinate_equals_concrete():
    a = Layout(((2, 4), 3), ((1, 6), 2))
    x, y = sym_var("x", 8), sym_var("y", 3)
    term = a(x, y)
    for i in range(8):
        for j in range(3):
            got = z3.simplify(z3.substitute(term, (x, z3.BitVecVal(i, x.size())),
                                            (y, z3.BitVecVal(j, y.size())))).as_long()
            assert got == a(i, j)


def test_solver_proves_coalesce_preserves_the_function():
    a = Layout(((2, 4), (3, 5)), ((1, 2), (8, 24)))
    i = sym_var("i", a.size())
    lhs, rhs = a(i), coalesce(a)(i)
    w = max(lhs.size(), rhs.size())
    s = z3.Solver()
    s.add(sym.in_range(i, a.size()), sym.widen(lhs, w) != sym.widen(rhs, w))
    assert s.check() == z3.unsat


def test_indices_above_the_sign_bit_evaluate_correctly():
    a = Layout((16, 16), (16, 1))  # a transpose: needs i // 16 and i % 16
    i = z3.BitVec("i", 8)  # values 128..255 are negative in two's complement
    assert points(a(i), i, range(128, 256)) == [a(k) for k in range(128, 256)]


def test_symbolic_stride_with_static_coordinate_and_symbolic_coordinate_refusal():
    ld = sym_var("ld", 1 << 12)
    a = Layout((4, 8), (1, ld))
    term = a((3, 5))
    assert z3.simplify(z3.substitute(term, (ld, z3.BitVecVal(100, ld.size())))).as_long() == 503
    with pytest.raises(sym.SymbolicError, match="symbolic x symbolic"):
        a(sym_var("i", 32))


def test_nothing_wraps_in_the_evaluation_width():
    a = Layout((64, 64), (4096, 1))  # offsets up to 2^18 from a 12-bit index
    i = sym_var("i", a.size())
    assert a(i).size() >= 18
    assert points(a(i), i, [4095, 4032, 63]) == [a(4095), a(4032), a(63)]


def test_make_layout_concatenates_modes():
    c = make_layout(Layout(4, 1), Layout((2, 3), (4, 8)))
    assert c == Layout((4, (2, 3)), (1, (4, 8)))
