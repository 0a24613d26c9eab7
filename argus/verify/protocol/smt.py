"""The protocol checks' SMT glue: 32-bit unsigned terms, the few z3 operators that
argus.layout.symbolic does not provide (subtraction, comparisons, select), and a solver
call that returns a minimised model.

Term arithmetic goes through argus.layout.symbolic (UDiv/URem/LShR, no signed operators);
this module only adds what a barrier protocol needs on top and asks the solver. Every
variable is a 32-bit vector with an explicit range constraint, so sums of bounded terms
never wrap (bounds are chosen in argus.verify.protocol.terms).
"""

from __future__ import annotations

from typing import Iterable, Optional

import z3

from argus.layout.symbolic import SymInt, is_symbolic
from argus.verify.smt import known_unsat, mod_lemmas, remember_unsat

WIDTH = 32
TIMEOUT_MS = 2000


def var(name: str) -> z3.BitVecRef:
    return z3.BitVec(name, WIDTH)


def as_term(x: SymInt) -> z3.BitVecRef:
    """An int or a narrower term as a WIDTH-bit term."""
    if is_symbolic(x):
        return z3.ZeroExt(WIDTH - x.size(), x) if x.size() < WIDTH else x
    return z3.BitVecVal(int(x), WIDTH)


def lt(a: SymInt, b: SymInt):
    if not (is_symbolic(a) or is_symbolic(b)):
        return a < b
    return z3.ULT(as_term(a), as_term(b))


def le(a: SymInt, b: SymInt):
    if not (is_symbolic(a) or is_symbolic(b)):
        return a <= b
    return z3.ULE(as_term(a), as_term(b))


def eq(a: SymInt, b: SymInt):
    if not (is_symbolic(a) or is_symbolic(b)):
        return a == b
    return as_term(a) == as_term(b)


def sub(a: SymInt, b: SymInt) -> SymInt:
    if not (is_symbolic(a) or is_symbolic(b)):
        return a - b
    return as_term(a) - as_term(b)


def select(cond, a: SymInt, b: SymInt) -> SymInt:
    if isinstance(cond, bool):
        return a if cond else b
    return z3.If(cond, as_term(a), as_term(b))


def bool_of(x):
    """A predicate value (z3 bool, 0/1 term, or Python bool/int) as a z3 bool or a bool."""
    if isinstance(x, (bool, int)):
        return bool(x)
    if z3.is_bool(x):
        return x
    return as_term(x) != 0


def pred_as_int(p) -> SymInt:
    if isinstance(p, bool):
        return int(p)
    return z3.If(p, z3.BitVecVal(1, WIDTH), z3.BitVecVal(0, WIDTH))


def below_by_construction(x: SymInt, limit: int) -> bool:
    """x % c with a constant 0 < c <= limit is below `limit` whatever x is: no solver
    needed (proving it with one costs a divider circuit per query)."""
    if not is_symbolic(x):
        return False
    t = z3.simplify(as_term(x))
    if z3.is_app(t) and t.decl().kind() in (z3.Z3_OP_BUREM, z3.Z3_OP_BUREM_I):
        c = t.arg(1)
        return z3.is_bv_value(c) and 0 < c.as_long() <= limit
    return False


def value(model: z3.ModelRef, term: SymInt) -> int:
    if not is_symbolic(term):
        return int(term)
    return model.eval(as_term(term), model_completion=True).as_long()


def find(constraints: Iterable, violation, minimise: Iterable[SymInt] = (),
         prefer: Iterable = ()) -> Optional[z3.ModelRef]:
    """A model of constraints /\\ violation, or None when none exists (the property holds).

    `prefer` are extra constraints tried first (e.g. outer loop counters at 0, so the
    counterexample is in the first tile); `minimise` are terms minimised in order
    (lexicographically), each by binary search on an incremental solver.
    """
    asked = [*constraints, violation]
    if known_unsat(asked):          # proved before in this process (another warpgroup,
        return None                 # the nt/nn twin of this kernel)
    solver = z3.Solver()
    solver.set("timeout", TIMEOUT_MS)
    solver.add(*asked, *mod_lemmas(asked))   # true facts: they only speed up x % 3
    verdict = solver.check()
    if verdict == z3.unsat:
        remember_unsat(asked)
        return None
    if verdict == z3.unknown:
        raise SolverUnknown(str(solver.reason_unknown()))
    prefer = list(prefer)
    if prefer:
        solver.push()
        solver.add(*prefer)
        if solver.check() != z3.sat:
            solver.pop()
            solver.check()
    for term in minimise:
        if not is_symbolic(term):
            continue
        term = as_term(term)
        hi, lo = value(solver.model(), term), 0
        while lo < hi:
            mid = (lo + hi) // 2
            solver.push()
            solver.add(z3.ULE(term, mid))
            if solver.check() == z3.sat:
                hi = value(solver.model(), term)
                solver.pop()
            else:
                solver.pop()
                lo = mid + 1
        solver.add(term == hi)
        if solver.check() != z3.sat:     # cannot happen; keep the last model
            break
    return solver.model()


class SolverUnknown(RuntimeError):
    """z3 gave up within the time limit; the caller reports the check as not discharged."""
