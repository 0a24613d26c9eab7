"""Uniform scalar arithmetic on Python ints and bools (index and pred values: every pred
is a bool here, the result of a comparison, land, lor or not): the op table's semantics
(argus/ir/ops/arith.py), floor division and modulo Python's, `not` of an int its
complement as in the generated C."""

from __future__ import annotations

from argus.ir.ops.arith import BINARY, UNARY

from ._rule import pure


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


RULES = {f"arith.{n}": _binary(fn) for n, (fn, _) in BINARY.items()}
RULES.update({f"arith.{n}": _unary(fn) for n, (fn, _) in UNARY.items()})
