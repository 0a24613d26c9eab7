"""Uniform scalars (ids, sizes, loop counters, stage and phase) as z3 terms.

Indices are unsigned 64-bit terms (argus.verify.smt); predicates are z3 Bools. A product
of two symbolic terms becomes a product atom (Context.mul), so no query is nonlinear.
"""

from __future__ import annotations

import ast
import operator

import z3

from argus.layout import symbolic as sym
from argus.verify.smt import Context, bv

_PY = {"add": operator.add, "sub": operator.sub, "mul": operator.mul,
       "floordiv": operator.floordiv, "mod": operator.mod, "min": min, "max": max,
       "and": operator.and_, "or": operator.or_, "xor": operator.xor,
       "shl": operator.lshift, "shr": operator.rshift, "eq": operator.eq, "ne": operator.ne,
       "lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge}


class ScalarError(ValueError):
    """A scalar the pass cannot express (a float, a predicate used as an index)."""


def is_pred(x) -> bool:
    return isinstance(x, (bool, z3.BoolRef))


def as_bool(x):
    if isinstance(x, bool):
        return z3.BoolVal(x)
    if isinstance(x, z3.BoolRef):
        return x
    raise ScalarError(f"{x} is an index, not a predicate")


def binary(ctx: Context, name: str, a, b):
    if name in ("land", "lor"):
        if isinstance(a, bool) and isinstance(b, bool):
            return (a and b) if name == "land" else (a or b)
        return (z3.And if name == "land" else z3.Or)(as_bool(a), as_bool(b))
    if is_pred(a) or is_pred(b):
        if name in ("eq", "ne") and is_pred(a) and is_pred(b):
            if isinstance(a, bool) and isinstance(b, bool):
                return (a == b) if name == "eq" else (a != b)
            e = as_bool(a) == as_bool(b)
            return e if name == "eq" else z3.Not(e)
        raise ScalarError(f"arith.{name} on a predicate")
    if isinstance(a, int) and isinstance(b, int):
        return _PY[name](a, b)
    if name == "mul":
        return ctx.mul(a, b)
    x, y = bv(a), bv(b)
    if name == "add":
        return sym.add(x, y)
    if name == "sub":
        return x - y
    if name == "floordiv":
        return sym.udiv(x, y)
    if name == "mod":
        return sym.umod(x, y)
    if name == "and":
        return x & y
    if name == "or":
        return x | y
    if name == "xor":
        return x ^ y
    if name == "shl":
        return x << y
    if name == "shr":
        return z3.LShR(x, y)
    if name == "min":
        return z3.If(z3.ULT(x, y), x, y)
    if name == "max":
        return z3.If(z3.ULT(x, y), y, x)
    cmp = {"eq": lambda: x == y, "ne": lambda: x != y, "lt": lambda: z3.ULT(x, y),
           "le": lambda: z3.ULE(x, y), "gt": lambda: z3.UGT(x, y), "ge": lambda: z3.UGE(x, y)}
    if name in cmp:
        return cmp[name]()
    raise ScalarError(f"arith.{name} is not modelled")


def unary(name: str, x):
    if name == "not":
        return (not x) if isinstance(x, bool) else z3.Not(as_bool(x))
    if name == "neg":
        if isinstance(x, int):
            return -x
        return -bv(x)
    raise ScalarError(f"arith.{name} is not modelled")


def extent(ctx: Context, text: str, names: dict):
    """A launch extent written as text ("132", "M // BM") over symbols and constants."""
    tree = ast.parse(str(text), mode="eval").body

    def ev(node):
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return node.value
        if isinstance(node, ast.Name) and node.id in names:
            return names[node.id]
        if isinstance(node, ast.BinOp):
            op = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.FloorDiv: "floordiv",
                  ast.Mod: "mod"}.get(type(node.op))
            if op:
                return binary(ctx, op, ev(node.left), ev(node.right))
        raise ScalarError(f"cannot read the extent {text!r}")
    return ev(tree)
