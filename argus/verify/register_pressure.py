"""Registers per thread that a kernel's live fragments hold, per role.

A fragment holds `values` elements per thread (its thread-value layout,
argus.layout.fragments); 32-bit registers hold one fp32/int32 element, two 16-bit ones
(bf16, fp16 pairs are packed), four 8-bit ones.

Liveness is the compiler's: backward over the structured IR, a fragment is live from its
definition to its last read on some path; an op that writes a fragment without reading
it (`assign(acc, 0.0)`) ends the old contents' range, so an accumulator zeroed at the top
of each tile is dead between the tile's last read and the next zeroing; a loop carries
what its next iteration reads. At each op the count is the fragments live after it plus
the ones it defines: the operands it reads for the last time are not counted (an
elementwise chain `exp2(x * s)` holds one temporary at a time, as the compiled code
does, element by element). Only fragments live at the same point add up.

What the count leaves out (scalars, addresses, loop counters, descriptors, the compiler's
temporaries) is the resource pass's stated overhead (argus.verify.resources).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import prod
from typing import Optional

from argus.ir.nodes import Block, Kernel, Op, Value
from argus.ir.ops import OPS
from argus.ir.types import FragmentType
from argus.layout.fragments import WARPGROUP, layout_of

LOOPS = ("for", "schedule")
REGISTER_BITS = 32


def fragment_registers(t: FragmentType) -> int:
    """32-bit registers one thread holds for a fragment of type t."""
    try:
        values = layout_of(t).values
    except ValueError:               # a layout without a table: elements dealt evenly
        values = -(-prod(int(d) for d in t.shape) // WARPGROUP)
    return -(-values * t.dtype.bits // REGISTER_BITS)


@dataclass(frozen=True)
class Point:
    """One op and the fragments held there (live after it, or defined by it)."""
    op: Op
    position: int                     # program order
    role: Optional[Op]                # the innermost role around it (None: outside roles)
    held: tuple[Value, ...]
    regs: int


@dataclass
class Pressure:
    points: list[Point]
    defined_at: dict[Value, tuple[int, Op]] = field(default_factory=dict)

    def scopes(self) -> list[Optional[Op]]:
        seen: list[Optional[Op]] = []
        for p in self.points:
            if p.role not in seen:
                seen.append(p.role)
        return seen

    def peak(self, role: Optional[Op]) -> Optional[Point]:
        here = [p for p in self.points if p.role is role]
        return max(here, key=lambda p: p.regs) if here else None

    def first_over(self, role: Optional[Op], limit: int) -> Optional[Point]:
        """The first op of the scope, in program order, where the fragments need more
        than `limit` registers per thread."""
        for p in sorted(self.points, key=lambda p: p.position):
            if p.role is role and p.held and p.regs > limit:
                return p
        return None

    def newest(self, point: Point) -> tuple[Value, Op]:
        """The fragment held at `point` allocated last (the one that tips it over)."""
        v = max(point.held, key=lambda v: self.defined_at[v][0])
        return v, self.defined_at[v][1]


def pressure(kernel: Kernel) -> Pressure:
    a = _Analysis(kernel)
    a.block(kernel.body, frozenset(), None)
    points = [Point(op, a.position[id(op)], role, held, regs)
              for op, role, held, regs in a.points.values()]
    return Pressure(sorted(points, key=lambda p: p.position), a.defined)


class _Analysis:
    def __init__(self, kernel: Kernel):
        self.position: dict[int, int] = {id(op): i for i, op in enumerate(kernel.walk())}
        self.defined: dict[Value, tuple[int, Op]] = {}
        for op in kernel.walk():
            for r in op.results:
                if isinstance(r.type, FragmentType):
                    self.defined[r] = (self.position[id(op)], op)
        self.points: dict[int, tuple] = {}

    def regs(self, values) -> int:
        return sum(fragment_registers(v.type) for v in values)

    def block(self, block: Block, live_out: frozenset, role) -> frozenset:
        live = live_out
        for op in reversed(block.ops):
            live = self.op(op, live, role)
        return live - frozenset(a for a in block.args)

    def op(self, op: Op, after: frozenset, role) -> frozenset:
        inner = op if op.opcode == "role" else role
        defs = frozenset(r for r in op.results if r in self.defined)
        self._record(op, role, after | defs)
        reads, kills = self._effects(op)
        before = (after - defs - kills) | reads
        if not op.regions:
            return before
        if op.opcode in LOOPS:
            body, carried = op.regions[0], frozenset()
            for _ in range(len(self.defined) + 2):      # to a fixpoint (sets only grow)
                entry = self.block(body, after | carried, inner)
                if entry <= carried:
                    break
                carried |= entry
            return before | carried
        entries = [self.block(r, after, inner) for r in op.regions]
        if op.opcode == "if" and len(op.regions) == 2:
            return before | entries[0] | entries[1]
        return before | frozenset().union(*entries)      # a region that may not run

    def _effects(self, op: Op):
        """Fragments the op reads, and those it overwrites without reading (their old
        contents die here)."""
        spec = OPS.get(op.opcode)
        names = [o.name for o in spec.operands] if spec else []
        reads, kills = set(), set()
        for i, v in enumerate(op.operands):
            if not (isinstance(v, Value) and v in self.defined):
                continue
            name = names[min(i, len(names) - 1)] if names else ""
            if spec is not None and name in spec.writes and name not in spec.reads:
                kills.add(v)
            else:
                reads.add(v)
        return frozenset(reads), frozenset(kills)

    def _record(self, op: Op, role, held: frozenset) -> None:
        regs = self.regs(held)
        old = self.points.get(id(op))
        if old is None or regs > old[3]:
            order = sorted(held, key=lambda v: self.defined[v][0])
            self.points[id(op)] = (op, role, tuple(order), regs)
