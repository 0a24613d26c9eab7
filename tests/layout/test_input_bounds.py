"""Layout text and drawings are bounded (issue 19, item 7): 5000 nested parentheses, a
tuple of thousands of modes, an integer of a million digits and a 100000 x 100000 layout
each give a LayoutNotationError or a DrawError at once, never a RecursionError or a hang."""

import time

import pytest

from argus.layout.draw import MAX_CELLS, DrawError, draw_layout
from argus.layout.notation import (MAX_DIGITS, MAX_NESTING, MAX_TEXT, LayoutNotationError,
                                   parse_layout)


def _refused(text: str) -> LayoutNotationError:
    start = time.monotonic()
    with pytest.raises(LayoutNotationError) as caught:
        parse_layout(text)
    assert time.monotonic() - start < 1.0
    return caught.value


def test_5000_nested_parentheses():
    err = _refused("(" * 5000 + "4" + ")" * 5000)
    assert "characters" in err.problem and err.column == MAX_TEXT + 1


def test_nesting_over_the_bound_names_its_column():
    err = _refused("(" * (MAX_NESTING + 1) + "4" + ")" * (MAX_NESTING + 1))
    assert "nested over" in err.problem and err.column == MAX_NESTING + 1


def test_nesting_at_the_bound_parses():
    layout = parse_layout("(" * MAX_NESTING + "4" + ")" * MAX_NESTING)
    assert layout.size() == 4


def test_an_integer_of_too_many_digits():
    err = _refused("(4," + "9" * (MAX_DIGITS + 1) + "):(1,4)")
    assert "digits" in err.problem and err.column == 4
    assert len(str(_refused("(4," + "9" * 1000 + ")"))) < 1000


def test_a_huge_layout_is_not_drawn(tmp_path):
    start = time.monotonic()
    with pytest.raises(DrawError) as caught:
        draw_layout(parse_layout("(100000,100000):(1,100000)"), tmp_path / "x.svg")
    assert time.monotonic() - start < 1.0
    assert "10000000000 elements" in str(caught.value) and str(MAX_CELLS) in str(caught.value)
    assert not (tmp_path / "x.svg").exists()


def test_a_tuple_of_2000_modes_is_not_drawn(tmp_path):
    with pytest.raises(DrawError) as caught:
        draw_layout(parse_layout("(" + ",".join(["2"] * 2000) + ")"), tmp_path / "x.svg")
    assert "about 2**2000 elements" in str(caught.value) and len(str(caught.value)) < 300


def test_the_largest_drawable_layout_is_drawn(tmp_path):
    path = draw_layout(parse_layout("(128,256):(256,1)"), tmp_path / "x.svg")
    assert path.read_text().count("<rect") >= MAX_CELLS


def test_an_unwritable_path_is_a_draw_error():
    with pytest.raises(DrawError) as caught:
        draw_layout(parse_layout("(4,8)"), "/proc/argus/x.svg")
    assert "cannot write /proc/argus/x.svg" in str(caught.value)
