"""Quotient symbols: `assume(R % S == 0)` of two sizes says R = Q * S for a size Q >= 1.

A kernel over whole segments (heads of SQ rows in a tensor of RQ rows) assumes
`RQ % SQ == 0` and launches `RQ // SQ` blocks; block b's segment starts at b * SQ. That it
ends inside the tensor, b * SQ + SQ <= RQ for b < RQ // SQ, is a nonlinear fact z3 does
not find through a bit-blasted divider. Each such assumption (unconditional, at the
kernel's top level, both operands shape symbols) gets a fresh size variable Q with the
fact R == Q * S, and every R // S is Q and R % S is 0. That is exact: R // S is Q and
R % S is 0 for every size satisfying the assumption, so nothing proved changes meaning.

- the tag pass (`setup`): R == Q * S is a product atom (argus/verify/smt.py), and the
  atoms sharing the factor S are ordered by their other factors (Context.mul's
  common-factor facts): b < Q gives b * S + S <= Q * S = R, all linear;
- the vacuity pass (argus/verify/vacuity.py): R == Q * S with the real product, so no
  query of it divides by a symbol.
"""

from __future__ import annotations

from argus.ir.nodes import Kernel, Op, Value


def divisible_pairs(kernel: Kernel) -> list[tuple[str, str]]:
    """(R, S) of each top-level `assume(R % S == 0)` (or `0 == R % S`) with R and S shape
    symbols, in program order."""
    symbols = {s for s in kernel.symbols}
    made: dict[Value, Op] = {}
    out = []
    for op in kernel.body.ops:            # top level only: an assumption under an if or
        for r in op.results:              # a loop holds on its path, not everywhere
            made[r] = op
        if op.opcode != "assume":
            continue
        cond = made.get(op.arg("cond"))
        if cond is None or cond.opcode != "arith.eq":
            continue
        a, b = cond.operands
        rem = a if b == 0 and not isinstance(b, Value) else b if a == 0 and \
            not isinstance(a, Value) else None
        mod = made.get(rem) if isinstance(rem, Value) else None
        if mod is None or mod.opcode != "arith.mod":
            continue
        r, s = mod.operands
        if r in symbols and s in symbols and r is not s:
            out.append((r.name, s.name))
    return out


def setup(w) -> None:
    """The tag pass's quotient variable for each divisibility assumption of two sizes
    (before the grid is read, so that a grid of R // S blocks bounds the block id by Q)."""
    for r, s in divisible_pairs(w.kernel):
        R, S = w.sizes[r], w.sizes[s]
        if w.ctx.quotient(R, S) is not None:
            continue
        q = w.ctx.var(f"{r}/{s}", "size", lower=1)
        w.ctx.define_quotient(R, S, q)
