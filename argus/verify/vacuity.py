"""Vacuity: a proof over no sizes, or over a loop that never runs, proves nothing.

Every other pass proves "for every admitted size, ...": an `assume` that no size satisfies
makes each of those claims true of nothing, and a reduction loop of zero trips (`KT = 0 //
BK`, `KT = K % BK` under `assume(K % BK == 0)`) leaves the accumulator at its initial value
while every check inside the loop holds vacuously. This pass checks, over the kernel's
uniform scalars rendered by argus/verify/arith.py (shape symbols 1 <= M < 2^24 as in the
tag pass, compile-time constants, `arith` ops with exact products):

- `vacuity.assume` (error, at the first `assume` that makes the conjunction unsatisfiable
  with those before it): no size satisfies the kernel's assumptions;
- `vacuity.loop` (error, at the loop): a `for` loop whose trip count is 0 for every
  admitted size (dead code), or a loop whose bounds depend on the shape symbols only, whose
  body writes memory or an accumulator (the kernel's output depends on it), and which runs
  zero times for some admitted sizes (the counterexample names them). Two consecutive
  sibling loops where the second starts where the first stops (`for j in range(nf)` then
  `for j in range(nf, nj)`, the same IR value) are one split loop over [start1, stop2): the
  second rule applies to the union (it runs zero times when both parts do), reported at
  the first loop; each part is still checked for the first rule.

- `vacuity.output` (error, at the kernel): no op writes any of the kernel's tensors, or a
  tensor parameter that no op reads or writes (only named, as in a tag_assert's
  `coord(dst)`), so that an output nobody stores verifies.

Loops whose bounds depend on block ids, loop counters of enclosing loops, the warpgroup or
data are checked for the first property only (a split of work in which some block gets no
iteration is normal). Coverage of each written tensor by its stores is the tag pass's
`tag.store-coverage` (argus/verify/tags/writers.py). A query z3 cannot decide (the
assumptions, or whether a loop runs) is a `vacuity.undecided` warning (the result is
then unverified), never a pass.
"""

from __future__ import annotations

from typing import Any

import z3

from argus.ir.nodes import Block, Kernel, Op, Value
from argus.ir.ops import OPS
from argus.verify import arith, quotients
from argus.verify.finding import Counterexample, Finding
from argus.verify.smt import VAR_LIMIT, WIDTH, least, relevant

TIMEOUT_MS = 2000
MINIMISE_MS = 200
UNKNOWN = None


class _Scalars:
    """The uniform scalars of the kernel as z3 terms (None: not expressible here), and
    which of them depend on the shape symbols only."""

    def __init__(self, kernel: Kernel):
        self.env: dict[Value, Any] = {}
        self.sizes_only: set[Value] = set()      # values that are functions of the sizes
        self.bounds: list = []
        self.symbols: dict[str, z3.BitVecRef] = {}
        self.symbol_values = set(kernel.symbols)
        for s in kernel.symbols:
            v = z3.BitVec(s.name, WIDTH)
            self.env[s] = v
            self.sizes_only.add(s)
            self.symbols[s.name] = v
            self.bounds += [z3.ULE(1, v), z3.ULT(v, VAR_LIMIT)]
        self._fresh = 0
        # assume(R % S == 0) of two sizes: R == Q * S, R // S is Q, R % S is 0 (quotients.py)
        self.quotients: dict[tuple[str, str], z3.BitVecRef] = {}
        self.products: list = []                 # R == Q * S of each quotient
        for r, s in quotients.divisible_pairs(kernel):
            q = z3.BitVec(f"{r}/{s}", WIDTH)
            self.quotients[(r, s)] = q
            self.bounds += [z3.ULE(1, q), z3.ULT(q, VAR_LIMIT)]
            self.products.append(self.symbols[r] == q * self.symbols[s])

    def of(self, operand):
        if isinstance(operand, Value):
            return self.env.get(operand, UNKNOWN)
        if isinstance(operand, (bool, int)):
            return operand
        return UNKNOWN

    def of_sizes(self, operand) -> bool:
        return not isinstance(operand, Value) or operand in self.sizes_only

    def fresh(self, value: Value) -> None:
        """A value this pass does not compute (an id, a loop counter): a free variable
        below the bound of every base variable."""
        self._fresh += 1
        v = z3.BitVec(f"{value.name}!{self._fresh}", WIDTH)
        self.bounds.append(z3.ULT(v, VAR_LIMIT))
        self.env[value] = v

    def arith(self, op: Op) -> None:
        args = [self.of(o) for o in op.operands]
        result = op.results[0] if op.results else None
        if result is None:
            return
        if any(a is UNKNOWN or isinstance(a, float) for a in args):
            self.env[result] = UNKNOWN
            return
        name = op.opcode.split(".", 1)[1]
        if name in ("floordiv", "mod") and all(isinstance(o, Value) for o in op.operands):
            q = self.quotients.get(tuple(o.name for o in op.operands)) \
                if all(o in self.symbol_values for o in op.operands) else None
            if q is not None:
                self.env[result] = q if name == "floordiv" else z3.BitVecVal(0, WIDTH)
                self.sizes_only.add(result)
                return
        try:
            out = arith.render(op.opcode.split(".", 1)[1], args, WIDTH, _mul)
        except (TypeError, KeyError, ValueError, ArithmeticError, z3.Z3Exception):
            out = UNKNOWN                        # e.g. a predicate used as an index
        self.env[result] = out
        if out is not UNKNOWN and all(self.of_sizes(o) for o in op.operands):
            self.sizes_only.add(result)


def _mul(a, b):
    return arith.term(a, WIDTH) * arith.term(b, WIDTH) if z3.is_expr(a) or z3.is_expr(b) \
        else a * b


def _as_bool(x):
    if isinstance(x, bool):
        return z3.BoolVal(x)
    if isinstance(x, int):
        return z3.BoolVal(x != 0)
    if z3.is_bool(x):
        return x
    return x != 0


def _writes(block: Block) -> bool:
    """Whether the region writes memory or an accumulator (an op the table says writes)."""
    for op in block.ops:
        spec = OPS.get(op.opcode)
        if spec is not None and spec.writes:
            return True
        if any(_writes(r) for r in op.regions):
            return True
    return False


class _Walk:
    def __init__(self, kernel: Kernel):
        self.kernel = kernel
        self.s = _Scalars(kernel)
        self.assumes: list[tuple[Op, Any]] = []  # (op, z3 Bool under its path)
        self.loops: list[_Loop] = []
        self.findings: list[Finding] = []

    def block(self, block: Block, path: list, exact: bool) -> None:
        """`exact`: the path facts are all known (no `if` on an unknown condition)."""
        previous = None
        for op in block.ops:
            self.op(op, path, exact, previous)
            previous = op

    def op(self, op: Op, path: list, exact: bool, previous: Op | None = None) -> None:
        code = op.opcode
        if code.startswith("arith."):
            self.s.arith(op)
            return
        if code == "assume":
            cond = self.s.of(op.arg("cond"))
            if cond is not UNKNOWN:
                pred = _as_bool(cond)
                self.assumes.append((op, z3.Implies(z3.And(*path), pred) if path else pred))
            return
        if code == "for":
            start, stop = (self.s.of(op.arg(n)) for n in ("start", "stop"))
            counter = op.regions[0].args[0] if op.regions[0].args else None
            inside = []
            if counter is not None:
                self.s.fresh(counter)
            if start is not UNKNOWN and stop is not UNKNOWN:
                zero = _signed_ge(start, stop)
                of_sizes = exact and all(self.s.of_sizes(op.arg(n)) for n in ("start", "stop"))
                loop = _Loop(op, zero, of_sizes, list(path), _writes(op.regions[0]))
                first = self._split_from(previous, op)
                if first is not None:
                    first.join(loop)
                else:
                    self.loops.append(loop)
                if counter is not None:
                    c = self.s.env[counter]
                    inside = [_signed_le(start, c), _signed_lt(c, stop)]
            self.block(op.regions[0], path + inside, exact)
            return
        if code == "if":
            cond = self.s.of(op.arg("cond"))
            known = cond is not UNKNOWN
            c = _as_bool(cond) if known else None
            for i, region in enumerate(op.regions):
                facts = ([c] if i == 0 else [z3.Not(c)]) if known else []
                self.block(region, path + facts, exact and known)
            return
        for r in op.results:                  # ids, data, tiles: not computed here
            if r.type is not None and getattr(r.type, "dtype", None) is not None and \
                    not hasattr(r.type, "shape"):
                self.s.fresh(r)
        for region in op.regions:
            for a in region.args:
                self.s.fresh(a)
            self.block(region, path, exact)

    # ---- the checks ---------------------------------------------------------------------
    def check(self) -> list[Finding]:
        admitted = self.s.bounds + self.s.products + [a for _, a in self.assumes]
        # each bound alone is satisfiable: only those linked to an assumption can conflict
        state, self.model = _solve_model(relevant(admitted, [a for _, a in self.assumes]))
        if state == z3.unsat:
            self._report_unsat()
            return self.findings
        if state == z3.unknown:
            self.findings.append(Finding(
                "vacuity.undecided", "warning", "z3 could not decide whether any size "
                "satisfies the kernel's assumptions; nothing is verified", self.kernel.loc,
                "assume", "write assumptions as affine facts of the shape symbols"))
            return self.findings
        for loop in self.loops:
            stopped = [self._check_dead(op, zero, loop.of_sizes, path, admitted)
                       for op, zero, path in loop.parts]
            if not all(stopped):
                self._check_sometimes_zero(loop, admitted)
        return self.findings

    def _split_from(self, previous: Op | None, op: Op):
        """The loop `op` continues (the previous sibling loop, whose stop is `op`'s start:
        one loop split in two), else None."""
        if previous is None or previous.opcode != "for" or not self.loops:
            return None
        start = op.arg("start")
        first = self.loops[-1]
        if first.parts[-1][0] is not previous or not isinstance(start, Value) or \
                previous.arg("stop") is not start:
            return None
        return first

    def _report_unsat(self) -> None:
        bounds = self.s.bounds + self.s.products
        for i, (op, _) in enumerate(self.assumes):
            prefix = bounds + [a for _, a in self.assumes[:i + 1]]
            if _solve(prefix) == z3.unsat:
                needed = list(range(i))          # drop the earlier ones not needed
                for j in range(i):
                    rest = [k for k in needed if k != j]
                    if _solve(bounds + [self.assumes[k][1] for k in rest + [i]]) == z3.unsat:
                        needed = rest
                before = [self.assumes[k][0].loc.line for k in needed]
                also = f" together with the assumptions at line(s) " \
                       f"{', '.join(map(str, before))}" if before else ""
                self.findings.append(Finding(
                    "vacuity.assume", "error",
                    f"no size satisfies this assumption{also} (sizes are at least 1): every "
                    "check of the kernel holds vacuously, so nothing is verified", op.loc,
                    "assume", "state the precondition the kernel needs, e.g. "
                    "assume(K % BK == 0); remove the contradiction"))
                return

    def _check_dead(self, op: Op, zero, of_sizes: bool, path: list, admitted: list) -> bool:
        """A loop (or part of a split loop) that runs zero times for every admitted size;
        True when it is reported so, or undecided."""
        zero = z3.simplify(zero)
        if z3.is_false(zero):
            return False                          # runs whenever it is reached
        # the facts that constrain the trip count (sharing a variable with it); dropping
        # the others keeps the same answers (admitted is satisfiable on its own)
        reached = relevant(admitted if of_sizes else admitted + path, [zero])
        runs = z3.sat if _holds_in(self.model, reached + [z3.Not(zero)]) else \
            _solve(reached + [z3.Not(zero)])
        if runs == z3.unknown:
            self._undecided(op)
            return True
        if runs == z3.unsat and _solve(relevant(admitted + path, path) + path) == z3.sat:
            self.findings.append(Finding(
                "vacuity.loop", "error",
                "this loop runs zero times for every admitted size: its body is dead code "
                "and every check inside it holds vacuously (an accumulator it should fill "
                "keeps its initial value)", op.loc, "for",
                "check the trip count (e.g. KT = K // BK, not K % BK or 0 // BK)"))
            return True
        return False

    def _check_sometimes_zero(self, loop: "_Loop", admitted: list) -> None:
        """A loop of the sizes alone that writes and runs zero times for some sizes."""
        op, zero = loop.op, z3.simplify(loop.zero)
        if z3.is_false(zero) or not loop.of_sizes or not loop.writes:
            return
        # first with the sizes' bounds alone: impossible there is impossible under the
        # assumptions too (a nonlinear one, R == Q * S, is slow to refute with)
        if _solve(relevant(self.s.bounds, [zero]) + [zero]) == z3.unsat:
            return
        # the bounds are functions of the sizes alone: the sizes decide, not the path (a
        # path impossible at those sizes is an enclosing loop's zero trips, reported there)
        sized = relevant(admitted, [zero, *self.s.symbols.values()])
        state, model = _model(sized + [zero], list(self.s.symbols.values()))
        if state == z3.unknown:
            self._undecided(op)
        if model is None:
            return
        sizes = {name: model.eval(v, model_completion=True).as_long()
                 for name, v in self.s.symbols.items()}
        shown = ", ".join(f"{k}={v}" for k, v in sizes.items())
        what = "this loop runs" if len(loop.parts) == 1 else \
            "this loop and its continuation at line(s) " + ", ".join(
                str(o.loc.line) for o, _, _ in loop.parts[1:]) + " (one range split in two) run"
        self.findings.append(Finding(
            "vacuity.loop", "error",
            f"{what} zero times for admitted sizes ({shown}), and what it writes "
            "is part of the output: the kernel's result there is its initial value",
            op.loc, "for", "assume the sizes the loop needs (e.g. assume(K % BK == 0) with "
            "KT = K // BK) or compute the trip count so it is at least 1",
            Counterexample(sizes=sizes)))


    def _undecided(self, op: Op) -> None:
        self.findings.append(Finding(
            "vacuity.undecided", "warning", "z3 could not decide whether this loop runs for "
            "every admitted size; that it runs is not verified", op.loc, "for",
            "write the trip count as an affine expression of the sizes (e.g. K // BK)"))


class _Loop:
    """A `for` loop, or consecutive loops splitting one range ([start1, stop1), [stop1,
    stop2)): the union runs zero times when every part does."""

    def __init__(self, op: Op, zero, of_sizes: bool, path: list, writes: bool):
        self.op, self.zero, self.of_sizes, self.writes = op, zero, of_sizes, writes
        self.parts = [(op, zero, path)]

    def join(self, other: "_Loop") -> None:
        self.parts.append((other.op, other.zero, other.parts[0][2]))
        self.zero = z3.And(self.zero, other.zero)
        self.of_sizes = self.of_sizes and other.of_sizes
        self.writes = self.writes or other.writes


def _signed_ge(a, b):
    return arith.term(a, WIDTH) >= arith.term(b, WIDTH)      # z3's >= is signed


def _signed_le(a, b):
    return arith.term(a, WIDTH) <= arith.term(b, WIDTH)


def _signed_lt(a, b):
    return arith.term(a, WIDTH) < arith.term(b, WIDTH)


def _solver():
    """A solver that first solves the equations (R == Q * S of a quotient, CQ == G * CK:
    a size eliminated, not a multiplier bit-blasted), then z3's default."""
    return z3.Then("simplify", "propagate-values", "solve-eqs", "smt").solver()


def _solve_model(formulas):
    """(z3's answer, a model when sat)."""
    s = _solver()
    s.set("timeout", TIMEOUT_MS)
    s.add(*formulas)
    state = s.check()
    return state, (s.model() if state == z3.sat else None)


def _holds_in(model, formulas) -> bool:
    """Whether every formula is true in `model` (a cheap witness of satisfiability; False
    says only that this model is not one)."""
    if model is None:
        return False
    return all(z3.is_true(model.eval(f, model_completion=True)) for f in formulas)


def _solve(formulas):
    s = _solver()
    s.set("timeout", TIMEOUT_MS)
    s.add(*formulas)
    return s.check()


def _model(formulas, minimise):
    """(z3's answer, a model of the formulas with the smallest sizes first
    (lexicographically), or None when there is none or z3 cannot decide in time)."""
    s = z3.Solver()
    s.set("timeout", TIMEOUT_MS)
    s.add(*formulas)
    state = s.check()
    if state != z3.sat:
        return state, None
    found = s.model()
    s.set("timeout", MINIMISE_MS)    # smaller sizes are nicer, not needed: a step that
    try:                             # times out keeps the model found so far
        least(s, minimise)
        if s.check() == z3.sat:
            found = s.model()
    except z3.Z3Exception:
        pass
    return state, found


def outputs(kernel: Kernel) -> list[Finding]:
    """`vacuity.output`: a kernel that writes no tensor, or a tensor parameter that no op
    reads or writes (only named, e.g. in a tag_assert's coord(dst)): if it is the output,
    none of its elements is computed, and every store check holds of no store."""
    from argus.ir.types import GlobalTensorType

    origin = {p: p.name for p in kernel.params if isinstance(p.type, GlobalTensorType)}
    touched, written = set(), set()
    for op in kernel.walk():
        spec = OPS.get(op.opcode)
        tensors = [origin[o] for o in op.operands if isinstance(o, Value) and o in origin]
        if spec is not None and spec.view:
            if op.opcode in ("tile", "segment") and tensors:   # a view of the tensor
                for r in op.results:
                    origin[r] = tensors[0]
            continue
        touched.update(tensors)
        if spec is not None:
            for name in spec.writes:
                try:
                    dst = op.arg(name)
                except (IndexError, LookupError):
                    continue
                if isinstance(dst, Value) and dst in origin:
                    written.add(origin[dst])
    params = [p.name for p in kernel.params if isinstance(p.type, GlobalTensorType)]
    if params and not written:
        return [Finding(
            "vacuity.output", "error", f"no op writes any of the kernel's tensors "
            f"({', '.join(params)}): the kernel computes nothing, and every store check "
            "holds of no store", kernel.loc, "kernel",
            "store the result: store(tile(C, box, coords), value) (or tma_store)")]
    return [Finding(
        "vacuity.output", "error", f"tensor {name} is never read nor written by any op: "
        f"if it is an output, none of its elements is computed", kernel.loc, "kernel",
        f"store the result into {name} (store(tile({name}, box, coords), value)), or drop "
        f"the parameter") for name in params if name not in touched]


def check(kernel: Kernel) -> list[Finding]:
    w = _Walk(kernel)
    w.block(kernel.body, [], True)
    return w.check() + outputs(kernel)
