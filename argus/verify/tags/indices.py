"""Index and predicate fragments: `row_of(x)`, `col_of(x)` (frag.coord), arithmetic on
them with uniform scalars, and comparisons (math.cmp), which make masks.

The value of element (pr, pc) of `row_of(x)` is pr (its logical row in x's tile); sums and
products with scalars stay terms over (pr, pc) and the scope. Index fragments are int32 in
the generated code: they are modelled as 64-bit two's complement terms and compared
signed, so `row_of(s) - col_of(s) >= 0` means what it says (every base variable is below
2^24, so no int32 value here wraps; that bound is the verifier's, see verifier.md)."""

from __future__ import annotations

import z3

from argus.ir.nodes import Op
from argus.verify.smt import bv

from . import scalars
from .meaning import IndexVal, PredVal
from .values import FragTag, Fragment

_CMP = {"lt": lambda a, b: a < b, "le": lambda a, b: a <= b, "gt": lambda a, b: a > b,
        "ge": lambda a, b: a >= b, "eq": lambda a, b: a == b, "ne": lambda a, b: a != b}
_ARITH = ("add", "sub", "mul", "min", "max")


def index_fragment(f) -> bool:
    return isinstance(f, Fragment) and isinstance(f.tag.meaning, (IndexVal, PredVal))


def _frag(t, meaning, loc) -> Fragment:
    return Fragment(tuple(t.shape), t.layout, FragTag("data", {}, meaning=meaning), loc)


def coord(w, op: Op) -> None:
    axis = int(op.attrs.get("axis", 0))
    x = w.value(op.arg("x"))
    if not isinstance(x, Fragment):
        w.env[op.result] = None
        return
    pos = w.pos["pr"] if axis == 0 else w.pos["pc"]
    w.env[op.result] = _frag(op.result.type, IndexVal(pos), op.loc)


def _term(w, x):
    """An operand as a 64-bit term, or None (a float, an unknown value)."""
    if isinstance(x, Fragment):
        return x.tag.meaning.term if isinstance(x.tag.meaning, IndexVal) else None
    if isinstance(x, bool) or isinstance(x, float) or x is None or scalars.is_pred(x):
        return None
    return bv(x)


def arith(w, op: Op) -> bool:
    """math.add/sub/mul/min/max/neg/abs with an index fragment; False if not one of those."""
    name = op.opcode.split(".", 1)[1]
    args = [w.value(o) for o in op.operands]
    if not any(index_fragment(a) for a in args):
        return False
    terms = [_term(w, a) for a in args]
    if None in terms or (name not in _ARITH and name not in ("neg", "abs")):
        w.not_modelled(op, f"{name} on an index fragment with this operand")
        w.env[op.result] = _unknown(op)
        return True
    if name == "neg":
        out = -terms[0]
    elif name == "abs":
        out = z3.If(terms[0] < 0, -terms[0], terms[0])
    elif name == "mul":
        out = bv(scalars.binary(w.ctx, "mul", *terms))
    elif name in ("min", "max"):
        a, b = terms
        out = z3.If(a < b, a, b) if name == "min" else z3.If(a < b, b, a)
    else:
        out = terms[0] + terms[1] if name == "add" else terms[0] - terms[1]
    w.env[op.result] = _frag(op.result.type, IndexVal(out), op.loc)
    return True


def cmp(w, op: Op) -> None:
    pred = op.attrs.get("pred")
    args = [w.value(o) for o in op.operands]
    terms = [_term(w, a) for a in args]
    if pred not in _CMP or None in terms or not any(index_fragment(a) for a in args):
        w.not_modelled(op, "comparisons other than of index fragments (row_of, col_of) and "
                           "uniform scalars")
        w.env[op.result] = _unknown(op)
        return
    w.env[op.result] = _frag(op.result.type, PredVal(_CMP[pred](*terms), op.loc), op.loc)


def _unknown(op: Op) -> Fragment:
    t = op.result.type
    return Fragment(tuple(t.shape), t.layout,
                    FragTag("unknown", why_unknown=f"{op.opcode} is not modelled"), op.loc)
