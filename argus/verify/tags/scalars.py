"""Uniform scalars (ids, sizes, loop counters, stage and phase) as z3 terms.

Indices are unsigned 64-bit terms (argus.verify.smt), predicates z3 Bools; each arith op
is rendered by argus.verify.arith (the table's semantics when every operand is a
constant). A product of two symbolic terms becomes a product atom (Context.mul), so no
query is nonlinear. A predicate used as an index (or an index as a predicate) is not
modelled here: ScalarError.
"""

from __future__ import annotations

import ast

import z3

from argus.verify import arith
from argus.verify.smt import WIDTH, Context


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
        if not (isinstance(a, bool) and isinstance(b, bool)):
            a, b = as_bool(a), as_bool(b)
    elif (is_pred(a) or is_pred(b)) and not (name in ("eq", "ne") and is_pred(a)
                                               and is_pred(b)):
        raise ScalarError(f"arith.{name} on a predicate")
    if name in ("floordiv", "mod"):
        q = ctx.quotient(a, b)    # an assumption made b divide a (verify/quotients.py)
        if q is not None:
            return q if name == "floordiv" else 0
    return arith.binary(name, a, b, WIDTH, ctx.mul)


def unary(name: str, x):
    if name not in ("not", "neg"):
        raise ScalarError(f"arith.{name} is not modelled")
    if name == "not" and not is_pred(x):
        raise ScalarError(f"{x} is an index, not a predicate")
    if name == "neg" and isinstance(x, z3.BoolRef):
        raise ScalarError("arith.neg on a predicate")
    return arith.unary(name, x, WIDTH)


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
