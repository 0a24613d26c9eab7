"""A loop that filters its iterations, emitted with its filter evaluated 32 iterations ahead.

    for e in range(E):                  # constant bounds
        rows = element(cnt, e)          # pure: index arithmetic, elements of index
        ...                             # vectors, segments (views)
        if rows > 0:                    # no else
            ...                         # the work of iteration e

(argus/kernels/moe_gate_up.py and moe_down.py with SKIP_EMPTY: a decode batch's blocks scan
all E experts for the few that received a token). As written, each iteration waits for its
own element's load and its filter before the next starts: ~60 empty experts at ~100
cycles each, about 3 us before a block's first item (an estimate from the SASS and the H100
ncu report of 2026-12-07, docs/perf-log.md).

Here the iterations go in batches of 32: the pure ops and the filter of the batch's
iterations first, unrolled (their loads in flight together), into a bit mask; then, in
increasing order, the iterations whose filter held, each running the body as written (its
pure ops again, and the `if`, which holds). The filter's ops read nothing the body writes
(checked with the op table's `writes`), so the filter evaluated ahead is the
filter the body would have seen (a filter that reads a value the body writes, an assigned
fragment say, is not batched), and the iterations that run are the same, in the same
order. The IR, the interpreter and the verifier see the loop as written.

Only loops of constant bounds and at least MIN_TRIP iterations are batched (the scans this
is for; a short or symbolic loop is emitted as written), and not under
ARGUS_FILTERED_LOOP=0 (an A/B switch: it changes the generated source, and with it the
build cache's key).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from argus.ir import spec_of
from argus.ir.nodes import Block, Value

from ..values import Scalar

BATCH = 32          # iterations whose filter one 32-bit mask holds
MIN_TRIP = 8
PURE = ("indices.element", "segment")


@dataclass
class Scan:
    start: int
    stop: int
    body: Block
    pure: list              # the ops before the filter
    filt: object            # the `if`


def match(ctx, op, element_is_snapshot) -> Scan | None:
    """The Scan `op` (a `for`) is, or None. `element_is_snapshot(ctx, op)`: an
    indices.element op reads a value fixed when its vector was made (memory or a register
    array of its own; not a fragment's registers, which an assign changes, nor an exchange
    through shared memory, which would synchronise)."""
    if os.environ.get("ARGUS_FILTERED_LOOP") == "0":
        return None
    start, stop, step = (op.arg(n) for n in ("start", "stop", "step"))
    if not all(isinstance(x, int) and not isinstance(x, bool) for x in (start, stop, step)):
        return None
    if step != 1 or stop - start < MIN_TRIP:
        return None
    body = op.regions[0]
    if not body.ops or body.ops[-1].opcode != "if":
        return None
    filt = body.ops[-1]
    if len(filt.regions) > 1 and filt.regions[1].ops:
        return None
    pure = body.ops[:-1]
    for o in pure:
        if not (o.opcode.startswith("arith.") or o.opcode in PURE) or o.regions:
            return None
        if o.opcode == "indices.element" and not element_is_snapshot(ctx, o):
            return None
    if _reads_written(filt.arg("cond"), pure, _written(filt)):
        return None
    return Scan(start, stop, body, list(pure), filt)


def _written(op) -> set:
    """ids of the values the ops under `op` write (the op table's `writes`: an assign's
    destination, a wgmma's accumulator, ...)."""
    out = set()
    for region in op.regions:
        for o in region.ops:
            for name in spec_of(o.opcode).writes:
                v = o.arg(name)
                if isinstance(v, Value):
                    out.add(id(v))
            out |= _written(o)
    return out


def _reads_written(cond, pure, written) -> bool:
    """The filter depends on a value the body writes (through the pure ops that compute
    it): evaluated ahead, it would see that value before earlier iterations wrote it."""
    defined = {id(r): o for o in pure for r in o.results}
    stack, seen = [cond], set()
    while stack:
        v = stack.pop()
        if not isinstance(v, Value) or id(v) in seen:
            continue
        seen.add(id(v))
        if id(v) in written:
            return True
        op = defined.get(id(v))
        if op is not None:
            stack.extend(op.operands)
    return False


def lower(ctx, scan: Scan, op, lower_block) -> None:
    """The batched loop (module docstring)."""
    em = ctx.em
    counter = op.regions[0].args[0]
    base, hits, u = (em.name(f"argus_scan_{s}") for s in ("base", "hits", "u"))
    # not unrolled: an unrolled batch loop's constant elements would be the prologue's own
    # loads, kept live into a role's smaller register budget (spilled: ptxas, 2026-12-07)
    em.line("#pragma unroll 1")
    em.open(f"for (int {base} = {scan.start}; {base} < {scan.stop}; {base} += {BATCH})",
            "the filter 32 iterations ahead (argus/codegen/lower/filtered_loop.py)")
    em.line(f"unsigned {hits} = 0u;")
    em.line("#pragma unroll")
    em.open(f"for (int {u} = 0; {u} < {BATCH}; ++{u})")
    name = em.name(counter.name)
    em.line(f"const int {name} = {base} + {u};")
    ctx.bind(counter, Scalar(name, scan.start))
    em.open(f"if ({name} < {scan.stop})")
    lower_block(ctx, Block(ops=scan.pure))
    em.line(f"if ({ctx.expr(scan.filt.arg('cond'), scan.filt)}) {hits} |= 1u << {u};")
    em.close()
    em.close()
    em.open(f"while ({hits} != 0u)")
    name = em.name(counter.name)
    em.line(f"const int {name} = {base} + __ffs({hits}) - 1;")
    em.line(f"{hits} &= {hits} - 1u;")
    ctx.bind(counter, Scalar(name, scan.start))
    lower_block(ctx, scan.body)
    em.close()
    em.close()
