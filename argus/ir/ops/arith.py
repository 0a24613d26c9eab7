"""Uniform scalar arithmetic: tile coordinates, stage and phase, sizes, predicates.

Each op is defined here once: its Python semantics on ints and bools (what the interpreter
computes, what the frontend folds a compile-time expression to, and what the verifier's
passes compute when every operand is a constant; argus/verify/arith.py renders the same op
as a z3 term) and its C expression (argus/codegen/lower/arith.py fills it with the
operands' C text).

Floor division and modulo are Python's for every sign (floor, remainder with the divisor's
sign): the C expression calls argus::floordiv / argus::mod (C's / and % truncate toward
zero), and where both operands are known to be >= 0, where the two agree, the plain C
operator (`NONNEGATIVE`). `not` is logical on a predicate and the bitwise complement on an
int, as `!` and `~` (`INT`).
"""

import operator

from .spec import SCALAR, arg, op


def land(a, b):
    """Logical and of two predicates (or of ints as C reads them: nonzero is true)."""
    return bool(a) and bool(b)


def lor(a, b):
    """Logical or of two predicates (or of ints as C reads them)."""
    return bool(a) or bool(b)


def not_(x):
    """`not` of a predicate; of an int, its bitwise complement (C's `~`, Python's `~`)."""
    return (not x) if isinstance(x, bool) else ~x


# name: (Python semantics, the C expression over the operands {lhs} {rhs})
BINARY = {
    "add": (operator.add, "({lhs}) + ({rhs})"),
    "sub": (operator.sub, "({lhs}) - ({rhs})"),
    "mul": (operator.mul, "({lhs}) * ({rhs})"),
    "floordiv": (operator.floordiv, "argus::floordiv({lhs}, {rhs})"),
    "mod": (operator.mod, "argus::mod({lhs}, {rhs})"),
    "min": (min, "argus::min({lhs}, {rhs})"),
    "max": (max, "argus::max({lhs}, {rhs})"),
    "and": (operator.and_, "({lhs}) & ({rhs})"),
    "or": (operator.or_, "({lhs}) | ({rhs})"),
    "xor": (operator.xor, "({lhs}) ^ ({rhs})"),
    "shl": (operator.lshift, "({lhs}) << ({rhs})"),
    "shr": (operator.rshift, "({lhs}) >> ({rhs})"),
    "eq": (operator.eq, "({lhs}) == ({rhs})"),
    "ne": (operator.ne, "({lhs}) != ({rhs})"),
    "lt": (operator.lt, "({lhs}) < ({rhs})"),
    "le": (operator.le, "({lhs}) <= ({rhs})"),
    "gt": (operator.gt, "({lhs}) > ({rhs})"),
    "ge": (operator.ge, "({lhs}) >= ({rhs})"),
    "land": (land, "({lhs}) && ({rhs})"),
    "lor": (lor, "({lhs}) || ({rhs})"),
}
# name: (Python semantics, the C expression over the operand {x}; of a predicate for `not`)
UNARY = {
    "neg": (operator.neg, "-({x})"),
    "not": (not_, "!({x})"),
}
# The C expression where it depends on what is known of the operands: floordiv and mod when
# both are known >= 0 (C's / and % are Python's there), `not` of an int.
NONNEGATIVE = {
    "floordiv": "({lhs}) / ({rhs})",
    "mod": "({lhs}) % ({rhs})",
}
INT = {"not": "~({x})"}
# name: its Python semantics, every op (the passes that compute on constants read this)
SEMANTICS = {name: fn for name, (fn, _) in (*BINARY.items(), *UNARY.items())}

SPECS = [op(f"arith.{name}", "arith", arg("lhs", *SCALAR), arg("rhs", *SCALAR), results=1,
            semantics=fn, cuda=c) for name, (fn, c) in BINARY.items()]
SPECS += [op(f"arith.{name}", "arith", arg("x", *SCALAR), results=1, semantics=fn, cuda=c)
          for name, (fn, c) in UNARY.items()]

