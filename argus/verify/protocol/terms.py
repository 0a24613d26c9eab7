"""Uniform scalars of a kernel as z3 terms: shape symbols, ids, loop counters, and every
`arith` op over them (stage and parity expressions, tile coordinates).

Bounds (asserted as constraints, see `Terms.constraints`):
  shape symbols        1 <= M < 2^31 (int32 sizes), plus the kernel's `assume`s
  loop counters        0 <= j < trip, trip < 2^24 steps
  ids                  block ids < 2^31, warpgroup index < warpgroups of the role,
                       cluster rank < cluster size
A product of two symbolic terms (i * KT: a tile counter times a trip count) is never
built as a z3 product: it becomes one fresh variable per distinct pair of factors (an
"atom"), constrained only by 0 when a factor is 0 and >= each factor otherwise. That
over-approximates the product, so a property proved over atoms holds for the products;
the same atom is shared by every expression that multiplies the same two terms, so
g = i * KT + k written in two roles is one term.
"""

from __future__ import annotations

from typing import Any

import z3

from argus.ir.nodes import Op, Value
from argus.layout import symbolic as sym

from . import smt

STEP_BOUND = 1 << 24
SIZE_BOUND = 1 << 31


class UnknownTerm(Exception):
    """A scalar the protocol model cannot express (a data-dependent value)."""


class Terms:
    def __init__(self):
        self.env: dict[Value, Any] = {}
        self.constraints: list = []
        self.atoms: dict[tuple[int, int], z3.BitVecRef] = {}
        self.names: dict[str, Any] = {}     # display name -> term (for counterexamples)
        self._fresh = 0

    # ---- variables ---------------------------------------------------------------------
    def fresh(self, name: str, lo: int = 0, hi=None) -> z3.BitVecRef:
        """A new variable with lo <= v (< hi when given; hi may be a term)."""
        self._fresh += 1
        v = smt.var(f"{name}!{self._fresh}")
        if lo:
            self.constraints.append(smt.le(lo, v))
        if hi is not None:
            self.constraints.append(smt.lt(v, hi))
        self.names.setdefault(name, v)
        return v

    def bind(self, value: Value, term) -> None:
        self.env[value] = term

    def of(self, operand):
        if isinstance(operand, Value):
            if operand not in self.env:
                raise UnknownTerm(f"%{operand.name}")
            return self.env[operand]
        if isinstance(operand, bool):
            return int(operand)
        if isinstance(operand, int):
            return operand
        raise UnknownTerm(repr(operand))

    # ---- arithmetic --------------------------------------------------------------------
    def mul(self, a, b):
        if sym.is_symbolic(a) and sym.is_symbolic(b):
            a, b = smt.as_term(a), smt.as_term(b)
            key = tuple(sorted((a.get_id(), b.get_id())))
            if key not in self.atoms:
                p = self.fresh("product")
                zero = z3.Or(a == 0, b == 0)
                self.constraints += [smt.lt(p, STEP_BOUND), z3.Implies(zero, p == 0),
                                     z3.Implies(z3.Not(zero), z3.And(z3.UGE(p, a),
                                                                     z3.UGE(p, b)))]
                self.atoms[key] = p
            return self.atoms[key]
        if sym.is_symbolic(a) or sym.is_symbolic(b):
            return sym.mul(smt.as_term(a) if sym.is_symbolic(a) else a,
                           smt.as_term(b) if sym.is_symbolic(b) else b)
        return a * b

    def arith(self, op: Op):
        name = op.opcode.split(".", 1)[1]
        args = [self.of(o) for o in op.operands]
        if not any(sym.is_symbolic(a) or z3.is_expr(a) for a in args):
            return _concrete(name, args)
        if name in ("not", "neg"):
            x = args[0]
            return z3.Not(smt.bool_of(x)) if name == "not" else smt.sub(0, x)
        a, b = args
        if name in ("eq", "ne", "lt", "le", "gt", "ge", "land", "lor"):
            return _compare(name, a, b)
        a, b = _num(a), _num(b)
        if name == "add":
            return sym.add(_w(a), _w(b))
        if name == "sub":
            return smt.sub(a, b)
        if name == "mul":
            return self.mul(a, b)
        if name == "floordiv":
            return sym.udiv(_w(a), _w(b))
        if name == "mod":
            return sym.umod(_w(a), _w(b))
        if name == "and":
            return sym.band(_w(a), _w(b))
        if name == "xor":
            return sym.xor(_w(a), _w(b))
        if name == "or":
            return smt.as_term(a) | smt.as_term(b)
        if name == "shl" and isinstance(b, int):
            return smt.as_term(a) << b
        if name == "shr" and isinstance(b, int):
            return sym.lshr(_w(a), b)
        if name == "min":
            return smt.select(smt.le(a, b), a, b)
        if name == "max":
            return smt.select(smt.le(a, b), b, a)
        raise UnknownTerm(op.opcode)


def _w(x):
    return smt.as_term(x) if sym.is_symbolic(x) else x


def _num(x):
    """A predicate used as a number is 0 or 1."""
    if z3.is_expr(x) and z3.is_bool(x):
        return smt.pred_as_int(x)
    return x


def _compare(name, a, b):
    if name in ("land", "lor"):
        x, y = smt.bool_of(a), smt.bool_of(b)
        return z3.And(x, y) if name == "land" else z3.Or(x, y)
    a, b = _num(a), _num(b)
    return {"eq": lambda: smt.eq(a, b), "ne": lambda: z3.Not(smt.eq(a, b)),
            "lt": lambda: smt.lt(a, b), "le": lambda: smt.le(a, b),
            "gt": lambda: smt.lt(b, a), "ge": lambda: smt.le(b, a)}[name]()


def _concrete(name, args):
    import operator
    fns = {"add": operator.add, "sub": operator.sub, "mul": operator.mul,
           "floordiv": operator.floordiv, "mod": operator.mod, "min": min, "max": max,
           "and": operator.and_, "or": operator.or_, "xor": operator.xor,
           "shl": operator.lshift, "shr": operator.rshift, "eq": operator.eq,
           "ne": operator.ne, "lt": operator.lt, "le": operator.le, "gt": operator.gt,
           "ge": operator.ge, "land": lambda a, b: bool(a) and bool(b),
           "lor": lambda a, b: bool(a) or bool(b), "neg": operator.neg,
           "not": lambda x: not x}
    out = fns[name](*args)
    return int(out) if isinstance(out, bool) else out
