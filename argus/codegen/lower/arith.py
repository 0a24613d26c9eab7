"""Uniform scalar arithmetic. Index values are 32-bit ints (sizes, tile coordinates, loop
counters); Python's floor division and modulo equal C's on the non-negative values the
kernels compute (the verifier's index-range check covers overflow)."""

from __future__ import annotations

from argus.ir.types import DType

C_BINARY = {"add": "+", "sub": "-", "mul": "*", "floordiv": "/", "mod": "%", "and": "&",
            "or": "|", "xor": "^", "shl": "<<", "shr": ">>", "eq": "==", "ne": "!=",
            "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "land": "&&", "lor": "||"}


def _binary(ctx, op):
    name = op.opcode.split(".", 1)[1]
    lhs, rhs = (ctx.expr(x, op) for x in op.operands)
    if name in ("min", "max"):
        text = f"{name}({lhs}, {rhs})"
    else:
        text = f"({lhs}) {C_BINARY[name]} ({rhs})"
    ctype = "bool" if op.result.type.dtype == DType.pred else "int"
    ctx.scalar(op, ctype, text)


def _neg(ctx, op):
    ctx.scalar(op, "int", f"-({ctx.expr(op.operands[0], op)})")


def _not(ctx, op):
    ctype = "bool" if op.result.type.dtype == DType.pred else "int"
    ctx.scalar(op, ctype, f"{'!' if ctype == 'bool' else '~'}({ctx.expr(op.operands[0], op)})")


RULES = {f"arith.{n}": _binary for n in (*C_BINARY, "min", "max")}
RULES.update({"arith.neg": _neg, "arith.not": _not})
