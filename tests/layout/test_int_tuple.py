"""Nested integer tuples: structure, compact strides, and coordinate <-> index."""

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from argus.layout.int_tuple import (IntTupleError, congruent, crd2idx, depth, flatten, idx2crd,
                                    prefix_product, product, rank, shape_div)


def test_structure():
    t = ((2, 4), 3, (5, (6, 7)))
    assert flatten(t) == (2, 4, 3, 5, 6, 7)
    assert product(t) == 2 * 4 * 3 * 5 * 6 * 7
    assert rank(t) == 3 and rank(8) == 1
    assert depth(t) == 3 and depth(8) == 0 and depth((1, 2)) == 1
    assert congruent(t, ((0, 0), 0, (0, (0, 0))))
    assert not congruent(t, ((0, 0), 0, (0, 0)))
    assert product(()) == 1


def test_prefix_product_is_column_major():
    assert prefix_product((2, (3, 4), 5)) == (1, (2, 6), 24)
    assert prefix_product(7) == 1


SHAPES = st.recursive(st.integers(1, 4), lambda kids: st.tuples(kids, kids) | st.tuples(kids),
                      max_leaves=4)


@settings(max_examples=40, deadline=None)
@given(SHAPES)
def test_idx2crd_inverts_crd2idx_over_the_whole_domain(shape):
    seen = set()
    for i in range(product(shape)):
        c = idx2crd(i, shape)
        assert congruent(c, shape)
        assert all(0 <= x < s for x, s in zip(flatten(c), flatten(shape)))
        assert crd2idx(c, shape) == i
        assert crd2idx(i, shape) == i  # an int against a tuple splits colexicographically
        seen.add(c)
    assert len(seen) == product(shape)


def test_colexicographic_order_first_mode_fastest():
    coords = [idx2crd(i, (2, 3)) for i in range(6)]
    assert coords == [(x, y) for y, x in itertools.product(range(3), range(2))]


def test_crd2idx_with_strides_and_extension_of_the_last_mode():
    assert crd2idx((1, 2), (4, 8), (8, 1)) == 10
    assert crd2idx(33, (4, 8), (1, 4)) == 33  # past the size, the last mode keeps counting


def test_mismatched_coordinates_are_errors():
    with pytest.raises(IntTupleError, match="does not match"):
        crd2idx((1, 2, 3), (4, 8), (1, 4))
    with pytest.raises(IntTupleError, match="not congruent"):
        crd2idx(1, (4, 8), (1, (4, 2)))


def test_shape_div():
    assert shape_div((4, 6), 8) == (1, 3)
    assert shape_div((4, 6), 2) == (2, 6)
    assert shape_div(3, 6) == 1
    with pytest.raises(IntTupleError, match="neither"):
        shape_div(6, 4)
