"""CuTe notation: parsing, formatting, round trip, and errors that point at the column."""

import pytest
from hypothesis import given, settings

from argus.layout import (ComposedLayout, Layout, LayoutNotationError, format_layout,
                          parse_int_tuple, parse_layout, swizzle_128b)

from .test_layout_properties import layouts


@pytest.mark.parametrize("text,shape,stride", [
    ("(4,8):(8,1)", (4, 8), (8, 1)),
    ("((2,4),(3,5)):((1,6),(2,30))", ((2, 4), (3, 5)), ((1, 6), (2, 30))),
    ("8:1", 8, 1),
    ("(4,8)", (4, 8), (1, 4)),  # no stride: compact column-major
    ("  ( 4 , 8 ) : ( 8 , 1 ) ", (4, 8), (8, 1)),
    ("(4):(2)", (4,), (2,)),
])
def test_parse(text, shape, stride):
    layout = parse_layout(text)
    assert layout.shape == shape and layout.stride == stride


@settings(max_examples=60, deadline=None)
@given(layouts())
def test_format_then_parse_round_trips(layout):
    text = format_layout(layout)
    assert " " not in text
    assert parse_layout(text) == layout
    assert text == repr(layout)


def test_format_composed_layout():
    c = ComposedLayout(swizzle_128b(), 0, Layout((8, 64), (64, 1)))
    assert format_layout(c) == "Sw<3,4,3> o 0 o (8,64):(64,1)"


@pytest.mark.parametrize("text,column,problem", [
    ("(4,8:(8,1)", 5, "expected ',' or ')'"),
    ("(4,8):(8,1,2)", 7, "not congruent"),
    ("(4,0):(1,4)", 4, "at least 1"),
    ("(4,x)", 4, "expected an integer or '('"),
    ("4:1)", 4, "expected the end"),
    ("(4,8):", 7, "expected an integer"),
    ("(-4,8)", 2, "negative"),
    ("", 1, "empty layout"),
    ("(4,8) (1,4)", 7, "expected ':'"),
])
def test_errors_point_at_the_column(text, column, problem):
    with pytest.raises(LayoutNotationError) as info:
        parse_layout(text)
    err = info.value
    assert err.column == column
    assert problem in str(err)
    caret_line = str(err).splitlines()[-1]
    assert caret_line.index("^") - 2 == column - 1  # the caret sits under the character


def test_errors_are_value_errors_for_callers():
    with pytest.raises(ValueError):
        parse_layout("(4,")


def test_parse_int_tuple():
    assert parse_int_tuple("(2,(3,4))") == (2, (3, 4))
    assert parse_int_tuple("7") == 7
    with pytest.raises(LayoutNotationError, match="after the tuple"):
        parse_int_tuple("(2,3)x")
