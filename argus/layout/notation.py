"""CuTe notation for layouts: parse "(4,8):(8,1)" into a Layout and format it back.

Grammar (spaces allowed between tokens):

    layout    := int_tuple [":" int_tuple]      no stride: compact column-major
    int_tuple := INT | "(" int_tuple ("," int_tuple)* ")"

A one-element tuple is written "(4)" (as CuTe prints it), so format and parse round-trip.
Errors name the column (1-based) of the offending character and show a caret under it.

Text from a user or a model is bounded before it is parsed: at most MAX_TEXT characters,
MAX_NESTING levels of parentheses and MAX_DIGITS digits per integer, so no input makes
the (recursive) parser run out of stack or build an integer of a million digits.
"""

from __future__ import annotations

from . import int_tuple as it
from .layout import Layout, LayoutError


MAX_TEXT = 4096        # characters of one layout: the largest Hopper atom's is under 200
MAX_NESTING = 32       # levels of parentheses: CuTe layouts nest two or three deep
MAX_DIGITS = 18        # digits of one shape or stride (below 2**63)


class LayoutNotationError(ValueError):
    """Text that is not CuTe layout notation; `column` is 1-based."""

    def __init__(self, text: str, column: int, problem: str):
        self.text, self.column, self.problem = text, column, problem
        shown = text if len(text) <= 200 else text[:200] + " ..."
        caret = " " * (column - 1) + "^" if column <= 200 else ""
        super().__init__(f"{problem} at column {column}\n  {shown}\n  {caret}")


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.pos = 0
        self.depth = 0
        self.check_size()

    def check_size(self):
        """The bounds of the module docstring, checked by one pass over the text."""
        if len(self.text) > MAX_TEXT:
            self.fail(f"layout text of {len(self.text)} characters, over the {MAX_TEXT} "
                      f"this parser takes", MAX_TEXT)
        depth, digits = 0, 0
        for pos, c in enumerate(self.text):
            depth += (c == "(") - (c == ")")
            digits = digits + 1 if c.isdigit() else 0
            if depth > MAX_NESTING:
                self.fail(f"parentheses nested over {MAX_NESTING} deep; a layout nests a few "
                          f"levels", pos)
            if digits > MAX_DIGITS:
                self.fail(f"an integer of over {MAX_DIGITS} digits", pos - MAX_DIGITS)

    def fail(self, problem: str, pos: int | None = None):
        raise LayoutNotationError(self.text, (self.pos if pos is None else pos) + 1, problem)

    def skip_spaces(self):
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def peek(self) -> str:
        self.skip_spaces()
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def describe(self) -> str:
        c = self.peek()
        return f"'{c}'" if c else "the end of the text"

    def int_tuple(self, what: str):
        c = self.peek()
        if c == "(":
            self.pos += 1
            items = [self.int_tuple(what)]
            while self.peek() == ",":
                self.pos += 1
                items.append(self.int_tuple(what))
            if self.peek() != ")":
                self.fail(f"expected ',' or ')' in the {what}, found {self.describe()}")
            self.pos += 1
            return tuple(items)
        if c.isdigit():
            start = self.pos
            while self.pos < len(self.text) and self.text[self.pos].isdigit():
                self.pos += 1
            return int(self.text[start:self.pos])
        if c == "-":
            self.fail(f"negative numbers are not CuTe {what} notation here; write "
                      "non-negative integers")
        self.fail(f"expected an integer or '(' in the {what}, found {self.describe()}")


def parse_int_tuple(text: str):
    """"(2,(3,4))" -> (2, (3, 4)); "8" -> 8."""
    p = _Parser(text)
    value = p.int_tuple("tuple")
    if p.peek():
        p.fail(f"unexpected {p.describe()} after the tuple")
    return value


def parse_layout(text: str) -> Layout:
    """A Layout from CuTe notation: "(4,8):(8,1)", "8:1", "(4,8)" (column-major)."""
    if not isinstance(text, str):
        raise TypeError(f"parse_layout takes a string, got {type(text).__name__}")
    p = _Parser(text)
    if not p.peek():
        p.fail("empty layout; write shape:stride such as (4,8):(8,1)")
    shape_pos = p.pos
    shape = p.int_tuple("shape")
    stride = None
    stride_pos = None
    if p.peek() == ":":
        p.pos += 1
        p.skip_spaces()
        stride_pos = p.pos
        stride = p.int_tuple("stride")
    if p.peek():
        expected = "expected ':' or the end" if stride is None else "expected the end"
        p.fail(f"{expected}, found {p.describe()}")
    if any(leaf == 0 for leaf in it.flatten(shape)):
        p.fail("a shape extent must be at least 1, found 0", shape_pos + _first_zero(text[shape_pos:]))
    if stride is not None and not it.congruent(shape, stride):
        p.fail(f"stride {format_int_tuple(stride)} is not congruent with shape "
               f"{format_int_tuple(shape)} (same nesting needed)", stride_pos)
    try:
        return Layout(shape, stride)
    except LayoutError as err:  # pragma: no cover - the checks above catch what Layout does
        p.fail(str(err), shape_pos)


def _first_zero(text: str) -> int:
    """Offset of the first standalone 0 in text (used to point at a zero extent)."""
    i = 0
    while i < len(text):
        if text[i].isdigit():
            j = i
            while j < len(text) and text[j].isdigit():
                j += 1
            if int(text[i:j]) == 0:
                return i
            i = j
        else:
            i += 1
    return 0


def format_int_tuple(t) -> str:
    if it.is_tuple(t):
        return "(" + ",".join(format_int_tuple(x) for x in t) + ")"
    return str(t)


def format_layout(layout) -> str:
    """CuTe notation of a Layout (or a swizzled ComposedLayout: "Sw<3,4,3> o 0 o L")."""
    if isinstance(layout, Layout):
        return format_int_tuple(layout.shape) + ":" + format_int_tuple(layout.stride)
    inner = getattr(layout, "layout", None)
    if isinstance(inner, Layout):
        return f"{layout.swizzle} o {layout.offset} o {format_layout(inner)}"
    raise TypeError(f"format_layout takes a Layout or ComposedLayout, got {layout!r}")
