"""Tag-assertion predicates: a small expression tree over the tags and coordinates of the
values an assertion names. Operand i refers to the i-th operand of the tag.assert op."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union


@dataclass(frozen=True)
class TagField:
    """Field `field` of the tag of each element of operand `operand` (e.g. row, k, token)."""
    operand: int
    field: str

    def __str__(self) -> str:
        return f"tag(${self.operand}).{self.field}"


@dataclass(frozen=True)
class CoordOf:
    """Coordinate `axis` of each element of operand `operand` (a destination's position)."""
    operand: int
    axis: int

    def __str__(self) -> str:
        return f"coord(${self.operand})[{self.axis}]"


@dataclass(frozen=True)
class ScalarRef:
    operand: int

    def __str__(self) -> str:
        return f"${self.operand}"


@dataclass(frozen=True)
class ValueOf:
    """The value of each element of operand `operand`, an index or predicate fragment (e.g. a
    mask: `tag_assert(keep == (tag(s).col <= tag(s).row))`)."""
    operand: int

    def __str__(self) -> str:
        return f"value(${self.operand})"


@dataclass(frozen=True)
class Lookup:
    """Entry `index` of the 1-D int32 tensor operand `operand` (a routing array such as the
    token ids: `ids[coord(dst)[0]]`), an uninterpreted function to the verifier."""
    operand: int
    index: "TagExpr"

    def __str__(self) -> str:
        return f"${self.operand}[{self.index}]"


@dataclass(frozen=True)
class Const:
    value: int

    def __str__(self) -> str:
        return str(self.value)


@dataclass(frozen=True)
class BinExpr:
    op: str      # + - * // % == != < <= > >= and or
    lhs: "TagExpr"
    rhs: "TagExpr"

    def __str__(self) -> str:
        return f"({self.lhs} {self.op} {self.rhs})"


TagExpr = Union[TagField, CoordOf, ScalarRef, ValueOf, Lookup, Const, BinExpr]


def operands_of(expr: TagExpr) -> set[int]:
    if isinstance(expr, (TagField, CoordOf, ScalarRef, ValueOf)):
        return {expr.operand}
    if isinstance(expr, Lookup):
        return {expr.operand} | operands_of(expr.index)
    if isinstance(expr, BinExpr):
        return operands_of(expr.lhs) | operands_of(expr.rhs)
    return set()
