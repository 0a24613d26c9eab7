"""A filtered walk over a loop nest, emitted as a strided loop.

A persistent kernel that numbers its items itself keeps a block's share with a filter:

    for a in range(A):                  # or one loop: for b in range(B): w = X + b
        for b in range(B):
            w = X + a * B + b           # X the same for every (a, b)
            if w % C == R:              # C a constant > 0, R the same for every (a, b)
                ...                     # this block's item w

(argus/kernels/moe_gate_up.py and moe_down.py: `if w % BLOCKS == bid` over an expert's
m- and n-tiles). As written, every block tests all A * B items: for a decode MoE GEMM at
64 experts about a hundred iterations of some 25 dependent integer instructions each, a
third to a half of the kernel's time (H100 ncu stall samples, 2026-12-07, docs/perf-log.md).

The items it keeps are the w in [X, X + A*B) with w = R (mod C) and 0 <= R < C (the
modulo has Python's meaning, argus/codegen/lower/arith.py), in increasing w, which is
the nest's (a, b) order. So the nest is emitted as one loop over exactly those w, a and b
recovered from w, and the body as written (its filter then holds, and is still tested):

    for (d = mod(R - X, C); d < A*B; d += C) { a = d / B; b = d % B; body }   (d = w - X)

The same iterations in the same order; the IR, the interpreter and the verifier see the
nest as written. A nest of another form is lowered as written (`match` returns None), so is
a nest inside a loop the backend unrolls (its copies' bounds, computed up front, stayed live
into the prefill MoE producer's 40 registers: ptxas spilled ~240 B in its k-loop at 8
experts, 2026-12-07; that walk is short and hidden under the ring), and so is every nest
under ARGUS_FILTERED_WALK=0 (an A/B switch: the generated source, and with
it the build cache's key, differs).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ..values import Scalar

ARITH = ("arith.add", "arith.sub", "arith.mul")


@dataclass
class Walk:
    """A matched nest: its loops (outer first; one or two), the innermost body, the C text
    of the invariant offset X, the modulus C and the residue R (an operand bound before
    the nest)."""
    loops: tuple
    body: object           # the innermost loop's block (its last op is the filter's if)
    offset: str
    modulus: int
    residue: object        # the IR operand R


def _const(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _unit_loop(op) -> bool:
    """A `for` counting 0, 1, 2, ...: start 0, step 1."""
    return op.opcode == "for" and op.arg("start") == 0 and op.arg("step") == 1


def match(ctx, op) -> Walk | None:
    """The Walk `op` (a `for`) starts, or None when it is not one (lowered as written)."""
    if not _unit_loop(op) or os.environ.get("ARGUS_FILTERED_WALK") == "0" or ctx.unrolled:
        return None
    outer_ops = op.regions[0].ops
    if len(outer_ops) == 1 and _unit_loop(outer_ops[0]):
        loops = (op, outer_ops[0])
    else:
        loops = (op,)
    body = loops[-1].regions[0]
    if not body.ops or body.ops[-1].opcode != "if":
        return None
    filt = body.ops[-1]
    if len(filt.regions) > 1 and filt.regions[1].ops:
        return None                     # an else branch runs for the items of other blocks
    if any(o.opcode not in ARITH + ("arith.mod", "arith.eq") for o in body.ops[:-1]):
        return None                     # only pure index arithmetic before the filter
    defined = {id(r): o for o in body.ops[:-1] for r in o.results}
    counters = {id(loop.regions[0].args[0]): n for n, loop in enumerate(loops)}
    cond = defined.get(id(filt.arg("cond")))
    if cond is None or cond.opcode != "arith.eq":
        return None
    for mod_side, residue in ((cond.arg("lhs"), cond.arg("rhs")),
                              (cond.arg("rhs"), cond.arg("lhs"))):
        mod = defined.get(id(mod_side)) if not _const(mod_side) else None
        if mod is None or mod.opcode != "arith.mod":
            continue
        modulus = mod.arg("rhs")
        if not _const(modulus) or modulus <= 0:
            continue
        if not _const(residue) and (id(residue) in defined or id(residue) in counters):
            continue                    # R must be bound before the nest (lowered first)
        form = _affine(ctx, mod.arg("lhs"), defined, counters)
        if form is None:
            continue
        coeffs, offset = form
        if len(loops) == 2:
            want = {0: loops[1].arg("stop"), 1: 1}
        else:
            want = {0: 1}
        if set(coeffs) != set(want) or any(not _same(coeffs[n], want[n]) for n in want):
            continue
        return Walk(loops, body, offset, modulus, residue)
    return None


def _same(x, y) -> bool:
    if _const(x) or _const(y):
        return _const(x) and _const(y) and x == y
    return x is y


def _invariant(x, defined, counters) -> bool:
    """x is the same in every iteration of the nest (defined outside it, or a constant)."""
    if _const(x):
        return True
    if id(x) in counters:
        return False
    op = defined.get(id(x))
    if op is None:
        return True
    return all(_invariant(o, defined, counters) for o in op.operands)


def _affine(ctx, x, defined, counters):
    """({counter index: coefficient}, C text of the rest) with x = sum(coefficient * counter)
    + rest, each coefficient an int or one invariant IR value; None when x is not of that
    form."""
    if _const(x):
        return {}, str(x)
    if id(x) in counters:
        return {counters[id(x)]: 1}, "0"
    op = defined.get(id(x))
    if op is None:
        return {}, ctx.expr(x)
    if op.opcode not in ARITH:
        return None
    lhs, rhs = op.arg("lhs"), op.arg("rhs")
    if op.opcode == "arith.mul":
        for var, factor in ((lhs, rhs), (rhs, lhs)):
            if id(var) in counters and _invariant(factor, defined, counters) and \
                    (_const(factor) or id(factor) not in defined):
                return {counters[id(var)]: factor}, "0"
        if _invariant(lhs, defined, counters) and _invariant(rhs, defined, counters):
            left, right = _text(ctx, lhs, defined), _text(ctx, rhs, defined)
            if left is None or right is None:
                return None
            return {}, f"({left}) * ({right})"
        return None
    a, b = _affine(ctx, lhs, defined, counters), _affine(ctx, rhs, defined, counters)
    if a is None or b is None:
        return None
    if op.opcode == "arith.sub":
        if b[0]:
            return None                  # a counter subtracted: not this form
        return a[0], f"({a[1]}) - ({b[1]})"
    if set(a[0]) & set(b[0]):
        return None
    return {**a[0], **b[0]}, f"({a[1]}) + ({b[1]})"


def _text(ctx, x, defined) -> str | None:
    """C text of an invariant operand (+, - and * of values defined outside the nest), or
    None for another form."""
    if _const(x):
        return str(x)
    op = defined.get(id(x))
    if op is None:
        return ctx.expr(x)
    sym = {"arith.add": "+", "arith.sub": "-", "arith.mul": "*"}.get(op.opcode)
    left, right = _text(ctx, op.arg("lhs"), defined), _text(ctx, op.arg("rhs"), defined)
    if sym is None or left is None or right is None:
        return None
    return f"({left}) {sym} ({right})"


def lower(ctx, walk: Walk, lower_block) -> None:
    """The strided loop over the walk's items (module docstring)."""
    em = ctx.em
    names = [em.name(loop.regions[0].args[0].name) for loop in walk.loops]
    first = walk.loops[0]
    em.open("", f"the items w % {walk.modulus} == {ctx.expr(walk.residue)} of this nest, "
                "strided (argus/codegen/lower/filtered_walk.py)")
    x, n, w, r = (em.name(f"argus_walk_{s}") for s in ("x", "n", "d", "r"))
    em.line(f"const int {x} = {walk.offset};")
    if len(walk.loops) == 2:
        outer, inner = (ctx.expr(loop.arg("stop")) for loop in walk.loops)
        extent = em.name("argus_walk_inner")
        em.line(f"const int {extent} = {inner};")
        em.line(f"const int {n} = ({outer}) > 0 && {extent} > 0 ? ({outer}) * {extent} : 0;")
    else:
        em.line(f"const int {n} = argus::max({ctx.expr(first.arg('stop'))}, 0);")
    em.line(f"const int {r} = {ctx.expr(walk.residue)};")
    c = walk.modulus
    em.open(f"if ({r} >= 0 && {r} < {c})")
    # d = w - X, the item's place in the nest: a, b and the loop need only d, n and B
    em.open(f"for (int {w} = argus::mod({r} - {x}, {c}); {w} < {n}; {w} += {c})")
    if len(walk.loops) == 2:
        # d >= 0 and B > 0 here: an unsigned division (fewer instructions and registers)
        em.line(f"const int {names[0]} = (int)((unsigned){w} / (unsigned){extent});")
        em.line(f"const int {names[1]} = {w} - {names[0]} * {extent};")
    else:
        em.line(f"const int {names[0]} = {w};")
    for loop, name in zip(walk.loops, names):
        ctx.bind(loop.regions[0].args[0], Scalar(name, 0))
    lower_block(ctx, walk.body)
    em.close()
    em.close()
    em.close()
