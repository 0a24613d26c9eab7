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
g = i * KT + k written in two roles is one term. Two atoms with a common factor whose
other factors are x and x // c (a k loop split into nested loops, `range(KT // 2)` around
`range(2)`) are tied by the identity a * x == c * (a * (x // c)) when c divides x (see
`_relate`): still true of the products, so nothing unsound is added.
"""

from __future__ import annotations

from typing import Any

import z3

from argus.ir.nodes import Op, Value
from argus.ir.types import DType
from argus.layout import symbolic as sym
from argus.verify import arith

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
        self.factors: dict[tuple[int, int], tuple] = {}    # atom key -> its two factors
        self.names: dict[str, Any] = {}     # display name -> term (for counterexamples)
        self.quotients: dict[tuple[int, int], tuple] = {}   # (R id, S id) -> (R, S, Q)
        self.upper: dict[int, int] = {}     # variable id -> a constant it is below
        # which loops a variable varies with (the loop ops: a counter, a tile coordinate, a
        # data-dependent scalar read inside the loop), by variable id; none: invariant
        self.owner: dict[int, frozenset] = {}
        self.scope: frozenset = frozenset()  # the loops the walk is inside (new variables')
        self._owners: dict[int, tuple] = {}   # term id -> (term, its owners): kept alive
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
            if isinstance(hi, int):
                self.bound(v, hi)
        self.names.setdefault(name, v)
        if self.scope:
            self.owner[v.get_id()] = self.scope
        return v

    def owners(self, term) -> frozenset:
        """The loops (ops) a term varies with: the union of its variables' owners."""
        if not sym.is_symbolic(term):
            return frozenset()
        term = smt.as_term(term)
        key = term.get_id()
        if key not in self._owners:
            out, seen, todo = set(), set(), [term]
            while todo:
                t = todo.pop()
                if t.get_id() in seen:
                    continue
                seen.add(t.get_id())
                if z3.is_const(t) and t.decl().kind() == z3.Z3_OP_UNINTERPRETED:
                    out |= self.owner.get(t.get_id(), frozenset())
                else:
                    todo.extend(t.children())
            self._owners[key] = (term, frozenset(out))
        return self._owners[key][1]

    def bound(self, v, hi: int) -> None:
        """v < hi (a constant) is one of the constraints: remembered for bound_of."""
        key = v.get_id()
        self.upper[key] = min(hi, self.upper.get(key, hi))

    def bound_of(self, v):
        """The least constant the constraints bound variable v below, or None."""
        return self.upper.get(v.get_id())

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
                self.owner[p.get_id()] = self.owners(a) | self.owners(b)   # varies with both
                zero = z3.Or(a == 0, b == 0)
                self.bound(p, STEP_BOUND)
                self.constraints += [smt.lt(p, STEP_BOUND), z3.Implies(zero, p == 0),
                                     z3.Implies(z3.Not(zero), z3.And(z3.UGE(p, a),
                                                                     z3.UGE(p, b)))]
                self._relate(a, b, p)
                self.atoms[key] = p
                self.factors[key] = (a, b)
            return self.atoms[key]
        if sym.is_symbolic(a) or sym.is_symbolic(b):
            return sym.mul(smt.as_term(a) if sym.is_symbolic(a) else a,
                           smt.as_term(b) if sym.is_symbolic(b) else b)
        return a * b

    def _relate(self, a, b, p) -> None:
        """Tie the new atom p = a * b to the atoms that share a factor with it, where the
        other factor is the quotient of this one by a constant (or this one of that)."""
        for key, (a2, b2) in self.factors.items():
            q = self.atoms[key]
            for x, y in ((a, b), (b, a)):
                for x2, y2 in ((a2, b2), (b2, a2)):
                    if not x.eq(x2):
                        continue
                    # a product is a function of its factors: equal other factors (i and
                    # (w - start) // step of a strided loop, written two ways) give one value
                    self.constraints.append(z3.Implies(y == y2, p == q))
                    for whole, part, big, small in ((y, y2, p, q), (y2, y, q, p)):
                        c = _constant_divisor(part, whole)
                        if c is not None:
                            self.constraints.append(z3.Implies(
                                z3.URem(whole, c) == 0, big == small * c))

    def arith(self, op: Op):
        """The term of an arith op (argus.verify.arith renders it; the table's value when
        its operands are constants). Predicates here are z3 Bools or 0/1 numbers: `not`,
        `land` and `lor` read theirs as Bools, every other op as numbers."""
        name = op.opcode.split(".", 1)[1]
        args = [self.of(o) for o in op.operands]
        q = self._quotient(name, args)
        if q is not None:
            return q
        if name in ("land", "lor") or (name == "not" and op.result.type.dtype == DType.pred):
            args = [smt.bool_of(a) for a in args]
        else:
            args = [_num(a) for a in args]
        if name in ("shl", "shr") and sym.is_symbolic(args[1]):
            raise UnknownTerm(op.opcode)     # a shift by a symbolic amount: not modelled
        out = arith.render(name, args, smt.WIDTH, self.mul, self.bound_of)
        return int(out) if isinstance(out, bool) else out

    def render(self, name: str, a, b):
        """arith.<name> of two index terms or ints (a launch extent's arithmetic)."""
        q = self._quotient(name, [a, b])
        if q is not None:
            return q
        return arith.binary(name, a, b, smt.WIDTH, self.mul, self.bound_of)

    def _quotient(self, name: str, args):
        """R // S as Q and R % S as 0 where an assumption made S divide R (the sizes
        themselves; verify/quotients.py), else None."""
        if name not in ("floordiv", "mod") or not all(z3.is_expr(a) for a in args):
            return None
        hit = self.quotients.get(tuple(smt.as_term(a).get_id() for a in args))
        if hit is None:
            return None
        return hit[2] if name == "floordiv" else 0


def _constant_divisor(part, whole):
    """c when `part` is the term whole // c for a constant c > 1, else None."""
    t = part
    if z3.is_app(t) and t.decl().kind() in (z3.Z3_OP_BUDIV, z3.Z3_OP_BUDIV_I) and \
            z3.is_bv_value(t.arg(1)) and t.arg(1).as_long() > 1 and \
            z3.simplify(t.arg(0)).eq(z3.simplify(whole)):
        return t.arg(1).as_long()
    return None


def _num(x):
    """A predicate used as a number is 0 or 1."""
    if z3.is_expr(x) and z3.is_bool(x):
        return smt.pred_as_int(x)
    return x
