"""Uniform scalar arithmetic. Index values are 32-bit ints (sizes, tile coordinates, loop
counters). Floor division and modulo have the interpreter's (Python's) meaning for every
sign, through argus::floordiv / argus::mod (C's / and % truncate toward zero; on the
non-negative values kernels mostly compute the two agree and the compiler folds the
correction away when it can prove the signs); the verifier's index-range check covers
overflow."""

from __future__ import annotations

from argus.ir.types import DType

C_BINARY = {"add": "+", "sub": "-", "mul": "*", "floordiv": "/", "mod": "%", "and": "&",
            "or": "|", "xor": "^", "shl": "<<", "shr": ">>", "eq": "==", "ne": "!=",
            "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "land": "&&", "lor": "||"}


def _binary(ctx, op):
    name = op.opcode.split(".", 1)[1]
    lhs, rhs = (ctx.expr(x, op) for x in op.operands)
    if name in ("min", "max", "floordiv", "mod"):
        text = f"argus::{name}({lhs}, {rhs})"
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
