"""What the values of an online softmax stand for (flash attention), beyond their tags.

A fragment's tag says which element each register holds (row, col, iteration); its
*meaning* (FragTag.meaning) says which number that is, symbolically, so that the tag pass
can check the algebra of the online softmax:

  Series      a tile of scores, one key block of the loop (its iterations are the blocks),
              masked to -inf outside a predicate (mask.py)
  Stat        a row statistic of a Series over a span of blocks [lo, hi): the max, or the
              sum of exp2(x - ref) with ref a max Stat (a plain sum when ref is None)
  Diff, Exp   x - m and exp2(x - m) for a Series x and a max Stat m (P)
  Gap, Alpha  m_old - m_new and exp2(m_old - m_new) (the rescale factor)
  SoftAcc     the attention accumulator: sum over the blocks of a span of P V, with P
              relative to the max Stat `ref`
  Normalised  SoftAcc / its row sum
  IndexVal, PredVal   index and predicate fragments (row_of, col_of, comparisons): their
              value per element as a term over the position (pr, pc)

Two Stats are the same number for a row when they summarise the same Series over the same
blocks, or over spans that differ by a block with no unmasked key in that row (a fully
masked block adds -inf to a max and 0 to a sum). `differs` builds the z3 condition under
which they are not; a violation needs it (so a counterexample is a row and step where the
numbers really differ).

Loop-carried values (carried.py) start from an inductive hypothesis with Holes: unknowns
fixed by their first use in the loop body, then checked at every later use and at the end
of the body.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, Optional

import z3

from argus.ir.nodes import Loc
from argus.verify.smt import bv



class Hole:
    """An unknown of a loop's hypothesis (the series or the row of a carried statistic),
    fixed by its first use; `sinks` are called with the value when it is fixed."""

    def __init__(self, what: str):
        self.what = what
        self.value: Any = None
        self.sinks: list[Callable[[Any], None]] = []

    def bind(self, value) -> None:
        self.value = value
        for sink in self.sinks:
            sink(value)

    def __repr__(self) -> str:
        return f"Hole({self.what}={self.value!r})"


def resolve(x):
    while isinstance(x, Hole) and x.value is not None:
        x = x.value
    return x


@dataclass(frozen=True)
class Span:
    """Blocks [lo, hi) of the loop whose counter is `loop` (None: no loop, block 0)."""
    loop: Optional[str]
    lo: Any
    hi: Any

    def subst(self, pairs) -> "Span":
        return Span(self.loop, subst(self.lo, pairs), subst(self.hi, pairs))


@dataclass(eq=False)
class Series:
    """A tile of scores: block `block` (the loop counter's value) of loop `loop`; elements
    outside `mask` hold -inf. Identity matters: a statistic is of one Series."""
    name: str
    loc: Loc
    loop: Optional[str]
    block: Any
    fields: dict                   # the tile's tag fields (row, col, ...) over (pr, pc)
    rows: int
    cols: int
    layout: str
    mask: Optional["PredVal"] = None
    # the element's query row and key column are real (contribution.real_row/real_col of
    # the product it came from; None: not known): mask.real_keys checks that a key that is
    # not real is masked in every real row before the tile is reduced
    real_row: Any = None
    real_col: Any = None
    # how the tile is computed from the fragment a wgmma accumulates into (softmax.recipe):
    # two tiles of a split loop's parts are the same numbers only with the same recipe
    recipe: Any = None


@dataclass
class Stat:
    kind: str                      # "max" | "sum"
    series: Any                    # Series or Hole
    span: Span
    row: Any                       # term over pr, or Hole
    ref: Optional["Stat"] = None   # sum of exp2(x - ref); None: a plain sum (or a max)
    loc: Optional[Loc] = None

    @property
    def exp_sum(self) -> bool:
        return self.kind == "sum" and self.ref is not None

    def subst(self, pairs) -> "Stat":
        row = self.row if isinstance(resolve(self.row), Hole) else subst(resolve(self.row), pairs)
        return replace(self, series=resolve(self.series), span=self.span.subst(pairs), row=row,
                       ref=self.ref.subst(pairs) if self.ref is not None else None)

    def describe(self, model=None) -> str:
        series = resolve(self.series)
        name = series.name if isinstance(series, Series) else "a score tile"
        blocks = span_text(self.span, model)
        if self.kind == "max":
            return f"the max of {name} over {blocks}"
        if self.kind == "max-exp":
            return f"the max of exp2({name} - m) over {blocks}"
        if self.ref is None:
            return f"the plain row sum of {name} over {blocks}"
        return f"the sum of exp2({name} - m) over {blocks}, with m = {self.ref.describe(model)}"


    @property
    def kind_text(self) -> str:
        """What it is, without which blocks (for messages about the wrong kind of value)."""
        series = resolve(self.series)
        name = series.name if isinstance(series, Series) else "a score tile"
        return {"max": f"a row max of {name}", "max-exp": f"a row max of exp2({name} - m)",
                "sum": f"a row sum of exp2({name} - m)" if self.ref is not None
                else f"a plain row sum of {name}"}[self.kind]


@dataclass
class Diff:
    series: Series
    ref: Stat


@dataclass
class Exp:
    series: Series
    ref: Stat


@dataclass
class Gap:
    src: Stat
    dst: Stat


@dataclass
class Alpha:
    src: Stat
    dst: Stat


@dataclass
class SoftAcc:
    ref: Stat                      # P relative to this max
    span: Span                     # the blocks accumulated
    series: Any                    # the Series of P (or Hole)
    row: Any                       # term over pr, or Hole
    col: Any                       # term over pc, or Hole


@dataclass
class Reciprocal:
    """1 / l of a row fragment l (whatever l holds: o * (1 / l) is checked as o / l is, at
    the multiply); `frag` is l's fragment, `operand` the IR value it was read from."""
    frag: Any
    operand: Any


@dataclass
class Normalised:
    series: Series


@dataclass
class IndexVal:
    """An int32 fragment: its value per element (64-bit two's complement term)."""
    term: Any


@dataclass(eq=False)
class PredVal:
    """A predicate fragment: its value per element (z3 Bool over pr, pc and the scope).
    `spec` is set by a proved tag_assert(pred == <predicate of tag(x).row, tag(x).col>):
    the mask as a function of (query, key), defined for every key, visited or not."""
    term: Any
    loc: Loc
    spec: Optional[Callable[[Any, Any], Any]] = None
    spec_text: str = ""
    spec_tags: tuple = ()          # the (row, col) tag terms the specification was proved on


# -- terms -------------------------------------------------------------------------------
def subst(x, pairs):
    if isinstance(x, int) or not pairs:
        return x
    return z3.substitute(x if isinstance(x, z3.BoolRef) else bv(x), *pairs)


def eq(a, b):
    return bv(a) == bv(b)


_FRESH = [0]


def has_key(w, series: Series, pr, block) -> Any:
    """There is an unmasked key in row position pr of the series' block `block` (an
    existential column: it only ever appears positively in a violation)."""
    if series.mask is None:
        return z3.BoolVal(True)
    _FRESH[0] += 1
    pc = z3.BitVec(f"key_col#{_FRESH[0]}", 64)
    pairs = [(w.pos["pc"], pc), (w.pos["pr"], bv(pr))]
    if series.loop is not None and not isinstance(series.block, int):
        pairs.append((bv(series.block), bv(block)))
    return z3.And(z3.ULT(pc, series.cols), subst(series.mask.term, pairs))


def empty(span: Span):
    return eq(span.lo, span.hi)


def span_same(w, a: Span, b: Span, series) -> Any:
    """The two spans summarise the same keys of the row at position pr."""
    if a.loop != b.loop:
        return z3.BoolVal(False)
    both_empty = z3.And(empty(a), empty(b))
    same = z3.And(eq(a.lo, b.lo), eq(a.hi, b.hi))
    if not isinstance(series, Series) or series.mask is None:
        return z3.Or(same, both_empty)
    pr = w.pos["pr"]
    one_more = z3.And(eq(a.lo, b.lo), eq(bv(b.hi), bv(a.hi) + 1),
                      z3.Not(has_key(w, series, pr, bv(a.hi))))
    one_less = z3.And(eq(a.lo, b.lo), eq(bv(a.hi), bv(b.hi) + 1),
                      z3.Not(has_key(w, series, pr, bv(b.hi))))
    return z3.Or(same, both_empty, one_more, one_less)


def same_series(a, b) -> bool:
    """Python-level: the same Series (binding a Hole on either side)."""
    a, b = resolve(a), resolve(b)
    if isinstance(a, Hole) and isinstance(b, Hole):
        return a is b
    if isinstance(a, Hole):
        a.bind(b)
        return True
    if isinstance(b, Hole):
        b.bind(a)
        return True
    return a is b


def row_differs(a, b):
    """z3 condition: the row terms differ (binding a Hole on either side)."""
    ra, rb = resolve(a), resolve(b)
    if isinstance(ra, Hole) and isinstance(rb, Hole):
        return z3.BoolVal(ra is not rb)
    if isinstance(ra, Hole):
        ra.bind(rb)
        return z3.BoolVal(False)
    if isinstance(rb, Hole):
        rb.bind(ra)
        return z3.BoolVal(False)
    return bv(ra) != bv(rb)


def differs(w, a: Optional[Stat], b: Optional[Stat]) -> Any:
    """z3 condition under which two statistics are different numbers for the row at pr."""
    if a is None or b is None:
        return z3.BoolVal(a is not b)
    if a.kind != b.kind or (a.ref is None) != (b.ref is None):
        return z3.BoolVal(True)
    if not same_series(a.series, b.series):
        return z3.BoolVal(True)
    parts = [row_differs(a.row, b.row),
             z3.Not(span_same(w, a.span, b.span, resolve(a.series)))]
    if a.ref is not None:
        parts.append(differs(w, a.ref, b.ref))
    return z3.Or(*parts)


def span_text(span: Span, model=None) -> str:
    if model is None:
        return f"blocks [{span.lo}, {span.hi})"
    from argus.verify.smt import value
    lo, hi = value(model, span.lo), value(model, span.hi)
    if hi <= lo:
        return "no block (it is still -inf or 0)"
    if hi == lo + 1:
        return f"block {lo}"
    return f"blocks {lo}..{hi - 1}"


# -- state kept on the walker ----------------------------------------------------------------
@dataclass
class AttentionState:
    loops: list = field(default_factory=list)          # carried.LoopFrame stack
    loop_ops: dict = field(default_factory=dict)       # loop var name -> the for op
    masks: list = field(default_factory=list)          # mask.MaskRecord per walk
    consumed: set = field(default_factory=set)         # contributions checked (ids)
    assigned: dict = field(default_factory=dict)       # id(Fragment) -> loc of last assign
    keygens: dict = field(default_factory=dict)        # id(Contribution) -> (key, valid, n)
    scaled: dict = field(default_factory=dict)         # (id(Series), c) -> (it, c times it)


def state(w) -> AttentionState:
    st = getattr(w, "attention_state", None)
    if st is None:
        st = AttentionState()
        w.attention_state = st
    return st
