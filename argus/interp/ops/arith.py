"""Uniform scalar arithmetic on Python ints and bools (index and pred values)."""

from __future__ import annotations

import operator

from ._rule import pure

_BINARY = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul,
    "floordiv": operator.floordiv, "mod": operator.mod, "min": min, "max": max,
    "and": operator.and_, "or": operator.or_, "xor": operator.xor,
    "shl": operator.lshift, "shr": operator.rshift,
    "eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le,
    "gt": operator.gt, "ge": operator.ge,
    "land": lambda a, b: bool(a) and bool(b), "lor": lambda a, b: bool(a) or bool(b),
}
_UNARY = {"neg": operator.neg, "not": lambda x: not x}


def _binary(fn):
    @pure
    def rule(agent, op, args):
        return fn(*args)
    return rule


def _unary(fn):
    @pure
    def rule(agent, op, args):
        return fn(args[0])
    return rule


RULES = {f"arith.{n}": _binary(f) for n, f in _BINARY.items()}
RULES.update({f"arith.{n}": _unary(f) for n, f in _UNARY.items()})
