"""Uniform scalar arithmetic. Index values are 32-bit ints (sizes, tile coordinates, loop
counters). Each op's C expression is the op table's (argus/ir/ops/arith.py): floor division
and modulo have the interpreter's (Python's) meaning for every sign, through
argus::floordiv / argus::mod (C's / and % truncate toward zero), and the plain C operators
where both operands are known >= 0 (there the two agree; the table's NONNEGATIVE); the
verifier's index-range check covers overflow."""

from __future__ import annotations

from argus.ir import spec_of
from argus.ir.ops.arith import BINARY, INT, NONNEGATIVE
from argus.ir.types import DType


def _binary(ctx, op):
    name = op.opcode.split(".", 1)[1]
    x, y = op.arg("lhs"), op.arg("rhs")
    lhs, rhs = ctx.expr(x, op), ctx.expr(y, op)
    la, lb = ctx.lower_bound(x, op), ctx.lower_bound(y, op)
    a, b = (lo is not None and lo >= 0 for lo in (la, lb))
    template = NONNEGATIVE.get(name) if a and b else None
    text = (template or spec_of(op.opcode).cuda).format(lhs=lhs, rhs=rhs)
    ctype = "bool" if op.result.type.dtype == DType.pred else "int"
    ctx.scalar(op, ctype, text, lo=_lower_bound(name, y, la, lb, a, b)
               if ctype == "int" else None)


def _lower_bound(name, rhs, la, lb, a, b):
    """A lower bound of the result from the operands' (None: unknown); `rhs` is the right
    operand itself (an int when it is a constant)."""
    rhs_const = rhs if isinstance(rhs, int) and not isinstance(rhs, bool) else None
    if name == "add" and la is not None and lb is not None:
        return la + lb
    if name == "sub" and la is not None and rhs_const is not None:
        return la - rhs_const
    if name == "mul" and a and b:
        return la * lb
    if name in ("floordiv", "mod", "shr", "or") and a and b:
        return 0
    if name == "and" and (a or b):
        return 0
    if name == "min" and la is not None and lb is not None:
        return min(la, lb)
    if name == "max" and (la is not None or lb is not None):
        return max(x for x in (la, lb) if x is not None)
    return None


def _neg(ctx, op):
    ctx.scalar(op, "int", spec_of(op.opcode).cuda.format(x=ctx.expr(op.arg("x"), op)))


def _not(ctx, op):
    ctype = "bool" if op.result.type.dtype == DType.pred else "int"
    template = spec_of(op.opcode).cuda if ctype == "bool" else INT["not"]
    ctx.scalar(op, ctype, template.format(x=ctx.expr(op.arg("x"), op)))


RULES = {f"arith.{n}": _binary for n in BINARY}
RULES.update({"arith.neg": _neg, "arith.not": _not})
