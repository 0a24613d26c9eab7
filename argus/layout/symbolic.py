"""Integers that are either Python ints or z3 bit-vector terms: the one place that knows z3.

Every layout and swizzle function computes through these helpers, so the same code gives
a concrete index on ints and an index *term* on `z3.BitVecRef` coordinates. Bit-vectors
are treated as unsigned naturals: division and remainder are `UDiv`/`URem`, right shifts
are `LShR` (z3py's `/`, `%` and `>>` are signed and would be wrong above 2^(w-1)).

Widths: a binary operation works at the wider width of its operands; a constant that does
not fit is not truncated, the symbolic operand is zero-extended until it fits. Additions
and products can still exceed the width; callers that know bounds widen first (see
`widen`, `max_value`), and `no_overflow` returns the side conditions that rule wrapping
out (the verifier asserts them; they also catch int32 overflow in generated code).
"""

from __future__ import annotations

from typing import Union

import z3

SymInt = Union[int, z3.BitVecRef]


class SymbolicError(ValueError):
    """An operation that has no sound unsigned bit-vector meaning (negative, sym x sym)."""


def is_symbolic(x) -> bool:
    """True for a z3 bit-vector term, False for a plain int."""
    return isinstance(x, z3.BitVecRef)


def is_sym_int(x) -> bool:
    """True for the two kinds of integer the algebra accepts."""
    return (isinstance(x, int) and not isinstance(x, bool)) or is_symbolic(x)


def width_for(bound: int) -> int:
    """Bits needed for every value in [0, bound) (at least 1)."""
    if not isinstance(bound, int) or bound < 1:
        raise SymbolicError(f"width_for needs a positive integer bound, got {bound!r}")
    return max(1, (bound - 1).bit_length())


def sym_var(name: str, bound: int) -> z3.BitVecRef:
    """A fresh unsigned variable meant to range over [0, bound); the width fits bound - 1.

    The range itself is not asserted: add `in_range(var, bound)` to the solver.
    """
    return z3.BitVec(name, width_for(bound))


def in_range(x: SymInt, bound: int):
    """The condition 0 <= x < bound (an unsigned comparison), or a bool for an int."""
    if not is_symbolic(x):
        return 0 <= x < bound
    if bound > max_value(x):
        return z3.BoolVal(True)
    return z3.ULT(x, const_like(bound, x))


def const_like(value: int, ref: z3.BitVecRef) -> z3.BitVecRef:
    """`value` as a constant of `ref`'s width; raises if it is negative or does not fit."""
    if value < 0:
        raise SymbolicError(f"{value} is negative; unsigned bit-vectors hold only naturals "
                            "(negative strides cannot be evaluated symbolically)")
    width = ref.size()
    if value.bit_length() > width:
        raise SymbolicError(f"{value} does not fit in {width} bits; widen the term first")
    return z3.BitVecVal(value, width)


def max_value(x: SymInt) -> int:
    """The largest value x can take: itself for an int, 2^w - 1 for a w-bit term."""
    return (1 << x.size()) - 1 if is_symbolic(x) else x


def widen(x: SymInt, width: int) -> SymInt:
    """Zero-extend a term to at least `width` bits (ints are returned unchanged)."""
    if is_symbolic(x) and x.size() < width:
        return z3.ZeroExt(width - x.size(), x)
    return x


def _operands(a: SymInt, b: SymInt, what: str):
    """Both operands as bit-vectors of one width (at least one of them is symbolic)."""
    for v in (a, b):
        if not is_sym_int(v):
            raise SymbolicError(f"{what}: {v!r} is neither an int nor a z3 bit-vector")
        if isinstance(v, int) and v < 0:
            raise SymbolicError(f"{what}: {v} is negative; unsigned bit-vectors hold only "
                                "naturals (use non-negative strides for symbolic evaluation)")
    width = max(v.size() if is_symbolic(v) else max(1, v.bit_length()) for v in (a, b))
    a, b = widen(a, width), widen(b, width)
    a = a if is_symbolic(a) else z3.BitVecVal(a, width)
    b = b if is_symbolic(b) else z3.BitVecVal(b, width)
    return a, b


def add(a: SymInt, b: SymInt) -> SymInt:
    if not (is_symbolic(a) or is_symbolic(b)):
        return a + b
    if isinstance(a, int) and a == 0:
        return b
    if isinstance(b, int) and b == 0:
        return a
    x, y = _operands(a, b, "add")
    return x + y


def mul(a: SymInt, b: SymInt) -> SymInt:
    if not (is_symbolic(a) or is_symbolic(b)):
        return a * b
    if is_symbolic(a) and is_symbolic(b):
        raise SymbolicError("symbolic x symbolic product: a symbolic coordinate meets a "
                            "symbolic stride (or shape). Keep strides static where the "
                            "coordinate is symbolic, or reason in coordinate space")
    for v in (a, b):
        if isinstance(v, int) and v == 1:
            return b if v is a else a
    x, y = _operands(a, b, "mul")
    return x * y


def udiv(a: SymInt, b: SymInt) -> SymInt:
    if not (is_symbolic(a) or is_symbolic(b)):
        return a // b
    if isinstance(b, int):
        if b == 0:
            raise SymbolicError("udiv by zero")
        if b == 1:
            return a
    x, y = _operands(a, b, "udiv")
    return z3.UDiv(x, y)


def umod(a: SymInt, b: SymInt) -> SymInt:
    if not (is_symbolic(a) or is_symbolic(b)):
        return a % b
    if isinstance(b, int) and b == 0:
        raise SymbolicError("umod by zero")
    x, y = _operands(a, b, "umod")
    return z3.URem(x, y)


def xor(a: SymInt, b: SymInt) -> SymInt:
    if not (is_symbolic(a) or is_symbolic(b)):
        return a ^ b
    x, y = _operands(a, b, "xor")
    return x ^ y


def band(a: SymInt, b: SymInt) -> SymInt:
    if not (is_symbolic(a) or is_symbolic(b)):
        return a & b
    x, y = _operands(a, b, "band")
    return x & y


def shl(a: SymInt, n: int) -> SymInt:
    """a << n, for a static shift n >= 0 (the term is widened so no bit is lost)."""
    if n < 0:
        raise SymbolicError(f"shl by a negative amount {n}; use lshr")
    if not is_symbolic(a):
        return a << n
    a = widen(a, a.size() + n)
    return a << n


def lshr(a: SymInt, n: int) -> SymInt:
    """a >> n, logical (unsigned), for a static shift n >= 0."""
    if n < 0:
        raise SymbolicError(f"lshr by a negative amount {n}; use shl")
    if not is_symbolic(a):
        return a >> n
    return z3.LShR(a, n) if n else a


def no_overflow(op: str, a: SymInt, b: SymInt) -> list:
    """Side conditions under which `op` ("add" or "mul") on a and b does not wrap.

    Empty when both are ints or when the widths alone rule wrapping out.
    """
    if op not in ("add", "mul"):
        raise SymbolicError(f"no_overflow knows 'add' and 'mul', not {op!r}")
    if not (is_symbolic(a) or is_symbolic(b)):
        return []
    x, y = _operands(a, b, op)
    width = x.size()
    worst = max_value(a) + max_value(b) if op == "add" else max_value(a) * max_value(b)
    if worst.bit_length() <= width:
        return []
    if op == "add":
        return [z3.BVAddNoOverflow(x, y, False)]
    return [z3.BVMulNoOverflow(x, y, False)]


def simplify_int(x: SymInt) -> SymInt:
    """A term simplified by z3, turned back into an int when it is a constant."""
    if not is_symbolic(x):
        return x
    s = z3.simplify(x)
    return s.as_long() if z3.is_bv_value(s) else s
