"""What the values of an iterated arg-max selection (a top-k) stand for.

A router picks each row's k largest entries by rounds: take the row max of what is left,
the lowest column holding it, and set that column to -inf. Every value of that idiom is
a number defined by the data row and the *rank order* of its columns: column c comes
before column c' when its key is larger, or equal with c < c' (ties "low"; "high" takes
the larger column first). With sigma(i) the column of rank i:

  Keys(k)      the tile: the keys (sign * data) with the columns of rank < k at -inf
  Top(k)       the row vector: the key of rank k (the row max of Keys(k))
  IsTop(k)     the predicate tile Keys(k) == Top(k)
  Ties(k)      select(IsTop(k), col, fill), negated or not
  Pick(k)      the row vector sigma(k) (its negative when `negated`)
  IsPick(k)    the predicate tile col == sigma(k)
  Picked(k)    the predicate tile Keys(k) == -inf: the column's rank is below k
  Col          the column index of each element
  Centered     data - max (a tile) or data[sigma(k)] - max (a row vector), times 1/ln 2
               when `scaled`
  Soft         exp(data - max), a tile (k None) or the row vector of rank k
  SoftPicked   Soft where Picked(k), else 0
  Denom(n)     the sum of Soft over the columns of rank < n (n = the row's length: all)
  Weight(k, n) Soft of rank k / Denom(n): the softmax weight of the k-th choice,
               renormalised over the n first

The equalities hold for a data row of finite numbers (no NaN, no infinity) and for k
below the row's length; ranks are Python ints or loop-counter terms (a loop's rounds,
ranked_loops.py). The comparisons are exact on floats (a max returns one of its inputs;
column indices below 2^24 are exact in fp32); Soft, Denom and Weight are the real numbers
the float arithmetic rounds. ranked_rules.py moves these meanings through the ops,
ranked_store.py checks a stored Pick or Weight against the destination's routing fields.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional

import z3

from argus.verify.smt import bv

LOG2E = 1.0 / math.log(2.0)


class Tie:
    """Which of equal keys a selection takes first: "low" (the lowest column) or "high";
    None until the first arg-max over the keys fixes it (every round must then agree)."""

    def __init__(self, value: Optional[str] = None):
        self.value = value

    def bind(self, value: str) -> bool:
        if self.value is None:
            self.value = value
        return self.value == value


@dataclass(eq=False)
class Row:
    """A loaded tile whose rows are whole rows of a data tensor: the selection's data."""
    tensor: str
    ncols: int
    loc: Any


@dataclass(frozen=True)
class Keys:
    row: Row
    sign: int
    k: Any
    tie: Tie


@dataclass(frozen=True)
class Top:
    row: Row
    sign: int
    k: Any


@dataclass(frozen=True)
class IsTop:
    row: Row
    sign: int
    k: Any
    tie: Tie


@dataclass(frozen=True)
class Ties:
    row: Row
    sign: int
    k: Any
    tie: Tie
    fill: float
    negated: bool


@dataclass(frozen=True)
class Pick:
    row: Row
    sign: int
    k: Any
    tie: str
    negated: bool = False


@dataclass(frozen=True)
class IsPick:
    row: Row
    sign: int
    k: Any
    tie: str


@dataclass(frozen=True)
class Picked:
    row: Row
    sign: int
    k: Any
    tie: Tie


@dataclass(frozen=True)
class Col:
    ncols: int


@dataclass(frozen=True)
class Centered:
    row: Row
    k: Any                 # None: the tile (every column); else the rank's row vector
    scaled: bool = False


@dataclass(frozen=True)
class Soft:
    row: Row
    k: Any = None


@dataclass(frozen=True)
class SoftPicked:
    row: Row
    k: Any


@dataclass(frozen=True)
class Denom:
    row: Row
    n: Any


@dataclass(frozen=True)
class Weight:
    row: Row
    k: Any
    n: Any


def meaning(frag) -> Any:
    """The selection meaning of a fragment (None: none known)."""
    return getattr(frag, "ranked", None)


def fresh(m):
    """A copy that makes its own choice of tie order: Keys(0) has chosen no column yet, so
    a second selection over the same data (a copy of the tile) is a selection of its own."""
    if isinstance(m, Keys) and same(m.k, 0):
        return Keys(m.row, m.sign, 0, Tie())
    return m


def same(a, b) -> bool:
    """Two ranks are the same number (Python ints, or terms that simplify to equal)."""
    if a is None or b is None:
        return a is b
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    return z3.is_true(z3.simplify(bv(a) == bv(b)))


def plus(k, n: int):
    return k + n if isinstance(k, int) else z3.simplify(bv(k) + n)


def describe(m) -> str:
    order = "largest" if getattr(m, "sign", 1) > 0 else "smallest"
    if isinstance(m, Pick):
        return (f"the column of the {order} entry of a rank of its {m.row.tensor} row "
                f"(equal entries: the {'lowest' if m.tie == 'low' else 'highest'} column "
                f"first)")
    if isinstance(m, Weight):
        return f"a softmax weight of its {m.row.tensor} row"
    return type(m).__name__
