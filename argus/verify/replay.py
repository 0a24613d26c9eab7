"""Replay of a counterexample: is the point it names one the kernel really reaches?

A pass reports an error with a z3 model: sizes, a block, a warpgroup, loop counters and
tile coordinates. The model satisfies the pass's *abstraction* of the kernel (product
atoms, free tile coordinates, loop counters within symbolic bounds), which can admit
points that no run reaches: a schedule step past the last tile of the block at those
sizes, a counter outside its loop's range, sizes that break an `assume`. Such a
counterexample is a defect of the verifier, never the user's bug.

`confirm` replays every error whose counterexample names concrete sizes for every shape
symbol. The sizes must satisfy every `assume` (evaluated with the op table's scalar
semantics, as the interpreter evaluates it), the named block must lie in the launch grid
at those sizes, and the named loop counters and tile coordinates must be values some run
gives them together: the replay walks the kernel's loop nest concretely, as the
interpreter does (argus/interp/ops/structure.py: `for` ranges, the launch grid,
`argus.ir.schedule.block_tiles` for persistent schedules, `by="cluster"` walks), in the
named block (every block when none is named), entering only the iterations whose counters
carry the named values, and asks whether one path binds every named counter at once; a
named scalar the walk computes (`rank = block_id("x") % CM`, `tm = cm * CM + rank`) must
have the named value on that path. A race's other writer (the `second writer` of its
element) is replayed the same way.
What a counterexample's counters describe differs per check (the op at the finding's line,
a second writer, a barrier phase), so the walk does not ask that the op at the line runs
there: it takes both branches of every `if` and every role; values it cannot compute
(data, runtime scalars) are unknown, and a loop with an unknown bound is entered with the
named value. The walk over-approximates what runs, so "no path" is a fact about every run.
A counterexample whose counters no single loop nest of the kernel binds together, or
whose walk runs past its budget, is reported as the pass found it.

A counterexample that does not replay becomes a `verify.replay` warning (the verdict is
then "unverified") that names the check, the point and why it is unreachable. What is
replayed is the *point*, not the data of the violated condition (the tags of the
elements); docs/design/verifier.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from argus.interp.cluster import cluster_index, cluster_of
from argus.interp.exprs import eval_extent
from argus.ir.nodes import Block, Kernel, Op, Value
from argus.ir.ops.arith import SEMANTICS
from argus.ir.schedule import block_tiles
from argus.verify import replay_race
from argus.verify.finding import Finding

# Checks whose counterexample names a point that runs (the op of the finding's line, or the
# other writer or reader it meets there): their loop counters are replayed. Every other
# check (coverage: "k = 64 is never accumulated, the loop skips j = 1") may name exactly
# the iteration that does not run, so only its sizes and block are replayed.
POINT_CHECKS = ("tag.stage", "tag.wgmma-", "tag.store-coordinate", "tag.descriptor",
                "tag.assert", "tag.store-race", "tag.smem-race", "tag.smem-view",
                "protocol.stage", "protocol.parity")
# counterexample keys that are not the kernel's values even when a variable has the name
NOT_VALUES = frozenset({"step", "instruction", "kk", "parity", "expected_parity"})
MAX_BLOCKS = 4096          # blocks tried when the counterexample names none
MAX_TRIPS = 512            # iterations of an unnamed loop walked before giving up
MAX_STEPS = 200_000        # ops visited for one finding before giving up
UNKNOWN = object()


class _Budget(Exception):
    """The walk ran past its budget: the replay is inconclusive."""


@dataclass
class _State:
    kernel: Kernel
    grid: tuple[int, ...]
    block: int
    want: dict[str, int]                  # the named counters this walk must bind
    env: dict = field(default_factory=dict)
    bound: list = field(default_factory=list)    # names bound on the current path
    steps: int = 0
    reached: bool = False
    truncated: bool = False


def confirm(kernel: Kernel, findings: list[Finding]) -> list[Finding]:
    """The findings, each error whose counterexample does not replay replaced by a
    `verify.replay` warning."""
    out = []
    for f in findings:
        if f.severity != "error" or f.counterexample is None:
            out.append(f)
            continue
        why = unreachable(kernel, f)
        out.append(f if why is None else defect(f, why))
    return out


def defect(f: Finding, why: str) -> Finding:
    return Finding(
        "verify.replay", "warning",
        f"the verifier's counterexample for {f.check} here does not replay: {why}. This is "
        f"a defect of the verifier, not a bug shown in the kernel; the check is not "
        f"verified (it reported: {f.message})", f.loc, f.op,
        "report this verifier bug with the kernel; the kernel is unverified, not failed",
        f.counterexample)


def unreachable(kernel: Kernel, f: Finding) -> Optional[str]:
    """Why the counterexample's point is never reached, or None when it is reached or the
    replay cannot settle it."""
    cex = f.counterexample
    names = [s.name for s in kernel.symbols]
    if not cex.sizes or any(n not in cex.sizes for n in names):
        return None                              # sizes not all named: nothing to replay
    symbols = {n: int(cex.sizes[n]) for n in names}
    shown = ", ".join(f"{k}={v}" for k, v in symbols.items())
    try:
        grid = tuple(int(eval_extent(g, symbols, kernel.constants))
                     for g in kernel.launch.grid)
    except Exception:  # noqa: BLE001 - a grid this walk cannot evaluate: not settled
        return None
    total = 1
    for g in grid:
        total *= g
    if cex.block is not None:
        linear = _linear(cex.block, grid)
        if linear is None:
            return f"block {','.join(map(str, cex.block))} is outside the grid {grid} at {shown}"
        blocks = [linear]
    elif total > MAX_BLOCKS:
        return None
    else:
        blocks = list(range(total))
    points = [(blocks, dict(cex.iteration), cex.block)]
    if f.check.startswith(POINT_CHECKS):
        points += _other_points(cex, grid)
    for point_blocks, iteration, named_block in points:
        why = _point(kernel, f, symbols, grid, point_blocks, iteration, named_block, shown)
        if why is not None:
            return why
    if f.check.startswith("tag.store-race"):
        return _race_element(kernel, cex, symbols, grid, shown)
    return None


def _race_element(kernel, cex, symbols, grid, shown) -> Optional[str]:
    """Why one of the race's writers never writes the element it names (replay_race.py),
    or None when both may."""
    named = replay_race.writers(cex)
    if named is None:
        return None
    first, second, tensor, element = named
    for which, writer in (("first", first), ("second", second)):
        if replay_race.writes(kernel, symbols, grid, writer, tensor, element) is False:
            where = [f"block {','.join(map(str, writer.block))}"] if writer.block else []
            if writer.warpgroup is not None:
                where.append(f"warpgroup {writer.warpgroup}")
            where += [f"{k}={v}" for k, v in writer.counters.items()]
            return (f"its {which} writer ({', '.join(where) or 'any block'}) writes no "
                    f"{tensor}[{', '.join(map(str, element))}] at {shown}")
    return None


def _other_points(cex, grid) -> list:
    """The other writer a race names (`second writer` in an element's actual tag):
    (blocks, iteration, block) like the counterexample's own point."""
    out = []
    for e in cex.elements:
        for value in e.actual.values():
            if not isinstance(value, dict) or not any(k.startswith("block") for k in value):
                continue
            block = tuple(int(value.get(f"block_{a}", 0)) for a in "xyz"[:len(grid)])
            if "block" in value and isinstance(value["block"], int):
                block = (int(value["block"]),) + (0,) * (len(grid) - 1)
            linear = _linear(block, grid)
            iteration = {k: int(v) for k, v in value.items()
                         if isinstance(v, int) and not k.startswith("block")}
            out.append(([linear] if linear is not None else [], iteration, block))
    return out


def _point(kernel, f, symbols, grid, blocks, iteration, named_block, shown) -> Optional[str]:
    if named_block is not None and not blocks:
        return f"block {','.join(map(str, named_block))} is outside the grid {grid} at {shown}"
    names = _names(kernel.body) if f.check.startswith(POINT_CHECKS) else (set(), set())
    counters, values = names
    want = {k: int(v) for k, v in iteration.items()
            if (k in counters or k in values) and k not in NOT_VALUES}
    if want and not _one_nest_binds(kernel.body, set(want), []):
        want = {}                                # names of several ops: only the sizes
    steps = 0
    for b in blocks:
        s = _State(kernel, grid, b, want, env={v: symbols[v.name] for v in kernel.symbols})
        s.steps = steps
        try:
            _walk_region(kernel.body, s)
        except _Budget:
            return None
        except _Dead as dead:                    # an assume the sizes break
            return f"the sizes {shown} break the assumption at line {dead.line}"
        steps = s.steps
        if s.reached or s.truncated or not want:
            return None                          # not want: the sizes hold, that is all
    where = [f"sizes {shown}"]
    if named_block is not None:
        where.append(f"block {','.join(map(str, named_block))}")
    where.append(", ".join(f"{k}={v}" for k, v in want.items()))
    return f"no run gives these values together ({'; '.join(where)})"


class _Dead(Exception):
    def __init__(self, line: int):
        self.line = line


def _names(block: Block, out=None) -> tuple[set[str], set[str]]:
    """(source names of the loop counters and tile coordinates, source names of the
    scalars this walk computes: arith results, block ids, cluster ranks)."""
    counters, values = out if out is not None else (set(), set())
    for op in block.ops:
        if op.opcode.startswith("arith.") or op.opcode in ("block_id", "cluster_rank"):
            values |= {r.source_name for r in op.results}
        for region in op.regions:
            if op.opcode in ("for", "schedule"):
                counters |= {a.source_name for a in region.args}
            _names(region, (counters, values))
    return counters, values


def _one_nest_binds(block: Block, names: set[str], bound: list) -> bool:
    """Whether one path of nested regions binds every name in `names` (as a loop counter
    or a result defined on the way)."""
    here = list(bound)
    for op in block.ops:
        here += [r.source_name for r in op.results]
        if names <= set(here):
            return True
        for region in op.regions:
            inner = here + ([a.source_name for a in region.args]
                            if op.opcode in ("for", "schedule") else [])
            if names <= set(inner) or _one_nest_binds(region, names, inner):
                return True
    return False


def _linear(block, grid) -> Optional[int]:
    block = tuple(block) + (0,) * (len(grid) - len(block))
    linear, scale = 0, 1
    for b, g in zip(block, grid):
        if not 0 <= b < g:
            return None
        linear += b * scale
        scale *= g
    return linear


def _value(s: _State, operand):
    if isinstance(operand, Value):
        return s.env.get(operand, UNKNOWN)
    if isinstance(operand, (bool, int)):
        return operand
    return UNKNOWN


class _Mismatch(Exception):
    """A value computed on this path differs from the one the counterexample names: the
    rest of the region is not on a path to the point."""


def _walk(block: Block, s: _State) -> None:
    for op in block.ops:
        if s.reached or s.truncated:
            return
        _op(op, s)


def _walk_region(block: Block, s: _State) -> None:
    """Walk a region; a mismatch ends the region, the names matched in it are unbound."""
    depth = len(s.bound)
    try:
        _walk(block, s)
    except _Mismatch:
        pass
    finally:
        del s.bound[depth:]


def _define(s: _State, result: Value, value) -> None:
    """Bind an SSA result; check it against the value the counterexample names."""
    s.env[result] = value
    want = s.want.get(result.source_name)
    if want is None or value is UNKNOWN:
        return
    if value != want:
        raise _Mismatch()
    s.bound.append(result.source_name)
    if set(s.want) <= set(s.bound):
        s.reached = True


def _op(op: Op, s: _State) -> None:
    s.steps += 1
    if s.steps > MAX_STEPS:
        raise _Budget()
    code = op.opcode
    if code.startswith("arith."):
        args = [_value(s, o) for o in op.operands]
        if op.results:
            fn = SEMANTICS.get(code.split(".", 1)[1])
            try:
                value = UNKNOWN if fn is None or any(
                    a is UNKNOWN or isinstance(a, float) for a in args) else fn(*args)
            except (ArithmeticError, TypeError, ValueError):
                value = UNKNOWN
            _define(s, op.results[0], value)
        return
    handler = _HANDLERS.get(code)
    if handler is not None:
        handler(op, s)
        return
    for r in op.results:
        s.env[r] = UNKNOWN
    for region in op.regions:            # roles, elect_one, if: every branch, every role
        for a in region.args:
            s.env[a] = UNKNOWN
        _walk_region(region, s)
        if s.reached:
            return


def _named(s: _State, value: Value) -> Optional[int]:
    return s.want.get(value.source_name)


def _enter(body: Block, s: _State, values) -> None:
    """Walk `body` with its region args bound to `values`; reached when every named
    counter is bound on this path."""
    depth = len(s.bound)
    for a, v in zip(body.args, values):
        s.env[a] = v
    s.bound += [a.source_name for a in body.args]
    try:
        if set(s.want) <= set(s.bound):
            s.reached = True
            return
        _walk(body, s)
    except _Mismatch:
        pass
    finally:
        del s.bound[depth:]


def _for(op: Op, s: _State) -> None:
    start, stop, step = (_value(s, op.arg(n)) for n in ("start", "stop", "step"))
    body = op.regions[0]
    counter = body.args[0] if body.args else None
    want = _named(s, counter) if counter is not None else None
    if UNKNOWN in (start, stop, step):
        _enter(body, s, [want if want is not None else UNKNOWN])
        return
    trips = range(start, stop, step)
    if want is not None:
        if want in trips:
            _enter(body, s, [want])
        return
    for n, i in enumerate(trips):
        if n >= MAX_TRIPS:
            s.truncated = True
            return
        _enter(body, s, [i])
        if s.reached:
            return


def _schedule(op: Op, s: _State) -> None:
    extents = [_value(s, e) for e in op.args("extents")]
    body = op.regions[0]
    wants = [_named(s, a) for a in body.args]
    if any(e is UNKNOWN for e in extents):
        _enter(body, s, [w if w is not None else UNKNOWN for w in wants])
        return
    walker, walkers = s.block, 1
    for g in s.grid:
        walkers *= g
    if op.attrs.get("by") == "cluster":
        walker, walkers = cluster_index(walker, s.grid, s.kernel.launch.cluster)
    for n, tile in enumerate(block_tiles(op.attrs["order"], op.attrs.get("group", 1),
                                         tuple(int(e) for e in extents), walker, walkers)):
        if n >= MAX_TRIPS:
            s.truncated = True
            return
        if all(w is None or w == t for w, t in zip(wants, tile)):
            _enter(body, s, tile)
            if s.reached:
                return


def _assume(op: Op, s: _State) -> None:
    """A precondition of the launch: sizes that break one at the kernel's top level are no
    launch at all (one inside a branch this walk takes regardless proves nothing)."""
    cond = _value(s, op.arg("cond"))
    if cond is not UNKNOWN and not cond and any(o is op for o in s.kernel.body.ops):
        raise _Dead(op.loc.line)


def _block_id(op: Op, s: _State) -> None:
    rest = s.block
    out = 0
    for name, extent in zip("xyz", s.grid):
        if name == op.attrs["axis"]:
            out = rest % extent
            break
        rest //= extent
    _define(s, op.results[0], out)


def _cluster_rank(op: Op, s: _State) -> None:
    _define(s, op.results[0], cluster_of(s.block, s.grid, s.kernel.launch.cluster)[1])


_HANDLERS = {"for": _for, "schedule": _schedule, "assume": _assume, "block_id": _block_id,
             "cluster_rank": _cluster_rank}
