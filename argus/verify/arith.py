"""What each `arith` op means as a z3 term: the one rendering both verifier passes use (the
tag pass, argus/verify/tags/scalars.py, with 64-bit terms; the protocol pass,
argus/verify/protocol/terms.py, with 32-bit ones).

Indices are unsigned bit-vectors of the width the caller names, predicates z3 Bools.
Unsigned: division and remainder are UDiv / URem, right shifts logical, comparisons
unsigned (z3py's /, %, >> and < are signed). That is the op table's meaning
(argus/ir/ops/arith.py: Python's floor division and modulo) on the values the verifier
allows: each pass bounds its variables to be non-negative and far below 2^(width - 1),
so sums and constant multiples do not wrap and floor division of naturals is UDiv.

Operands are Python ints, bit-vector terms of any width (a narrower one is zero-extended
to the width, a wider one cut to it) and predicates (z3 Bools or Python bools). When no
operand is a z3 term the op is the table's Python semantics. What a pass does not model
(a predicate used as an index, say) and how it represents predicates it decides before
calling; a product of two symbolic terms is the pass's own (each makes it an atom of its
context), so `mul` is passed in: mul(a, b) on the operands as given.
"""

from __future__ import annotations

import z3

from argus.ir.ops.arith import SEMANTICS
from argus.layout import symbolic as sym


WIDTH = 64      # the width of the verifier's terms (argus.verify.smt)


def bv(x) -> z3.BitVecRef:
    """An int or a term as a WIDTH-bit term (layout sums widen defensively; their values
    stay below 2^WIDTH, so a wider term is cut to WIDTH bits)."""
    if isinstance(x, z3.BoolRef):    # predicates pass through (substitution helpers)
        return x
    return term(x, WIDTH)


def term(x, width: int) -> z3.BitVecRef:
    """An int or a bit-vector term as a `width`-bit term."""
    if isinstance(x, bool):
        raise TypeError("a predicate is not an index")
    if isinstance(x, int):
        return z3.BitVecVal(x, width)
    if x.size() > width:
        return z3.Extract(width - 1, 0, x)
    return sym.widen(x, width)


def _bool(x):
    if isinstance(x, bool):
        return z3.BoolVal(x)
    if isinstance(x, z3.BoolRef):
        return x
    raise TypeError(f"{x} is an index, not a predicate")


def _is_pred(x) -> bool:
    return isinstance(x, (bool, z3.BoolRef))


# the ops on two `width`-bit terms
_TERMS = {
    "add": lambda x, y: x + y,
    "sub": lambda x, y: x - y,
    "floordiv": z3.UDiv,
    "mod": z3.URem,
    "min": lambda x, y: z3.If(z3.ULT(x, y), x, y),
    "max": lambda x, y: z3.If(z3.ULT(x, y), y, x),
    "and": lambda x, y: x & y,
    "or": lambda x, y: x | y,
    "xor": lambda x, y: x ^ y,
    "shl": lambda x, y: x << y,
    "shr": z3.LShR,
    "eq": lambda x, y: x == y,
    "ne": lambda x, y: x != y,
    "lt": z3.ULT,
    "le": z3.ULE,
    "gt": z3.UGT,
    "ge": z3.UGE,
}


def binary(name: str, a, b, width: int, mul, var_bound=None):
    """arith.<name> of a and b: a term (a z3 Bool for a comparison, land, lor), or the
    table's value when neither operand is a z3 term. `var_bound(v)`: a constant the caller's
    pass bounds base variable v below, or None; with it an exact division by a constant
    skips its divider circuit (_multiple_plus_rest)."""
    if not (z3.is_expr(a) or z3.is_expr(b)):
        return SEMANTICS[name](a, b)
    if name in ("land", "lor"):
        return (z3.And if name == "land" else z3.Or)(_bool(a), _bool(b))
    if name in ("eq", "ne") and _is_pred(a) and _is_pred(b):
        e = _bool(a) == _bool(b)
        return e if name == "eq" else z3.Not(e)
    if name == "mul":
        return mul(a, b)
    if name in ("floordiv", "mod") and isinstance(b, int) and var_bound is not None:
        exact = _multiple_plus_rest(a, b, width, var_bound)
        if exact is not None:           # (c * v + d) // c is v, (c * v + d) % c is d
            return exact[0] if name == "floordiv" else exact[1]
    return _TERMS[name](term(a, width), term(b, width))


def _multiple_plus_rest(a, c: int, width: int, var_bound):
    """(v, d) when `a` is c * v + d for one base variable v and a constant 0 <= d < c, with
    c * var_bound(v) below 2^width so nothing wraps: the quotient and remainder by c without
    a divider circuit (a persistent loop's `(w - bid) // BLOCKS` with w = bid + i * BLOCKS is
    its counter i). Else None."""
    if c <= 1 or not z3.is_bv(a):
        return None
    t = z3.simplify(term(a, width))
    rest = 0
    if z3.is_app_of(t, z3.Z3_OP_BADD) and t.num_args() == 2 and z3.is_bv_value(t.arg(0)):
        rest, t = t.arg(0).as_long(), t.arg(1)
    if not (0 <= rest < c and z3.is_app_of(t, z3.Z3_OP_BMUL) and t.num_args() == 2):
        return None
    k, v = t.arg(0), t.arg(1)
    if not (z3.is_bv_value(k) and k.as_long() == c and z3.is_const(v)
            and v.decl().kind() == z3.Z3_OP_UNINTERPRETED):
        return None
    bound = var_bound(v)
    if bound is None or c * bound >= 1 << width:
        return None
    return v, z3.BitVecVal(rest, width)


def unary(name: str, x, width: int):
    """arith.<name> of x: `not` of a predicate is a z3 Bool, of an index its complement."""
    if not z3.is_expr(x):
        return SEMANTICS[name](x)
    if name == "not":
        return z3.Not(x) if z3.is_bool(x) else ~term(x, width)
    if name == "neg":
        return -term(x, width)
    raise KeyError(f"arith.{name} is not a unary op")


def render(name: str, args, width: int, mul, var_bound=None):
    """arith.<name> of its operands (one or two)."""
    if len(args) == 1:
        return unary(name, args[0], width)
    return binary(name, args[0], args[1], width, mul, var_bound)
